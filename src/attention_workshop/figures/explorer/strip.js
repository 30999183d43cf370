// strip.js: the followed word's numbers in one compact strip that stays at the foot of the
// screen while the learner uses the sentence and Module 2's controls (on a phone the tables
// are a long way below them), then settles after Module 2. Lookup, simple and wired output
// on every axis, and where the word looks most, as text.
AW.panel("strip.js", ({h, text, fixed, named, largest}) => ctx => {
  const head = h("p", {class: "strip-head", id: "strip-head"});
  const table = h("table", {class: "strip-table", id: "strip-table"});
  const section = h("aside", {class: "strip", id: "strip", "aria-label": "the followed word, live"},
                    head, table);
  const rows = ["lookup", "simple", "wired"];

  function update() {
    const {tokens, X, raw, wired} = ctx.current, f = ctx.state.follow, axes = ctx.axes;
    table.hidden = !tokens.length;
    if (!tokens.length) { text(head, "No sentence yet."); return; }
    text(head, `${named(tokens, f)} looks most at ${largest(wired.weights[f], tokens)} ` +
      `(simple attention: ${largest(raw.weights[f], tokens)})`);
    if (!table.rows.length) {
      table.append(h("thead", {}, h("tr", {}, h("th", {scope: "col"}, ""))), h("tbody", {},
        ...rows.map(r => h("tr", {}, h("th", {scope: "row"}, r)))));
    }
    const header = table.tHead.rows[0];
    while (header.cells.length - 1 > axes.length) header.lastChild.remove();
    axes.forEach((a, k) => {
      if (!header.cells[k + 1]) header.append(h("th", {scope: "col"}));
      text(header.cells[k + 1], a);
    });
    [X[f], raw.outputs[f], wired.outputs[f]].forEach((v, g) => {
      const tr = table.tBodies[0].rows[g];
      axes.forEach((_, k) => {
        if (!tr.cells[k + 1]) tr.append(h("td"));
        text(tr.cells[k + 1], fixed(v[k]));
      });
    });
  }
  return {section, update};
});
