// head_view.js: the head view's drawing and its controls (figures/head_view.py writes the page;
// registry.js, format.js, dom.js and save.js run before it). Exports nothing: it starts the page.
// The lines are redrawn on every change; the tokens are made once, so the element under the
// pointer is never replaced and leaving it always lets it go. Pointer: hover shows a token's
// lines; a tap or click chooses it, a tap again or anywhere else lets it go. Keyboard: Tab to
// the tokens, arrow keys between them (one token in the tab order), Escape lets go; the chosen
// token stays chosen while the learner uses the controls.
AW.define("head_view.js", ({s, fixed, saveButtons}) => {
  const data = JSON.parse(document.getElementById("data").textContent);
  const colors = data.colors;
  const T = data.tokens.length, rowH = 28;
  const chars = Math.min(24, Math.max(1, ...data.tokens.map(t => t.length)));
  const leftX = 12 + chars * 8.5, rightX = leftX + 170, numberX = rightX + chars * 8.5 + 10;
  const width = numberX + 52, height = T * rowH + 20, y = i => 20 + i * rowH;
  const svg = document.getElementById("view"), say = document.getElementById("readout");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", width); svg.setAttribute("height", height);
  const layerSel = document.getElementById("layer"), headBox = document.getElementById("heads");
  let shown = new Set([data.start_head]), hover = null, pinned = null;
  for (let l = 0; l < data.layers; l++) layerSel.add(new Option(String(l), String(l)));
  layerSel.value = String(data.start_layer);
  const boxes = [];
  for (let h = 0; h < data.heads; h++) {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox"; box.checked = shown.has(h); box.dataset.head = h;
    box.onchange = () => { box.checked ? shown.add(h) : shown.delete(h); draw(); };
    const swatch = document.createElement("span");
    swatch.className = "swatch"; swatch.style.background = colors[h % colors.length];
    label.append(box, swatch, " head " + h); headBox.append(label); boxes.push(box);
  }
  function setShown(heads) {
    shown = new Set(heads); boxes.forEach((b, h) => { b.checked = shown.has(h); }); draw();
  }
  document.getElementById("all").onclick = () => setShown([...Array(data.heads).keys()]);
  document.getElementById("none").onclick = () => setShown([]);
  document.getElementById("one").onclick = () => setShown([data.start_head]);
  layerSel.onchange = draw;
  document.getElementById("save").append(saveButtons(() => svg, "head_view", "this view"));
  // The picture: lines (redrawn), then the tokens (made once: the element under the pointer is
  // never replaced, so leaving it always fires), then the chosen token's weights as numbers.
  const lines = s("g", {class: "lines"}), numbers = s("g", {class: "numbers"});
  const left = data.tokens.map((t, i) => s("text", {x: leftX, y: y(i), "text-anchor": "end",
    class: "token left", tabindex: i ? "-1" : "0", role: "button", "aria-pressed": "false",
    "data-token": String(i)}, t));
  const right = data.tokens.map((t, i) => s("text", {x: rightX, y: y(i), class: "token right"}, t));
  svg.append(lines, ...left, ...right, numbers);
  let pointing = false;  // a pointer press is under way: its focus is not a keyboard's
  left.forEach((token, i) => {
    const mouse = (e, at) => { if (e.pointerType === "mouse") { hover = at; draw(); } };
    token.addEventListener("pointerenter", e => mouse(e, i));
    token.addEventListener("pointerleave", e => mouse(e, null));
    token.addEventListener("pointerdown", () => { pointing = true; });
    token.addEventListener("click", e => {  // a tap or a click: choose it, or let it go
      e.stopPropagation(); pointing = false;
      pinned = pinned === i ? null : i; roving(i); draw();
    });
    token.addEventListener("focus", () => { roving(i); if (!pointing) { pinned = i; draw(); } });
    token.addEventListener("keydown", e => {
      const to = {ArrowDown: i + 1, ArrowUp: i - 1, ArrowRight: i + 1, ArrowLeft: i - 1,
                  Home: 0, End: T - 1}[e.key];
      if (to !== undefined) { e.preventDefault(); left[Math.max(0, Math.min(T - 1, to))].focus(); }
      if (e.key === "Escape") { pinned = null; draw(); }
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault(); pinned = pinned === i ? null : i; draw();
      }
    });
  });
  // A tap or click anywhere but a token or a control lets the token go (a control keeps it:
  // another head, another layer, "save" show or keep the chosen token's view).
  document.addEventListener("click", e => {
    if (pinned !== null && !e.target.closest("button, select, input, label")) {
      pinned = null; draw();
    }
  });
  function roving(i) { left.forEach((t, k) => t.setAttribute("tabindex", k === i ? "0" : "-1")); }
  function draw() {
    const layer = data.attentions[Number(layerSel.value)], focus = pinned ?? hover;
    const heads = [...shown].sort((a, b) => a - b);
    lines.replaceChildren(); numbers.replaceChildren();
    for (const h of heads) for (let i = 0; i < T; i++) {
      if (focus !== null && focus !== i) continue;
      for (let j = 0; j < T; j++) {
        const w = layer[h][i][j]; if (w < 0.01) continue;
        lines.append(s("line", {x1: leftX + 8, y1: y(i) - 5, x2: rightX - 8, y2: y(j) - 5,
          stroke: colors[h % colors.length], "stroke-width": 2, "stroke-opacity": w}));
      }
    }
    left.forEach((t, i) => {
      t.classList.toggle("chosen", i === focus);
      t.setAttribute("aria-pressed", String(i === pinned));
      t.setAttribute("aria-label", `${t.textContent || "(empty token)"}: show where it looks`);
    });
    if (focus === null) {
      say.textContent = heads.length ? "Point at, tap or focus a token on the left (Tab, then " +
        "\u2191 \u2193) to read where it looks, as numbers." : "No head is switched on.";
      return;
    }
    if (heads.length === 1) data.tokens.forEach((_, j) => numbers.append(s("text", {
      x: numberX, y: y(j), class: "weight"}, fixed(layer[heads[0]][focus][j]))));
    const top = h => layer[h][focus].map((w, j) => [w, j]).sort((a, b) => b[0] - a[0]).slice(0, 5)
      .map(([w, j]) => `${data.tokens[j]} ${fixed(w)}`).join(", ");
    say.textContent = `${data.tokens[focus]}, layer ${layerSel.value}: ` + (heads.length
      ? heads.map(h => `head ${h} looks at ${top(h)}`).join("; ") + "."
      : "no head is switched on.");
  }
  draw();
  return {};
});
