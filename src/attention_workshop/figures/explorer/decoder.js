// decoder.js: Module 4, a language model that writes (SmolLM2, the Python run's own numbers,
// embedded in thousandths). Its continuation stepped through token by token with one head's look
// back, the heads found by pattern as layer x head grids, and the KV cache's size worked out here
// from the model's sizes. A page without Module 4's data has no such panel.
AW.panel("decoder.js", ({h, panel, MatrixView, scrollBox, cellReadout, readout, text, fixed,
                         largest}) => ctx => {
  const m4 = ctx.data.decoder;
  if (!m4) return {section: document.createDocumentFragment(), update() {}};  // no panel, no link
  const {section, body} = panel("module4", "Module 4: a language model that writes",
    "A decoder writes one token at a time: the newest token looks back at every token before " +
    "it (never ahead), and the model's answer to that look is the next token.");
  const thousandths = rows => rows.map(row => row.map(v => v / 1000));
  const group = n => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");  // 46080 -> "46,080"
  const P = m4.tokens.length - m4.steps.length;  // prompt tokens
  const label = j => `${j}: ${m4.tokens[j]}`;
  body.append(h("p", {class: "hint", id: "m4-model"}, `${m4.model}: ${m4.layers} layers \u00d7 ` +
    `${m4.heads} query heads over ${m4.kv_heads} key/value heads, d_k = ${m4.d_head}; computed ` +
    "in float64 by the workshop's own NumPy code, as Module 4 of run (3 decimals here). Layers " +
    "and heads count from 0, as in results.log; tokens are spelled as the tokenizer and " +
    "results.log spell them: \u0120 marks a space, \u010a a line break."));

  // --- It writes: the continuation, one step at a time ---
  const range = h("input", {type: "range", id: "m4-step", min: "0", max: String(m4.steps.length - 1),
                            step: "1", value: "0"});
  const back = h("button", {type: "button", id: "m4-back"}, "\u25c0 previous");
  const next = h("button", {type: "button", id: "m4-next"}, "next \u25b6");
  const stepNo = h("output", {for: "m4-step", id: "m4-step-value"});
  const layer = h("select", {id: "m4-layer"}), head = h("select", {id: "m4-head"});
  for (let l = 0; l < m4.layers; l++) layer.append(h("option", {value: String(l)}, String(l)));
  for (let hd = 0; hd < m4.heads; hd++) head.append(h("option", {value: String(hd)}, String(hd)));
  const written = h("div", {class: "words", id: "m4-written"});
  const nextCopy = h("button", {type: "button", id: "m4-next-copy"},
    "next step with a token seen before \u25b6");
  const notice = h("p", {class: "hint", id: "m4-notice", "aria-live": "polite"});
  const now = readout();
  now.id = "m4-now";
  const say = cellReadout("Point at or focus the table (arrow keys) to read one weight.");
  const view = new MatrixView("", [], ["weight"], {heat: true,
    onCell: say.cell(i => {
      const {l, hd, k} = pick(), w = m4.steps[k][l][hd][i] / 1000;
      return `layer ${l}, head ${hd}, new token ${k + 1}: ${label(P + k - 1)} \u2192 ${label(i)} = ` +
        fixed(w);
    })});
  view.table.id = "m4-look";
  say.element.id = "m4-look-say";
  body.append(h("h3", {}, `It writes: "${m4.prompt}" and ${m4.steps.length} tokens more (greedy)`),
    written,
    h("div", {class: "row"}, back, next, stepNo),
    h("div", {class: "row"}, h("label", {for: "m4-step"}, "New token "), range),
    h("div", {class: "row"}, h("label", {for: "m4-layer"}, "Layer "), layer,
      h("label", {for: "m4-head"}, " Head "), head),
    h("div", {class: "row"}, nextCopy), notice,
    now, scrollBox(view.table), say.element);
  const pick = () => ({k: Number(range.value), l: Number(layer.value), hd: Number(head.value)});
  // The written text: the prompt, then each new token as a button that jumps to its step.
  const chips = m4.steps.map((_, k) => h("button", {type: "button", class: "word",
    "aria-pressed": "false", onclick: () => go(k)}, m4.tokens[P + k]));
  written.append(h("span", {}, `${m4.tokens.slice(0, P).join(" ")} \u2192`), ...chips);

  function draw() {
    const {k, l, hd} = pick(), S = P + k, row = m4.steps[k][l][hd].map(v => v / 1000);
    text(stepNo, `new token ${k + 1} of ${m4.steps.length}`);
    chips.forEach((c, j) => c.setAttribute("aria-pressed", String(j === k)));
    back.disabled = k === 0; next.disabled = k === m4.steps.length - 1;
    text(notice, noticeFor(k));
    view.relabel(m4.tokens.slice(0, S).map((_, j) => label(j)), ["weight"]);
    view.table.querySelector("caption").textContent = `layer ${l}, head ${hd}: where ` +
      `${label(S - 1)} looked as it wrote ${m4.tokens[S]}`;
    view.set(row.map(v => [v]), {top: Math.max(...row)});
    const at = m4.tokens.slice(0, S).map((t, j) => `${t} (position ${j})`);
    text(now, `New token ${k + 1} of ${m4.steps.length}: ${m4.tokens[S]} (id ${m4.ids[k]}), ` +
      `written at ${at[S - 1]}; in layer ${l}, head ${hd} it looked most at ` +
      `${largest(row, at)}. The KV cache holds ${S} tokens now: ${S} \u00d7 ` +
      `${group(perToken)} = ${group(S * perToken)} bytes.`);
    say.refresh();
  }
  const go = k => { range.value = String(Math.max(0, Math.min(m4.steps.length - 1, k))); draw(); };
  // The steps where the strongest induction head has something to copy: the looking token
  // came before, and the head can look at what followed it (data.py's copy_steps).
  const copies = m4.copies || [], start = m4.start || {step: 0, layer: 0, head: 0};
  const induction = `layer ${start.layer}, head ${start.head}`;
  function noticeFor(k) {
    const c = copies.find(x => x[0] === k);
    const bare = t => t.replace(/^\u0120/, ""), p = P + k - 1;
    const alike = m4.tokens.slice(0, p).findIndex(t => bare(t) === bare(m4.tokens[p]));
    if (!c) return `At this step the token that looks (${label(p)}) has not come ` +
      "before" + (alike >= 0 ? ` (${label(alike)} is another token: the space is part of ` +
      "a token)" : "") + `: ${induction}, the strongest induction head, has nothing to copy. ` +
      (copies.length ? "\u201cNext step with a token seen before\u201d goes to one that has." : "");
    const [, earlier, target, w] = c;
    return `What to notice: ${label(P + k - 1)} came before, at position ${earlier}, and ` +
      `${label(target)} followed it. In ${induction}, the strongest induction head (results.log ` +
      `[S14]), it puts ${fixed(w)} on ${label(target)}: it looks up what came next last time, ` +
      `the token it would copy. The model writes ${m4.tokens[P + k]}: one head's look is a ` +
      "vote, not the choice.";
  }
  nextCopy.disabled = !copies.length;
  nextCopy.onclick = () => {
    const k = Number(range.value), c = copies.find(x => x[0] > k) || copies[0];
    layer.value = String(start.layer); head.value = String(start.head);
    go(c[0]);
  };
  range.oninput = draw;
  back.onclick = () => go(Number(range.value) - 1);
  next.onclick = () => go(Number(range.value) + 1);
  layer.onchange = head.onchange = draw;

  // --- Heads found by pattern ---
  const names = {induction: "induction", previous: "previous-token", sink: "sink"};
  const about = {induction: "An induction head looks at the token after the last time its own " +
                   "token came (and so copies what came next).",
                 previous: "A previous-token head looks at the token just before.",
                 sink: "A sink head looks at the first token (where a head rests)."};
  const kind = h("select", {id: "m4-kind"},
    ...Object.keys(m4.patterns).map(k => h("option", {value: k}, names[k] || k)));
  const what = h("p", {class: "hint", id: "m4-kind-about"});
  const top = h("div", {class: "row heads", id: "m4-top"}), loss = h("p", {class: "hint", id: "m4-loss"});
  const gridSay = cellReadout("Point at or focus the grid (arrow keys) to read one head's score.");
  const layers = Array.from({length: m4.layers}, (_, l) => `L${l}`);
  const headNames = Array.from({length: m4.heads}, (_, hd) => `H${hd}`);
  // On a phone the whole 30 x 9 grid fits the width: narrow columns, each score to three
  // decimals without its leading 0 (".935"; rounding the embedded thousandths again to two
  // would misprint 0.93497 as 0.94).
  const narrow = window.matchMedia("(max-width: 600px)");
  const short = v => fixed(v).replace(/^0\./, ".");
  const compact = () => narrow.matches ? {number: 5, pad: 1, format: short} : {format: null};
  const grid = new MatrixView("", layers, headNames,
    {heat: true, ...compact(), onCell: gridSay.cell((l, hd) => `${names[kind.value] || kind.value}: layer ${l}, ` +
      `head ${hd} = ${fixed(m4.patterns[kind.value].scores[l][hd] / 1000)}`)});
  grid.table.id = "m4-grid";
  grid.table.classList.toggle("compact", narrow.matches);
  narrow.addEventListener("change", () => {
    Object.assign(grid.options, {number: undefined, pad: undefined, format: null}, compact());
    grid.table.classList.toggle("compact", narrow.matches);
    grid.relabel(layers, headNames); drawGrid();
  });
  gridSay.element.id = "m4-grid-say";
  body.append(h("h3", {}, "Heads found by pattern, on 50 random tokens repeated once"),
    h("div", {class: "row"}, h("label", {for: "m4-kind"}, "Pattern "), kind), what,
    h("p", {class: "hint"}, "The strongest heads (click one to watch it write, above):"), top,
    scrollBox(grid.table), gridSay.element, loss);
  function drawGrid() {
    const p = m4.patterns[kind.value], scores = thousandths(p.scores);
    text(what, about[kind.value] || "");
    grid.table.querySelector("caption").textContent = `${names[kind.value] || kind.value}: ` +
      `each head's score (layers L0\u2011L${m4.layers - 1} down, heads H0\u2011H${m4.heads - 1} ` +
      `across${narrow.matches ? "; .935 is 0.935" : ""})`;
    grid.set(scores, {top: 1});
    top.replaceChildren(...p.top.map(([l, hd, s]) => h("button", {type: "button", class: "head",
      onclick: () => { layer.value = String(l); head.value = String(hd); draw(); }},
      `layer ${l}, head ${hd}: ${fixed(s)}`)));
    text(loss, p.loss ? `The repeat is predicted: next-token loss ${fixed(p.loss[0], 2)} nats on ` +
      `the first half, ${fixed(p.loss[1], 2)} on the repeat (the induction heads copy).` : "");
    gridSay.refresh();
  }
  kind.onchange = drawGrid;

  // --- The KV cache, worked out from the sizes ---
  const perToken = 2 * m4.layers * m4.kv_heads * m4.d_head * m4.bytes;
  // the cache's own length: the keys the last step read (the last token written never runs)
  const full = 2 * m4.layers * m4.heads * m4.d_head * m4.bytes;
  const total = m4.steps[m4.steps.length - 1][0][0].length;
  const sum = kv => `2 \u00d7 ${m4.layers} \u00d7 ${kv} \u00d7 ${m4.d_head} \u00d7 ${m4.bytes}`;
  body.append(h("h3", {}, "The KV cache: what the model keeps so that each step runs one token"),
    h("p", {class: "hint"}, `keys and values \u00d7 layers \u00d7 KV heads \u00d7 d_k \u00d7 ` +
      `bytes per number (${m4.bytes}: float32, the numbers the workshop's code computes in; ` +
      "the weights file itself stores most weights in 4-bit blocks, Q4_1)"),
    h("ul", {class: "looks", id: "m4-cache"},
      h("li", {}, `a token, ${m4.kv_heads} KV heads: ${sum(m4.kv_heads)} = ${group(perToken)} bytes`),
      h("li", {}, `a token, a KV head per query head (${m4.heads}): ${sum(m4.heads)} = ` +
        `${group(full)} bytes (${full / perToken} \u00d7 as much)`),
      h("li", {}, `this continuation, ${P} + ${m4.steps.length} \u2212 1 = ${total} tokens (the ` +
        `last token written is never run): ${total} ` +
        `\u00d7 ${group(perToken)} = ${group(total * perToken)} bytes (with ${m4.heads} KV heads: ` +
        `${group(total * full)})`)));

  // Opens where the lesson is: the strongest induction head at the step where it looks hardest
  // at the token it would copy (data.py's start), and says so.
  layer.value = String(start.layer); head.value = String(start.head); range.value = String(start.step);
  written.before(h("p", {class: "hint", id: "m4-start"}, copies.length ?
    `It opens on new token ${start.step + 1}, in ${induction}: the strongest induction head ` +
    "(heads found by pattern, below) at the step where it looks hardest at a token to copy." :
    `It opens on ${induction}, the strongest induction head (heads found by pattern, below).`));
  draw(); drawGrid();
  return {section, update() {}};  // the run's numbers: no control outside the panel moves them
});
