// module2.js: queries and keys wired by hand. The learner edits W_Q, W_K (and W_V), switches the
// division by sqrt(d_k) and the causal mask, and every matrix below follows at once; one button
// brings back the page's start (the wiring and both switches).
AW.define("module2.js", () => {
  function copy(M) { return M.map(row => row.slice()); }
  function identity(n) {
    return Array.from({length: n}, (_, i) => Array.from({length: n}, (_, j) => +(i === j)));
  }
  return {copy, identity};
});

AW.panel("module2.js", ({h, panel, MatrixView, cellReadout, scrollBox, bars, text, listItems,
                         fixed, readable, named, largest, topOf, copy, identity,
                         buildWiringEditor, saveButtons, tableSvg, PROMPT, EMPTY}) => ctx => {
  const {section, body} = panel("module2", "Module 2: queries and keys, wired by hand",
    "Each word asks a question (its query, X @ W_Q) and shows an advertisement (its key, " +
    "X @ W_K); a word's score for another is how well that word's key answers its query.");
  const st = ctx.state, axes = ctx.axes, channels = ctx.data.wiring.channels;
  const changed = () => ctx.wiringChanged();
  const editors = [
    buildWiringEditor("W_Q", axes, channels, () => st.wq, (i, j, v) => { st.wq[i][j] = v; changed(); }),
    buildWiringEditor("W_K", axes, channels, () => st.wk, (i, j, v) => { st.wk[i][j] = v; changed(); }),
  ];
  const wv = buildWiringEditor("W_V", axes, axes, () => st.wv || identity(axes.length), (i, j, v) => {
    st.wv = st.wv || identity(axes.length); st.wv[i][j] = v; changed();
  });
  const showWiring = () => [...editors, wv].forEach(e => e.refresh());
  const refresh = () => { showWiring(); changed(); };
  const scale = h("input", {type: "checkbox", id: "scale", checked: st.scale,
                            onchange: () => { st.scale = scale.checked; changed(); }});
  const causal = h("input", {type: "checkbox", id: "causal", checked: st.causal,
                             onchange: () => { st.causal = causal.checked; changed(); }});
  const back = () => {  // the page's start: its wiring, the division on, no mask
    const start = ctx.data.wiring;
    st.wq = copy(start.w_q); st.wk = copy(start.w_k); st.wv = start.w_v ? copy(start.w_v) : null;
    st.scale = scale.checked = true; st.causal = causal.checked = false;
    refresh();
  };
  const own = ctx.data.wiring.lesson ? "the lesson" : "your wiring";
  const dk = h("p", {class: "hint", id: "dk-line"});
  body.append(
    h("div", {class: "editors"}, ...editors.map(e => e.element)),
    h("p", {class: "hint"}, "A row is an axis of the table, a column a channel. " +
      (ctx.data.wiring.lesson ? "In the lesson's wiring, W_Q[place, topic] = 2: a word's " +
        "place-ness asks for topic; W_K[water, topic] = 1: its water-ness answers on topic. "
        : "The page starts with your wiring; the button below brings it back. ") +
      "Drag a slider, use the arrow keys on it, or type."),
    h("details", {class: "wv"}, h("summary", {}, "W_V, the values (identity: each word hands " +
      "over its own row, so outputs stay on the named axes)"), wv.element),
    h("div", {class: "row switches"},
      h("label", {}, scale, " divide the scores by \u221ad_k"),
      h("label", {}, causal, " causal mask (a word sees only itself and the words before it)")),
    h("div", {class: "row"},
      h("button", {type: "button", id: "lesson-wiring", onclick: back},
        `back to ${own} (W_Q, W_K, W_V, \u221ad_k on, no mask)`),
      h("button", {type: "button", id: "zero-wiring", onclick: () => {
        st.wq = st.wq.map(r => r.map(() => 0)); st.wk = st.wk.map(r => r.map(() => 0)); refresh();
      }}, "all zero"),
      h("button", {type: "button", id: "identity-wv", onclick: () => { st.wv = null; refresh(); }},
        "W_V = identity")),
    dk);
  const say = cellReadout(PROMPT), looks = h("ul", {class: "looks"});
  const empty = h("p", {class: "hint empty-note", hidden: true}, EMPTY);
  const lives = h("div", {class: "lives", id: "three-lives"});
  const ratio = h("p", {class: "readout", id: "ratio"});
  const w = () => ctx.current.wired, t = i => named(ctx.current.tokens, i), tokens = ctx.current.tokens;
  const views = {
    Q: new MatrixView("Q = X @ W_Q (queries)", tokens, channels, {onCell: say.cell((i, j) =>
      `${t(i)} asks ${fixed(w().queries[i][j])} on channel ${channels[j]}`)}),
    K: new MatrixView("K = X @ W_K (keys)", tokens, channels, {onCell: say.cell((i, j) =>
      `${t(i)} advertises ${fixed(w().keys[i][j])} on channel ${channels[j]}`)}),
    V: new MatrixView("V = X @ W_V (values)", tokens, axes, {onCell: say.cell((i, j) =>
      `${t(i)} hands over ${axes[j]} = ${fixed(w().values[i][j])}`)}),
    scores: new MatrixView("scores = Q @ K.T", tokens, tokens, {onCell: say.cell((i, j) =>
      `score ${t(i)} \u2192 ${t(j)} = ${t(i)}'s query \u00b7 ${t(j)}'s key = ` +
      fixed(w().scores[i][j]))}),
    divided: new MatrixView("scores / \u221ad_k", tokens, tokens, {onCell: say.cell((i, j) =>
      `${fixed(w().scores[i][j])} / \u221a${channels.length} = ${fixed(w().divided[i][j])}`)}),
    weights: new MatrixView("weights = softmax of each row", tokens, tokens, {heat: true,
      onCell: say.cell((i, j) => (w().mask && !w().mask[i][j]
        ? `${t(i)} cannot look ahead at ${t(j)}: the mask gives it 0`
        : `${t(i)} takes ${fixed(w().weights[i][j])} of its new vector from ${t(j)}`))}),
    outputs: new MatrixView("outputs = weights @ V", tokens, axes, {onCell: say.cell((i, j) =>
      `${t(i)}'s output ${axes[j]} = ${fixed(w().outputs[i][j])}`)}),
  };
  for (const [key, v] of Object.entries(views)) v.table.id = `m2-${key}`;
  const save = saveButtons(() => tableSvg(views.weights.table), "m2_weights", "the weights");
  const boxes = Object.fromEntries(Object.entries(views).map(([k, v]) =>
    [k, k === "weights" ? scrollBox(v.table, save) : scrollBox(v.table)]));
  body.append(empty, h("div", {class: "matrices"}, ...Object.values(boxes)), say.element,
              h("h3", {}, "Where each word looks most: simple \u2192 wired"), looks,
              h("h3", {id: "lives-title"}, "Three lives"), lives, ratio);

  const lifeBoxes = ["lookup (the table's row)", "simple attention (Module 1)",
                     "wired head (your W_Q, W_K, W_V)"].map((name, g) => {
    const list = h("div");
    lives.append(h("div", {class: "life", "data-life": String(g)}, h("h4", {}, name), list));
    return list;
  });
  const lifeTitle = body.querySelector("#lives-title");

  function updateLives() {
    const {tokens: words, X, raw, wired} = ctx.current, f = st.follow;
    lives.hidden = ratio.hidden = !words.length;
    if (!words.length) { text(lifeTitle, "Three lives"); return; }
    const rows = [X[f], raw.outputs[f], wired.outputs[f]], all = rows.flat();
    const lo = Math.min(0, ...all), hi = Math.max(0, ...all);
    rows.forEach((v, g) => bars(lifeBoxes[g], axes.map((a, k) => [a, v[k]]), lo, hi,
                                ["#6b6b6b", "#c0392b", "#2468b4"][g]));
    text(lifeTitle, `${named(words, f)}'s three lives`);
    const [a0, a1] = axes, r = v => (v[1] === 0 ? `no ${a1}` : `${readable(v[0] / v[1])} to 1`);
    text(ratio, `${a0} to ${a1}: lookup ${r(X[f])}, simple ${r(raw.outputs[f])}, ` +
      `wired ${r(wired.outputs[f])}`);
  }

  function update(change) {
    if (change === "follow") { updateLives(); return; }
    const {raw, wired, tokens: words} = ctx.current, n = channels.length;
    if (change === "sentence") {  // new labels: the tables are made once, then relabelled
      for (const key of ["Q", "K"]) views[key].relabel(words, channels);
      for (const key of ["V", "outputs"]) views[key].relabel(words, axes);
      for (const key of ["scores", "divided", "weights"]) views[key].relabel(words, words);
      empty.hidden = words.length > 0;
    }
    views.Q.set(wired.queries);
    views.K.set(wired.keys);
    views.V.set(wired.values);
    views.scores.set(wired.scores, {mask: wired.mask});
    views.divided.set(wired.divided, {mask: wired.mask});
    boxes.divided.hidden = !st.scale;
    views.weights.set(wired.weights, {top: topOf(wired.weights), mask: wired.mask});
    views.outputs.set(wired.outputs);
    dk.textContent = st.scale
      ? `d_k = ${n}: every score is divided by \u221a${n} = ${fixed(Math.sqrt(n))} before softmax.`
      : `d_k = ${n}: the scores go into softmax undivided.`;
    listItems(looks, words.map((_, i) =>
      `${named(words, i)}: ${largest(raw.weights[i], words)} \u2192 ${largest(wired.weights[i], words)}`));
    updateLives();
    say.refresh();
  }
  showWiring();
  return {section, update};
});
