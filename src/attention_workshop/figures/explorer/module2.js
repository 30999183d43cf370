// module2.js: queries and keys wired by hand. The learner edits W_Q, W_K (and W_V), switches the
// division by sqrt(d_k) and the causal mask, and every matrix below follows at once.

function copy(M) { return M.map(row => row.slice()); }
function identity(n) { return Array.from({length: n}, (_, i) => Array.from({length: n}, (_, j) => +(i === j))); }

function buildModule2(ctx) {
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
    h("div", {class: "row"},
      h("button", {type: "button", id: "lesson-wiring", onclick: () => {  // the page's start
        const start = ctx.data.wiring;
        st.wq = copy(start.w_q); st.wk = copy(start.w_k); st.wv = start.w_v ? copy(start.w_v) : null;
        refresh();
      }}, ctx.data.wiring.name),
      h("button", {type: "button", id: "zero-wiring", onclick: () => {
        st.wq = st.wq.map(r => r.map(() => 0)); st.wk = st.wk.map(r => r.map(() => 0)); refresh();
      }}, "all zero"),
      h("button", {type: "button", id: "identity-wv", onclick: () => { st.wv = null; refresh(); }},
        "W_V = identity")),
    h("div", {class: "row switches"},
      h("label", {}, scale, " divide the scores by \u221ad_k"),
      h("label", {}, causal, " causal mask (a word sees only itself and the words before it)")),
    dk);
  const say = readout(), grid = h("div", {class: "matrices"}), looks = h("ul", {class: "looks"});
  const lives = h("div", {class: "lives", id: "three-lives"}), ratio = h("p", {class: "readout"});
  body.append(grid, say, h("h3", {}, "Where each word looks most: simple \u2192 wired"), looks,
              h("h3", {id: "lives-title"}, "Three lives"), lives, ratio);
  let views = null;

  function rebuild() {  // new sentence: new labels (the tables are made once, then relabelled)
    const tokens = ctx.current.tokens, w = () => ctx.current.wired;
    if (views) {
      for (const key of ["Q", "K"]) views[key].relabel(tokens, channels);
      for (const key of ["V", "outputs"]) views[key].relabel(tokens, axes);
      for (const key of ["scores", "divided", "weights"]) views[key].relabel(tokens, tokens);
      return;
    }
    const t = i => named(ctx.current.tokens, i);
    const tell = (text) => { say.textContent = text; };
    views = {
      Q: new MatrixView("Q = X @ W_Q (queries)", tokens, channels, {onCell: (i, j) =>
        tell(`${t(i)} asks ${fixed(w().queries[i][j])} on channel ${channels[j]}`)}),
      K: new MatrixView("K = X @ W_K (keys)", tokens, channels, {onCell: (i, j) =>
        tell(`${t(i)} advertises ${fixed(w().keys[i][j])} on channel ${channels[j]}`)}),
      V: new MatrixView("V = X @ W_V (values)", tokens, axes, {onCell: (i, j) =>
        tell(`${t(i)} hands over ${axes[j]} = ${fixed(w().values[i][j])}`)}),
      scores: new MatrixView("scores = Q @ K.T", tokens, tokens, {onCell: (i, j) =>
        tell(`score ${t(i)} \u2192 ${t(j)} = ${t(i)}'s query \u00b7 ` +
             `${t(j)}'s key = ${fixed(w().scores[i][j])}`)}),
      divided: new MatrixView("scores / \u221ad_k", tokens, tokens, {onCell: (i, j) =>
        tell(`${fixed(w().scores[i][j])} / \u221a${channels.length} = ` +
             `${fixed(w().divided[i][j])}`)}),
      weights: new MatrixView("weights = softmax of each row", tokens, tokens, {heat: true,
        onCell: (i, j) => tell(w().mask && !w().mask[i][j]
          ? `${t(i)} cannot look ahead at ${t(j)}: the mask gives it 0`
          : `${t(i)} takes ${fixed(w().weights[i][j])} of its new vector from ${t(j)}`)}),
      outputs: new MatrixView("outputs = weights @ V", tokens, axes, {onCell: (i, j) =>
        tell(`${t(i)}'s output ${axes[j]} = ${fixed(w().outputs[i][j])}`)}),
    };
    for (const [key, v] of Object.entries(views)) v.table.id = `m2-${key}`;
    grid.replaceChildren(...Object.values(views).map(v => h("div", {class: "mat"}, v.table)));
    tell("Point at or focus a table (arrow keys move) to read one number in words.");
  }

  const lifeBoxes = ["lookup (the table's row)", "simple attention (Module 1)",
                     "wired head (your W_Q, W_K, W_V)"].map((name, g) => {
    const list = h("div");
    lives.append(h("div", {class: "life", "data-life": String(g)}, h("h4", {}, name), list));
    return list;
  });
  const lifeTitle = body.querySelector("#lives-title");

  function updateLives() {
    const {tokens, X, raw, wired} = ctx.current, f = st.follow;
    const rows = [X[f], raw.outputs[f], wired.outputs[f]], all = rows.flat();
    const lo = Math.min(0, ...all), hi = Math.max(0, ...all);
    rows.forEach((v, g) => bars(lifeBoxes[g], axes.map((a, k) => [a, v[k]]), lo, hi,
                                ["#7f7f7f", "#c0392b", "#2468b4"][g]));
    text(lifeTitle, `${named(tokens, f)}'s three lives`);
    const [a0, a1] = axes, r = v => (v[1] === 0 ? `no ${a1}` : `${fixed(v[0] / v[1], 1)} to 1`);
    text(ratio, `${a0} to ${a1}: lookup ${r(X[f])}, simple ${r(raw.outputs[f])}, ` +
      `wired ${r(wired.outputs[f])}`);
  }

  function update() {
    const {raw, wired, tokens} = ctx.current, n = channels.length;
    views.Q.set(wired.queries);
    views.K.set(wired.keys);
    views.V.set(wired.values);
    views.scores.set(wired.scores, {mask: wired.mask});
    views.divided.set(wired.divided, {mask: wired.mask});
    views.divided.table.parentNode.hidden = !st.scale;
    views.weights.set(wired.weights, {top: topOf(wired.weights), mask: wired.mask});
    views.outputs.set(wired.outputs);
    dk.textContent = st.scale
      ? `d_k = ${n}: every score is divided by \u221a${n} = ${fixed(Math.sqrt(n))} before softmax.`
      : `d_k = ${n}: the scores go into softmax undivided.`;
    const simple = tokens.map((t, i) => largest(raw.weights[i], tokens));
    listItems(looks, tokens.map((t, i) =>
      `${named(tokens, i)}: ${simple[i]} \u2192 ${largest(wired.weights[i], tokens)}`));
    updateLives();
  }
  return {section, rebuild, update, updateFollow: updateLives, showWiring};
}
