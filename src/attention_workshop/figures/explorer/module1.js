// module1.js: attention with nothing learned. X, the scores X @ X.T, the weights (each row
// softmaxed) and each word's output (weights @ X), for the learner's sentence.
AW.define("module1.js", ({listItems, named, largest}) => {
  function lookList(list, tokens, weights) {  // "bank -> river 0.317" for every word, ties named
    listItems(list, tokens.map((t, i) => `${named(tokens, i)} \u2192 ${largest(weights[i], tokens)}`));
  }

  function topOf(M) {  // the largest entry: the heatmap's darkest blue
    let top = 0;
    for (const row of M) for (const v of row) if (v > top) top = v;
    return top;
  }

  const PROMPT = "Point at or focus a table (arrow keys move) to read one number in words.";
  const EMPTY = "The sentence is empty: add words above and every table here fills in.";
  return {lookList, topOf, PROMPT, EMPTY};
});

AW.panel("module1.js", ({h, panel, MatrixView, cellReadout, scrollBox, fixed, named, lookList,
                         topOf, buildPlane, saveButtons, tableSvg, PROMPT, EMPTY}) => ctx => {
  const {section, body} = panel("module1", "Module 1: attention with nothing learned",
    "Each word scores every word by a dot product of their rows, turns its scores into shares " +
    "that sum to 1 (softmax), and becomes the share-weighted blend of all the rows.");
  const say = cellReadout(PROMPT), empty = h("p", {class: "hint empty-note", hidden: true}, EMPTY);
  const looks = h("ul", {class: "looks"});
  const plane = buildPlane(ctx);
  const cur = () => ctx.current, axes = ctx.axes, t = i => named(cur().tokens, i);
  const tokens = cur().tokens;
  const views = {
    X: new MatrixView("X: each word's row of the table", tokens, axes, {onCell: say.cell((i, j) =>
      `${t(i)}'s ${axes[j]} = ${fixed(cur().X[i][j])} (the lookup: the same row in every ` +
      "sentence)")}),
    scores: new MatrixView("scores = X @ X.T", tokens, tokens, {onCell: say.cell((i, j) =>
      `score ${t(i)} \u2192 ${t(j)} = ${t(i)}'s row \u00b7 ${t(j)}'s row = ` +
      fixed(cur().raw.scores[i][j]))}),
    weights: new MatrixView("weights = softmax of each row", tokens, tokens, {heat: true,
      onCell: say.cell((i, j) => `${t(i)} takes ${fixed(cur().raw.weights[i][j])} of its new ` +
        `vector from ${t(j)} (the row of ${t(i)} sums to 1)`)}),
    outputs: new MatrixView("outputs = weights @ X", tokens, axes, {onCell: say.cell((i, j) =>
      `${t(i)}'s output ${axes[j]} = ${fixed(cur().raw.outputs[i][j])} (its lookup said ` +
      `${fixed(cur().X[i][j])})`)}),
  };
  for (const [key, v] of Object.entries(views)) v.table.id = `m1-${key}`;
  const save = saveButtons(() => tableSvg(views.weights.table), "m1_weights", "the weights");
  body.append(empty, h("div", {class: "matrices"}, ...Object.entries(views).map(([key, v]) =>
    (key === "weights" ? scrollBox(v.table, save) : scrollBox(v.table)))),
    say.element, h("div", {class: "split"},
      h("div", {}, h("h3", {}, "Where each word looks most"), looks),
      h("div", {}, h("h3", {}, "The followed word on the first two axes"), plane.element)));

  function update(change) {
    if (change === "wiring") return;
    if (change === "follow") { plane.update(); return; }
    const {X, raw} = cur(), words = cur().tokens;  // a new sentence: the tables are relabelled
    views.X.relabel(words, axes); views.outputs.relabel(words, axes);
    views.scores.relabel(words, words); views.weights.relabel(words, words);
    empty.hidden = words.length > 0;
    views.X.set(X);
    views.scores.set(raw.scores);
    views.weights.set(raw.weights, {top: topOf(raw.weights)});
    views.outputs.set(raw.outputs);
    lookList(looks, words, raw.weights);
    plane.update();
    say.refresh();
  }
  return {section, update};
});
