// real.js: Module 3, a real model's attention as the engine computed it (the numbers are
// embedded, not recomputed). One layer and head at a time, two sentences side by side, and for a
// chosen pair of words the three heads where the first looks hardest at the second.
AW.define("real.js", ({h, scrollBox, readout, bars, MatrixView, fixed, largest, topOf,
                        saveButtons, tableSvg}) => {
  const TOP_HEADS = 3;
  const DENSE_PAST = 10;  // tokens; past this the cells print 2 decimals in a smaller font

  // The `count` heads where token `from` puts most weight on token `to`; ties keep layer, then head
  // order (as real/head_search.py's heads_toward). Returns [[layer, head, weight], ...].
  function headsToward(attentions, from, to, count = TOP_HEADS) {
    const found = [];
    attentions.forEach((layer, l) => layer.forEach((head, hd) => found.push([l, hd, head[from][to]])));
    return found.sort((a, b) => b[2] - a[2] || a[0] - b[0] || a[1] - b[1]).slice(0, count);
  }

  function defaultPair(run) {  // [from, to]: the embedded pair, else bank (or the last word) and
    if (run.pair) return run.pair;  // the word it looks at hardest in any head
    const words = run.tokens.map((_, i) => i).filter(i => !run.special[i]);
    if (!words.length) return [0, 0];
    const bank = run.tokens.lastIndexOf("bank");
    const from = bank >= 0 && !run.special[bank] ? bank : words[words.length - 1];
    let to = from, best = -1;
    for (const j of words) {
      if (j === from) continue;
      for (const layer of run.attentions) for (const head of layer) {
        if (head[from][j] > best) { best = head[from][j]; to = j; }
      }
    }
    return [from, to];
  }

  // True if every word after the first puts its largest weight on the word just before it
  // (as modules/module3.py's is_previous_token_head).
  function previousTokenHead(w, special) {
    const argmax = row => row.indexOf(Math.max(...row));
    const words = special.map((sp, i) => (sp ? -1 : i)).filter(i => i >= 0);
    return words.length > 1 && words.slice(1).every(i => argmax(w[i]) === i - 1);
  }

  function tokenOptions(select, tokens) {
    select.replaceChildren(...tokens.map((t, i) => h("option", {value: String(i)}, `${i}: ${t}`)));
  }

  function buildSide(ctx, k, pick) {  // one of the two columns
    const real = ctx.data.real, id = `real-${k}`;
    const sentence = h("select", {id: `${id}-sentence`}), from = h("select", {id: `${id}-from`});
    const to = h("select", {id: `${id}-to`});
    real.runs.forEach((r, i) => sentence.append(h("option", {value: String(i)}, `"${r.sentence}"`)));
    sentence.value = String(Math.min(k, real.runs.length - 1));
    const heads = h("div", {class: "row heads", id: `${id}-heads`});
    let view = null;
    const save = saveButtons(() => tableSvg(view.table), `real_${k}_head`, "this head's weights");
    const grid = scrollBox(save), say = readout(), row = h("div", {class: "row-bars"});
    const element = h("div", {class: "side", id},
      h("div", {class: "row"}, h("label", {for: sentence.id}, "Sentence "), sentence),
      h("div", {class: "row"}, h("label", {for: from.id}, "Word "), from,
        h("label", {for: to.id}, " looking at "), to),
      h("p", {class: "hint"}, "The heads where it looks hardest (click one to show it):"), heads,
      grid, say, row);
    const run = () => real.runs[Number(sentence.value)];

    function rebuild() {
      const r = run(), [f, t] = defaultPair(r);
      tokenOptions(from, r.tokens); tokenOptions(to, r.tokens);
      from.value = String(f); to.value = String(t);
      view = new MatrixView("", r.tokens, r.tokens, {heat: true,
        onCell: (i, j) => {
          const {layer, head} = ctx.state.real;
          say.textContent = `layer ${layer}, head ${head}: ${r.tokens[i]} \u2192 ${r.tokens[j]} = ` +
            fixed(r.attentions[layer][head][i][j]);
        }});
      view.table.id = `${id}-matrix`;
      grid.querySelector("table")?.remove();
      grid.insertBefore(view.table, save);
    }

    function update() {
      const r = run(), {layer, head} = ctx.state.real, f = Number(from.value), t = Number(to.value);
      const w = r.attentions[layer][head];
      view.table.querySelector("caption").textContent =
        `layer ${layer}, head ${head}: each row is where that token looks (rows sum to 1)`;
      const dense = r.tokens.length > DENSE_PAST;  // every heatmap keeps its numbers as text
      view.table.classList.toggle("dense", dense);
      view.set(w, {top: topOf(w), digits: dense ? 2 : 3});
      heads.replaceChildren(...headsToward(r.attentions, f, t).map(([l, hd, v]) => h("button", {
        type: "button", class: "head", "aria-pressed": String(l === layer && hd === head),
        onclick: () => pick(l, hd)}, `layer ${l}, head ${hd}: ${fixed(v)}`)));
      say.textContent = `layer ${layer}, head ${head}: ${r.tokens[f]} \u2192 ${r.tokens[t]} = ` +
        `${fixed(w[f][t])}; ${r.tokens[f]} looks most at ${largest(w[f], r.tokens)}.` +
        (previousTokenHead(w, r.special)
          ? " A previous-token head: every word looks hardest at the word just before it." : "");
      bars(row, r.tokens.map((tok, j) => [tok, w[f][j]]), 0, 1, "#2468b4");
    }
    sentence.onchange = () => { rebuild(); strongest(); };
    // A new pair of words: both sides move to the head where this pair's first word looks
    // hardest at its second (an old head would show a pair it was never chosen for).
    const strongest = () => { const [l, hd] = headsToward(run().attentions, Number(from.value),
                                                          Number(to.value), 1)[0]; pick(l, hd); };
    from.onchange = strongest;
    to.onchange = strongest;
    return {element, rebuild, update, top: () => headsToward(run().attentions,
      Number(from.value), Number(to.value), 1)[0]};
  }

  return {headsToward, buildSide};
});

