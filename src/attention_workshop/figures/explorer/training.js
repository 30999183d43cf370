// training.js: Module 6, attention learns: the trainings of results.log [S20]-[S23] replayed
// with a slider over the logged steps (the engine's numbers, embedded by data_module6.py; the
// page only draws them). The toy: W_Q @ W_K.T and bank's weights moving toward where the
// training ends, beside Module 2's hand wiring. The transformer: the loss on each copy, every
// head's weights on one repeated sequence and its induction and previous-token scores, with the
// phase change marked. A page without Module 6's data (explorer, real --out) has no such panel.
AW.panel("training.js", ({h, s, panel, heat, MatrixView, scrollBox, cellReadout, readout, text,
                          fixed}) => ctx => {
  const m6 = ctx.data.training;
  if (!m6 || (!m6.wiring && !m6.induction)) {
    return {section: document.createDocumentFragment(), update() {}};  // no panel, no link
  }
  const {section, body} = panel("module6", "Module 6: attention learns",
    "Nobody wires a real model by hand: training finds its W_Q and W_K. Move through the " +
    "training step by step and watch the wiring, and then an induction head, appear.");
  body.append(h("p", {class: "hint", id: "m6-source"}, m6.source));
  const milli = rows => rows.map(row => row.map(v => v / 1000));
  const PLAY_MS = 700;  // play: a step every 0.7 s (the 17 logged steps of [S23] in 12 s)

  // A slider over steps: a labelled range (arrow keys, Home, End), previous / next buttons, a
  // play button (one step every PLAY_MS, from the start if at the end; pressed again, or any
  // other control, stops it) and the step as text (aria-valuetext too). onmove(k) redraws at
  // the k-th logged step.
  function stepper(id, steps, last, onmove) {
    const range = h("input", {type: "range", id, min: "0", max: String(steps.length - 1),
                              step: "1", value: "0"});
    const back = h("button", {type: "button", id: `${id}-back`}, "\u25c0 previous");
    const next = h("button", {type: "button", id: `${id}-next`}, "next \u25b6");
    const play = h("button", {type: "button", id: `${id}-play`, "aria-pressed": "false"},
                   "play \u25b7");
    const value = h("output", {for: id, id: `${id}-value`});
    let timer = null;
    const stop = () => {
      clearInterval(timer); timer = null;
      play.setAttribute("aria-pressed", "false"); text(play, "play \u25b7");
    };
    const go = k => {
      range.value = String(Math.max(0, Math.min(steps.length - 1, k)));
      move();
    };
    play.onclick = () => {
      if (timer !== null) { stop(); return; }
      if (Number(range.value) === steps.length - 1) go(0);
      play.setAttribute("aria-pressed", "true"); text(play, "pause \u2016");
      timer = setInterval(() => {
        go(Number(range.value) + 1);
        if (Number(range.value) === steps.length - 1) stop();
      }, PLAY_MS);
    };
    function move() {
      const k = Number(range.value), words = `step ${steps[k]} of ${last}`;
      text(value, words);
      range.setAttribute("aria-valuetext", words);
      back.disabled = k === 0; next.disabled = k === steps.length - 1;
      onmove(k);
    }
    range.oninput = () => { stop(); move(); };
    back.onclick = () => { stop(); go(Number(range.value) - 1); };
    next.onclick = () => { stop(); go(Number(range.value) + 1); };
    const element = h("div", {class: "row"}, h("label", {for: id}, "Training step "), range,
                      back, next, play, value);
    return {element, go: k => { stop(); go(k); }, move, at: () => Number(range.value)};
  }

  // A loss curve: each series against the step, a band (the phase change), a dotted level
  // ([value, its name]: what a model that cannot tell scores) and the step shown.
  function curve(id, steps, series, band, label, level) {
    const W = 420, H = 200, L = 40, R = 12, T = 10, B = 34, last = steps[steps.length - 1] || 1;
    const top = Math.max(...series.flatMap(sr => sr.values));
    const unit = top > 2 ? 1 : top > 1 ? 0.5 : 0.2, yMax = Math.ceil(top / unit) * unit;
    const x = step => L + step / last * (W - L - R), y = v => T + (1 - v / yMax) * (H - T - B);
    const svg = s("svg", {viewBox: `0 0 ${W} ${H}`, class: "curve", role: "img", id});
    for (let v = 0; v <= yMax + 1e-9; v += unit) {
      svg.append(s("line", {x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid"}),
                 s("text", {x: L - 5, y: y(v) + 4, class: "tick end"}, fixed(v, unit < 1 ? 1 : 0)));
    }
    for (const step of [0, Math.round(last / 2), last]) {
      svg.append(s("text", {x: x(step), y: H - B + 15, class: "tick"}, String(step)));
    }
    svg.append(s("text", {x: (L + W - R) / 2, y: H - 3, class: "axis"}, "training step"));
    if (band) {
      svg.append(s("rect", {x: x(band[0]), width: x(band[1]) - x(band[0]), y: T,
                            height: H - T - B, class: "phase"}),
                 s("text", {x: x(band[1]) + 4, y: H - B - 6, class: "tick start"},
                   "\u2190 phase change"));
    }
    if (level) {
      svg.append(s("line", {x1: L, x2: W - R, y1: y(level[0]), y2: y(level[0]), class: "level"}),
                 s("text", {x: L + 4, y: y(level[0]) + 12, class: "tick start"}, level[1]));
    }
    const now = s("line", {y1: T, y2: H - B, class: "now-line"});
    svg.append(now);
    // each series named above its last point, the names kept 12 px apart
    const at = series.map(sr => y(sr.values[sr.values.length - 1]) - 6);
    [...at.keys()].sort((a, b) => at[a] - at[b]).forEach((j, n, order) => {
      if (n && at[j] - at[order[n - 1]] < 12) at[j] = at[order[n - 1]] + 12;
    });
    const dots = series.map((sr, j) => {
      svg.append(s("polyline", {points: sr.values.map((v, k) => `${x(steps[k])},${y(v)}`)
        .join(" "), class: `line ${sr.cls}`}));
      svg.append(s("text", {x: W - R, y: at[j], class: `tick end ${sr.cls}`}, sr.name));
      const dot = s("circle", {r: 4, class: `dot ${sr.cls}`});
      svg.append(dot);
      return dot;
    });
    return {svg, draw(k) {
      now.setAttribute("x1", x(steps[k])); now.setAttribute("x2", x(steps[k]));
      series.forEach((sr, j) => { dots[j].setAttribute("cx", x(steps[k]));
                                  dots[j].setAttribute("cy", y(sr.values[k])); });
      svg.setAttribute("aria-label", label(k));
    }};
  }

  if (m6.wiring) toy(m6.wiring);
  if (m6.induction) transformer(m6.induction);

  // --- [S20]-[S21]: the toy's W_Q and W_K, learned ---
  function toy(w) {
    const {steps, axes} = w, end = steps.length - 1;
    body.append(h("h3", {id: "m6-toy"}, "The toy's wiring, learned"),
      h("p", {class: "hint"}, "The task: bank's output must tell which kind of bank the " +
        "sentence is about (its water and money numbers are the two scores). W_Q and W_K (4 " +
        "\u00d7 2) start near zero, every weight near even, and plain gradient descent moves " +
        "them; the lesson's two sentences are never trained on (no river, no money)."));
    const loss = curve("m6-toy-curve", steps, [{values: w.loss.map(v => v / 1000),
      cls: "second", name: "training loss"}], null,
      k => `training loss against the step; at step ${steps[k]}: ${fixed(w.loss[k] / 1000)} ` +
        `nats (log 2 = 0.693 when it cannot tell)`, [Math.log(2), "log 2: cannot tell"]);
    const say = cellReadout("Point at or focus a table (arrow keys) to read one number.");
    const product = (id, caption, values) => {
      const view = new MatrixView(caption, axes, axes, {
        onCell: say.cell((i, j) => `${caption}: query ${axes[i]}, key ${axes[j]} = ` +
          fixed(view.values[i][j]))});
      view.table.id = id;
      if (values) view.set(values);
      return view;
    };
    const now = product("m6-toy-now", "W_Q @ W_K.T at this step", null);
    const final = product("m6-toy-end", `learned, at the end (step ${w.last})`, milli(w.product[end]));
    const wired = product("m6-toy-wired", "wired by hand (Module 2)", milli(w.wired.product));
    const banks = w.sentences.map((sentence, n) => {
      const caption = `bank's weights in "${sentence.sentence}"`;
      const view = new MatrixView(caption, ["this step", `the end (${w.last})`, "wired"],
        sentence.tokens, {heat: true, onCell: say.cell((i, j) => `${caption}, ` +
          `${view.rows[i]}: on ${sentence.tokens[j]} ${fixed(view.values[i][j])}`)});
      view.table.id = `m6-toy-bank-${n}`;
      return view;
    });
    const line = readout();
    line.id = "m6-toy-now-say";
    // how far step k's W_Q @ W_K.T is from the end's, in thousandths (exact: whole numbers)
    const apart = k => Math.max(...w.product[k].flatMap((row, i) =>
      row.map((v, j) => Math.abs(v - w.product[end][i][j]))));
    const move = stepper("m6-toy-step", steps, w.last, k => {
      now.table.querySelector("caption").textContent = `learned, at step ${steps[k]}`;
      now.set(milli(w.product[k]));
      banks.forEach((view, n) => view.set(milli([w.bank[k][n], w.bank[end][n], w.wired.bank[n]]),
                                         {top: 1}));
      loss.draw(k);
      const topic = n => fixed(w.bank[k][n][1] / 1000), hand = fixed(w.wired.bank[0][1] / 1000);
      text(line, `Step ${steps[k]} of ${w.last}: training loss ${fixed(w.loss[k] / 1000)}; ` +
        `bank puts ${topic(0)} on river in "${w.sentences[0].sentence}" and ${topic(1)} on ` +
        `money in "${w.sentences[1].sentence}" (wired by hand: ${hand}). W_Q @ W_K.T is ` +
        `within ${fixed(apart(k) / 1000)} of where it ends (its largest entry's difference).`);
      say.refresh();
    });
    body.append(move.element, line,
      h("div", {class: "split"}, h("div", {class: "m6-curve"}, loss.svg),
        h("div", {}, ...banks.map(v => scrollBox(v.table)))),
      h("div", {class: "matrices"}, ...[now, final, wired].map(v => scrollBox(v.table))),
      h("p", {class: "hint"}, "Rows are the query's axis, columns the key's. The learned " +
        "numbers are larger than the hand-wired ones, but read the place row (bank is mostly " +
        "place): both make bank's query prefer keys on water and money, the topic word, " +
        "over place and filler (bank itself and the)."),
      say.element);
    move.move();
  }

  // --- [S23]: an induction head forms ---
  function transformer(m) {
    const {steps, layers, heads, tokens, phase} = m, last = steps[steps.length - 1];
    // A phase change is named once an induction head has formed (a layer-1 score past 0.5, as
    // [S23]'s last line): a short training's steepest fall is only noise.
    const formed = m.first_above[1] !== null, band = formed ? phase : null;
    const shaded = formed ? `, the phase change between steps ${phase[0]} and ${phase[1]} ` +
      "shaded" : "";
    const at = step => steps.indexOf(step);
    const names = [];
    for (let l = 0; l < layers; l++) for (let hd = 0; hd < heads; hd++) names.push(`L${l} H${hd}`);
    const T = tokens.length, label = j => `${j}: ${tokens[j]}`;
    body.append(h("h3", {id: "m6-induction"}, "An induction head forms"),
      h("p", {class: "hint"}, `A ${layers}-layer attention-only transformer (${heads} heads a ` +
        `layer, d_model ${m.d_model}, ${m.vocab} tokens) learns to predict the next token of ` +
        "random tokens in which a stretch repeats once, at a random distance. The first copy " +
        `is random: log ${m.vocab} = ${fixed(Math.log(m.vocab), 2)} nats is the best any model ` +
        "can do. The second copy can be predicted, by a model that finds the earlier copy."));
    const loss = curve("m6-loss-curve", steps, [
      {values: m.first, cls: "first", name: "first copy"},
      {values: m.second, cls: "second", name: "second copy"}], band,
      k => `held-out loss against the step${shaded}; at step ${steps[k]}: first copy ` +
        `${fixed(m.first[k], 2)}, second ` +
        `copy ${fixed(m.second[k], 2)} nats`,
      [Math.log(m.vocab), `log ${m.vocab}: random tokens`]);
    const bestOf = (field, layer) => steps.map((_, k) => Math.max(...m[field][k][layer]));
    const growth = curve("m6-score-curve", steps, [
      {values: bestOf("previous", 0), cls: "previous", name: "layer 0's best previous-token"},
      {values: bestOf("induction", layers - 1), cls: "induction",
       name: `layer ${layers - 1}'s best induction`}], band,
      k => `the best scores against the step${shaded}; at step ${steps[k]}: ` +
        `layer 0's best previous-token score ${fixed(bestOf("previous", 0)[k], 2)}, layer ` +
        `${layers - 1}'s best induction score ${fixed(bestOf("induction", layers - 1)[k], 2)}`);
    const line = readout(), notice = h("p", {class: "hint", id: "m6-notice", "aria-live": "polite"});
    line.id = "m6-now";
    const jump = h("button", {type: "button", id: "m6-phase", disabled: !formed}, formed
      ? `go to the phase change (steps ${phase[0]} \u2192 ${phase[1]})`
      : "no phase change in these steps: no induction head has formed (train longer)");
    const gridSay = cellReadout("Point at or focus the table (arrow keys) to read one score.");
    const scores = new MatrixView("", names, ["induction", "previous"], {heat: true,
      onCell: gridSay.cell((i, j) => `${names[i]}, ${scores.cols[j]} score = ` +
        fixed(scores.values[i][j], 2))});
    scores.table.id = "m6-scores";
    gridSay.element.id = "m6-scores-say";
    // every head's weights drawn small (a button each: it shows that head's table below)
    const CELL = 9, side = T * CELL;
    const paint = v => { const c = {style: {}}; heat(c, v, 1); return c.style.backgroundColor; };
    let chosen = layers * heads - 1;
    const pictures = names.map((name, i) => {
      const svg = s("svg", {viewBox: `0 0 ${side} ${side}`, class: "pattern", "aria-hidden": "true"});
      const rects = [];
      for (let r = 0; r < T; r++) for (let c = 0; c <= r; c++) {
        const rect = s("rect", {x: c * CELL, y: r * CELL, width: CELL, height: CELL});
        svg.append(rect); rects.push(rect);
      }
      for (const [kind, cls] of [["induction", "cell-induction"], ["previous", "cell-previous"]]) {
        const [rows, cols] = m.cells[kind];
        rows.forEach((r, n) => svg.append(s("rect", {x: cols[n] * CELL + 1, y: r * CELL + 1,
          width: CELL - 2, height: CELL - 2, class: cls})));
      }
      const caption = h("span", {class: "pattern-label"});
      const button = h("button", {type: "button", class: "pattern-head", id: `m6-head-${i}`,
        "aria-pressed": "false", onclick: () => { chosen = i; draw(); }}, svg, caption);
      return {button, rects, caption};
    });
    const weightSay = cellReadout("Point at or focus the table (arrow keys) to read one weight.");
    const narrow = window.matchMedia("(max-width: 600px)");
    const weights = new MatrixView("", tokens.map((_, j) => label(j)), tokens.map((_, j) => label(j)),
      {heat: true, number: 5, pad: 1,
       format: v => fixed(v).replace(/^0\./, "."),
       onCell: weightSay.cell((i, j) => `${names[chosen]} at step ${steps[move.at()]}: ` +
         `${label(i)} \u2192 ${label(j)} ` + (j > i ? "masked: a token never looks ahead"
           : `= ${fixed(weights.values[i][j])}`))});
    weights.table.id = "m6-weights";
    weightSay.element.id = "m6-weights-say";
    weights.table.classList.add("compact");
    const mask = tokens.map((_, i) => tokens.map((_, j) => j <= i));
    const best = (field, layer, k) => {  // -> [score, head] of the layer's strongest head
      const row = m[field][k][layer];
      const hd = row.indexOf(Math.max(...row));
      return [row[hd], hd];
    };
    function noticeFor(k) {
      const step = steps[k], [prevAt, indAt] = m.first_above;
      const [p, ph] = best("previous", 0, k), [q, qh] = best("induction", layers - 1, k);
      const prevHead = `L0 H${ph} (previous-token score ${fixed(p, 2)})`;
      const indHead = `L${layers - 1} H${qh} (induction score ${fixed(q, 2)})`;
      if (formed && step === phase[0]) return `The phase change starts here: between this step and ` +
        `step ${phase[1]} the second copy's loss falls most (${fixed(m.second[k], 2)} \u2192 ` +
        `${fixed(m.second[at(phase[1])], 2)}), as ${indHead} sharpens.`;
      if (formed && step === phase[1]) return `The phase change: since step ${phase[0]} the second ` +
        `copy's loss fell most (${fixed(m.second[at(phase[0])], 2)} \u2192 ` +
        `${fixed(m.second[k], 2)}); ${indHead} looks at the token after the earlier copy.`;
      if (prevAt === null || step < prevAt) return "What to notice: no head has a pattern " +
        "yet, and the second copy is predicted hardly better than the first. Layer 0's best " +
        `is ${prevHead}.`;
      if (indAt === null || step < indAt) return `What to notice: a previous-token head has ` +
        `appeared in layer 0, ${prevHead}, before any induction head (layer 1's best: ` +
        `${indHead}): an induction head needs it, to find the token after the earlier copy.`;
      return `What to notice: the two-head circuit is there: ${prevHead} in layer 0 and ` +
        `${indHead} in layer 1. The second copy's loss is ${fixed(m.second[k], 2)} nats, the ` +
        `first copy's still ${fixed(m.first[k], 2)}.`;
    }
    function draw() {
      const k = move.at(), step = steps[k];
      loss.draw(k); growth.draw(k);
      scores.table.querySelector("caption").textContent = `each head's scores at step ${step} ` +
        "(Module 4's definitions)";
      scores.set(names.map((_, i) => {
        const l = Math.floor(i / heads), hd = i % heads;
        return [m.induction[k][l][hd], m.previous[k][l][hd]];
      }), {top: 1, digits: 2});
      pictures.forEach((pic, i) => {
        const rows = m.patterns[k][i];
        let n = 0;
        rows.forEach(row => row.forEach(v => { pic.rects[n++].setAttribute("fill", paint(v / 1000)); }));
        const l = Math.floor(i / heads), hd = i % heads;
        text(pic.caption, `${names[i]}: induction ${fixed(m.induction[k][l][hd], 2)}, ` +
          `previous ${fixed(m.previous[k][l][hd], 2)}`);
        pic.button.setAttribute("aria-pressed", String(i === chosen));
      });
      weights.table.querySelector("caption").textContent = `${names[chosen]}'s weights at step ` +
        `${step}: each row is a token looking back (rows and columns: position: token` +
        `${narrow.matches ? "; .834 is 0.834" : ""})`;
      weights.set(milli(m.patterns[k][chosen].map(row => [...row, ...Array(T - row.length).fill(0)])),
                  {top: 1, mask});
      text(line, `Step ${step} of ${last}: held-out loss ${fixed(m.first[k], 2)} nats on the ` +
        `first copy, ${fixed(m.second[k], 2)} on the second.`);
      text(notice, noticeFor(k));
      gridSay.refresh(); weightSay.refresh();
    }
    const move = stepper("m6-step", steps, last, draw);
    jump.onclick = () => move.go(at(phase[0]));
    body.append(move.element, h("div", {class: "row"}, jump), line, notice,
      h("div", {class: "split"}, h("div", {class: "m6-curve"}, loss.svg),
        h("div", {class: "m6-curve"}, growth.svg)),
      scrollBox(scores.table), gridSay.element,
      h("h4", {}, `Every head's weights on ${T / 2} random tokens repeated once (` +
        `${tokens.join(" ")}); the induction cells outlined in orange, the previous-token ` +
        "cells dashed. Choose a head to read its weights:"),
      h("div", {class: "pattern-heads", id: "m6-heads"}, ...pictures.map(p => p.button)),
      scrollBox(weights.table), weightSay.element);
    move.move();
  }
  return {section, update() {}};  // the run's numbers: no control outside the panel moves them
});
