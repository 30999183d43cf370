// plane.js: Module 1's picture, live. The followed word's lookup row (gray) and its output in
// this sentence (red diamond) on the first two axes (water, money); kept sentences stay as
// hollow diamonds, so "the river bank" and "the money bank" split bank in two, as in bank_split.png.
// Every label is placed inside the frame, clear of the labels placed before it (placeLabels).
AW.define("plane.js", ({h, s, fixed, words, followIndex, simpleAttention, saveButtons}) => {
  const PLANE = {size: 340, pad: 44};
  const LABEL = {height: 13};

  // Boxes {x, y, w, h} (x, y: top left) for labels [{x, y, w}] anchored at points: each goes
  // right of its point, else left, above or below, nudged up and down in steps of one line
  // until it overlaps no label placed before it and no point; always inside the frame.
  // Example: two labels anchored at one point -> the second sits one line below the first.
  function placeLabels(labels, points, frame) {
    const placed = [], overlaps = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w &&
      a.y < b.y + b.h && b.y < a.y + a.h;
    const dots = points.map(([x, y]) => ({x: x - 4, y: y - 4, w: 8, h: 8}));
    const inside = box => ({w: box.w, h: box.h,
      x: Math.max(frame.x + 2, Math.min(frame.x + frame.w - box.w - 2, box.x)),
      y: Math.max(frame.y + 2, Math.min(frame.y + frame.h - box.h - 2, box.y))});
    for (const label of labels) {
      const w = Math.min(label.w, frame.w - 4), hh = LABEL.height, r = label.r || 6;
      const sides = [[label.x + r + 2, label.y - hh / 2], [label.x - r - 2 - w, label.y - hh / 2],
                     [label.x - w / 2, label.y - r - hh - 1], [label.x - w / 2, label.y + r + 1]];
      let best = null;
      for (let step = 0; step <= 24 && !best; step++) {
        const dy = (step % 2 ? 1 : -1) * Math.ceil(step / 2) * (hh + 1);
        for (const [x, y] of sides) {
          const box = inside({x, y: y + dy, w, h: hh});
          if (!placed.some(p => overlaps(p, box)) && !dots.some(d => overlaps(d, box))) {
            best = box; break;
          }
        }
      }
      placed.push(best || inside({x: sides[0][0], y: sides[0][1], w, h: hh}));
    }
    return placed;
  }

  function buildPlane(ctx) {
    const side = PLANE.size + 2 * PLANE.pad;
    const svg = s("svg", {viewBox: `0 0 ${side} ${side}`, class: "plane", role: "img",
                          "aria-labelledby": "plane-title", id: "plane"});
    const title = h("p", {id: "plane-title", class: "readout", role: "status",
                          "aria-live": "polite"});
    const pins = h("div", {class: "pins row", role: "group", "aria-label": "kept diamonds"});
    const keep = h("button", {type: "button", id: "keep", onclick: () => {
      const sentence = ctx.state.tokens.join(" ");
      if (!ctx.state.pins.includes(sentence)) ctx.state.pins = [...ctx.state.pins, sentence].slice(-4);
      update();
    }}, "keep this diamond");
    const element = h("div", {class: "plane-box"}, svg, title, h("div", {class: "row"}, keep, pins),
                      h("div", {class: "row"}, saveButtons(() => svg, "plane", "the plane")));

    function output(tokens, word) {  // the word's simple-attention output in another sentence
      const X = tokens.map(t => ctx.table.get(t));
      return simpleAttention(X).outputs[followIndex(tokens, word)];
    }

    function update() {
      const {tokens, X} = ctx.current, f = ctx.state.follow, word = tokens[f];
      keep.disabled = !tokens.length;
      if (!tokens.length) {
        svg.replaceChildren();
        title.textContent = "No sentence yet: add words above to see the followed word here.";
        return;
      }
      const [ax, ay] = ctx.axes, z = ctx.current.raw.outputs[f], look = X[f];
      const kept = ctx.state.pins.map(sentence => [sentence, words(sentence, ctx.table)])
        .filter(([, t]) => t.includes(word) && t.every(w => ctx.table.has(w)))
        .map(([sentence, t]) => [sentence, output(t, word)]);
      const all = [...X, z, ...kept.map(([, p]) => p)];
      const lo = Math.min(0, ...all.map(p => Math.min(p[0], p[1]))) - 0.1;
      const hi = Math.max(1, ...all.map(p => Math.max(p[0], p[1]))) + 0.1;
      const px = v => PLANE.pad + (v - lo) / (hi - lo) * PLANE.size;
      const py = v => PLANE.pad + PLANE.size - (v - lo) / (hi - lo) * PLANE.size;
      svg.replaceChildren(s("rect", {x: PLANE.pad, y: PLANE.pad, width: PLANE.size,
                                     height: PLANE.size, class: "frame"}));
      for (const v of [0, 0.5, 1]) {
        svg.append(s("line", {x1: px(v), x2: px(v), y1: PLANE.pad, y2: PLANE.pad + PLANE.size,
                              class: "grid"}),
                   s("line", {y1: py(v), y2: py(v), x1: PLANE.pad, x2: PLANE.pad + PLANE.size,
                              class: "grid"}),
                   s("text", {x: px(v), y: PLANE.pad + PLANE.size + 16, class: "tick"}, String(v)),
                   s("text", {x: PLANE.pad - 6, y: py(v) + 4, class: "tick end"}, String(v)));
      }
      svg.append(s("text", {x: PLANE.pad + PLANE.size / 2, y: PLANE.pad + PLANE.size + 34,
                            class: "axis"}, ax),
                 s("text", {x: 14, y: PLANE.pad + PLANE.size / 2, class: "axis",
                            transform: `rotate(-90 14 ${PLANE.pad + PLANE.size / 2})`}, ay));
      const spots = new Map();  // words at the same point share one dot and one label
      tokens.forEach((t, i) => {
        if (t === word) return;
        const key = `${X[i][0]},${X[i][1]}`;
        if (!spots.has(key)) spots.set(key, {p: X[i], names: []});
        if (!spots.get(key).names.includes(t)) spots.get(key).names.push(t);
      });
      const at = p => [px(p[0]), py(p[1])];
      const labels = [];  // the most important first: they get the free places
      const here = tokens.join(" ");
      const label = (p, value, cls, r) => labels.push({x: at(p)[0], y: at(p)[1], text: value, cls, r});
      label(z, `"${here.length > 28 ? here.slice(0, 27) + "\u2026" : here}" (${fixed(z[0])}, ` +
            `${fixed(z[1])})`, "now-label", 8);
      label(look, `${word}'s lookup (${fixed(look[0], 2)}, ${fixed(look[1], 2)})`, "lookup-label", 9);
      for (const [sentence, p] of kept) {
        if (sentence !== here) label(p, `"${sentence}"`, "kept-label", 8);
      }
      for (const {p, names} of spots.values()) {
        label(p, `${names.join(", ")} (${fixed(p[0], 2)}, ${fixed(p[1], 2)})`, "", 5);
      }
      const diamond = (p, cls) => {
        const [x, y] = at(p), r = 7;
        return s("polygon", {points: `${x},${y - r} ${x + r},${y} ${x},${y + r} ${x - r},${y}`,
                             class: cls});
      };
      for (const {p} of spots.values()) {
        svg.append(s("circle", {cx: at(p)[0], cy: at(p)[1], r: 4, class: "word-dot"}));
      }
      for (const [sentence, p] of kept) if (sentence !== here) svg.append(diamond(p, "kept"));
      svg.append(s("line", {x1: px(look[0]), y1: py(look[1]), x2: px(z[0]), y2: py(z[1]),
                            class: "pull"}),
                 s("circle", {cx: px(look[0]), cy: py(look[1]), r: 8, class: "lookup"}),
                 diamond(z, "now"));
      const points = [z, look, ...kept.map(([, p]) => p), ...[...spots.values()].map(v => v.p)];
      const frame = {x: PLANE.pad, y: PLANE.pad, w: PLANE.size, h: PLANE.size};
      // Drawn first, then measured (one layout for all), then placed.
      const texts = labels.map(l => s("text", {class: `label ${l.cls}`}, l.text));
      svg.append(...texts);
      texts.forEach((t, k) => { labels[k].w = t.getComputedTextLength(); });
      placeLabels(labels, points.map(at), frame).forEach((box, k) => {
        texts[k].setAttribute("x", box.x);
        texts[k].setAttribute("y", box.y + LABEL.height - 3);
        if (labels[k].w > box.w) texts[k].setAttribute("textLength", box.w);
      });
      title.textContent = `${word}: lookup row ${ax} ${fixed(look[0])}, ${ay} ${fixed(look[1])}` +
        ` \u2192 after simple attention in this sentence ${ax} ${fixed(z[0])}, ${ay} ${fixed(z[1])}.`;
      pins.replaceChildren(ctx.state.pins.length ? h("span", {class: "hint"}, "kept (click to remove):") : "",
                           ...ctx.state.pins.map(sentence => h("button", {type: "button", class: "pin",
        "aria-label": `stop showing "${sentence}"`,
        onclick: () => { ctx.state.pins = ctx.state.pins.filter(p => p !== sentence); update(); }},
        `"${sentence}" \u00d7`)));
    }
    return {element, update};
  }

  return {buildPlane, placeLabels};
});