AW.panel("real.js", ({h, panel, buildSide}) => {
  return ctx => {
    const real = ctx.data.real;
    const {section, body} = panel("module3", "Module 3: a real model's attention",
      "The same formula inside a trained transformer: pick a layer and a head to see where " +
      "each token looks, and compare two sentences side by side.");
    if (!real) {
      body.append(h("p", {class: "hint"}, "This page holds no real model's numbers: write it " +
        "with the model installed (attention-workshop run, or attention-workshop real " +
        "SENTENCE --out DIR)."));
      return {section, update() {}};
    }
    body.append(h("p", {class: "hint", id: "real-model"}, `${real.model}: ${real.layers} layers ` +
      `\u00d7 ${real.heads} heads, d_k = ${real.d_head}; ${real.source}. Layers and heads count ` +
      "from 0, as in results.log."));
    const layer = h("select", {id: "real-layer"}), head = h("select", {id: "real-head"});
    for (let l = 0; l < real.layers; l++) layer.append(h("option", {value: String(l)}, String(l)));
    for (let hd = 0; hd < real.heads; hd++) head.append(h("option", {value: String(hd)}, String(hd)));
    const pick = (l, hd) => {
      ctx.state.real = {layer: l, head: hd};
      layer.value = String(l); head.value = String(hd);
      sides.forEach(side => side.update());
    };
    layer.onchange = head.onchange = () => pick(Number(layer.value), Number(head.value));
    const sides = [0, 1].map(k => buildSide(ctx, k, pick));
    body.append(h("div", {class: "row"}, h("label", {for: "real-layer"}, "Layer "), layer,
                  h("label", {for: "real-head"}, " Head "), head),
                h("div", {class: "sides"}, ...sides.map(side => side.element)));
    sides.forEach(side => side.rebuild());
    const [l, hd] = sides[0].top();
    pick(l, hd);
    return {section, update() {}};  // its numbers are the embedded runs': no control above moves them
  };
});
