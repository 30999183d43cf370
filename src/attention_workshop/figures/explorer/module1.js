// module1.js: attention with nothing learned. X, the scores X @ X.T, the weights (each row
// softmaxed) and each word's output (weights @ X), for the learner's sentence.

function lookList(list, tokens, weights) {  // "bank -> river 0.317" for every word, ties named
  listItems(list, tokens.map((t, i) => `${named(tokens, i)} \u2192 ${largest(weights[i], tokens)}`));
}

function topOf(M) {  // the largest entry: the heatmap's darkest blue
  let top = 0;
  for (const row of M) for (const v of row) if (v > top) top = v;
  return top;
}

function buildModule1(ctx) {
  const {section, body} = panel("module1", "Module 1: attention with nothing learned",
    "Each word scores every word by a dot product of their rows, turns its scores into shares " +
    "that sum to 1 (softmax), and becomes the share-weighted blend of all the rows.");
  const say = readout();
  const grid = h("div", {class: "matrices"});
  const looks = h("ul", {class: "looks"});
  const plane = buildPlane(ctx);
  body.append(grid, say, h("div", {class: "split"},
    h("div", {}, h("h3", {}, "Where each word looks most"), looks),
    h("div", {}, h("h3", {}, "The followed word on the first two axes"), plane.element)));
  let views = null;

  function rebuild() {  // new sentence: new labels (the tables are made once, then relabelled)
    const cur = () => ctx.current, axes = ctx.axes, tokens = cur().tokens;
    if (views) {
      views.X.relabel(tokens, axes); views.outputs.relabel(tokens, axes);
      views.scores.relabel(tokens, tokens); views.weights.relabel(tokens, tokens);
      return;
    }
    const t = i => named(cur().tokens, i);
    views = {
      X: new MatrixView("X: each word's row of the table", tokens, axes, {onCell: (i, j) => {
        say.textContent = `${t(i)}'s ${axes[j]} = ${fixed(cur().X[i][j])} (the lookup: ` +
          "the same row in every sentence)";
      }}),
      scores: new MatrixView("scores = X @ X.T", tokens, tokens, {onCell: (i, j) => {
        say.textContent = `score ${t(i)} \u2192 ${t(j)} = ${t(i)}'s row \u00b7 ` +
          `${t(j)}'s row = ${fixed(cur().raw.scores[i][j])}`;
      }}),
      weights: new MatrixView("weights = softmax of each row", tokens, tokens, {heat: true,
        onCell: (i, j) => {
          say.textContent = `${t(i)} takes ${fixed(cur().raw.weights[i][j])} of its new ` +
            `vector from ${t(j)} (the row of ${t(i)} sums to 1)`;
        }}),
      outputs: new MatrixView("outputs = weights @ X", tokens, axes, {onCell: (i, j) => {
        say.textContent = `${t(i)}'s output ${axes[j]} = ${fixed(cur().raw.outputs[i][j])}` +
          ` (its lookup said ${fixed(cur().X[i][j])})`;
      }}),
    };
    for (const [key, v] of Object.entries(views)) v.table.id = `m1-${key}`;
    grid.replaceChildren(...Object.values(views).map(v => h("div", {class: "mat"}, v.table)));
    say.textContent = "Point at or focus a table (arrow keys move) to read one number in words.";
  }

  function update() {
    const {X, raw, tokens} = ctx.current;
    views.X.set(X);
    views.scores.set(raw.scores);
    views.weights.set(raw.weights, {top: topOf(raw.weights)});
    views.outputs.set(raw.outputs);
    lookList(looks, tokens, raw.weights);
    plane.update();
  }
  return {section, rebuild, update, updateFollow: () => plane.update()};
}
