// scaling.js: [S5], why scores are divided by sqrt(d_k). The lesson's table as the engine measured
// it, then a slider over d: the engine's measurements at that d, one row of 8 random scores drawn
// by the engine, and softmax of that row with and without the division (computed here, live).
AW.panel("scaling.js", ({h, s, panel, scrollBox, bars, fixed, largest, softmaxRows,
                         saveButtons}) => {
  return ctx => {
    const s5 = ctx.data.s5;
    const {section, body} = panel("scaling", "[S5] why the scores are divided by \u221ad_k",
      "A dot product of two random vectors of length d spreads like \u221ad, so without the " +
      "division softmax hands almost everything to one word as d grows; dividing by \u221ad keeps " +
      "the shares the same at every d.");
    const table = h("table", {class: "matrix s5", id: "s5-table"},
      h("caption", {}, `The lesson's table: ${s5.trials} rows of one random query against ` +
        `${s5.rows} random keys, entries N(0, 1), per d`),
      h("thead", {}, h("tr", {}, ...["d", "std of the dot products", "\u221ad",
        "avg top weight, undivided", "avg top weight, divided by \u221ad"]
        .map(c => h("th", {scope: "col"}, c)))),
      h("tbody", {}, ...s5.lesson.map(([d, std, un, sc]) => h("tr", {},
        h("th", {scope: "row"}, String(d)), h("td", {}, fixed(std, 2)),
        h("td", {}, fixed(Math.sqrt(d), 2)), h("td", {}, fixed(un)), h("td", {}, fixed(sc))))));
    const slider = h("input", {type: "range", id: "d-slider", min: "0",
                               max: String(s5.curve.length - 1), step: "1"});
    const label = h("output", {for: "d-slider", id: "d-value"});
    const say = h("p", {class: "readout", id: "s5-readout", role: "status", "aria-live": "polite"});
    const example = h("div", {class: "example"});
    const plot = s("svg", {viewBox: "0 0 420 240", class: "curve", role: "img",
                           "aria-label": "average top weight against d, undivided and divided"});
    body.append(scrollBox(table), h("div", {class: "row"}, h("label", {for: "d-slider"}, "d "), slider, label),
                say, h("div", {class: "s5-pictures"}, example,
                  h("div", {class: "curve-box"}, plot, saveButtons(() => plot, "s5_curve", "the curve"))));
    const start = s5.curve.findIndex(([d]) => d === 64);
    slider.value = String(start >= 0 ? start : 0);
    slider.oninput = () => draw();

    function drawCurve(at) {
      const W = 420, H = 240, L = 44, R = 12, T = 12, B = 36;
      const n = s5.curve.length, x = k => L + k / (n - 1) * (W - L - R);
      const y = v => T + (1 - v) * (H - T - B);
      plot.replaceChildren();
      for (const v of [0, 0.5, 1]) {
        plot.append(s("line", {x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid"}),
                    s("text", {x: L - 6, y: y(v) + 4, class: "tick end"}, String(v)));
      }
      s5.curve.forEach(([d], k) => plot.append(s("text", {x: x(k), y: H - B + 16, class: "tick"},
                                                 String(d))));
      plot.append(s("text", {x: (L + W - R) / 2, y: H - 4, class: "axis"}, "d"),
                  s("text", {x: 12, y: (T + H - B) / 2, class: "axis",
                             transform: `rotate(-90 12 ${(T + H - B) / 2})`}, "avg top weight"),
                  s("line", {x1: x(at), x2: x(at), y1: T, y2: H - B, class: "now-line"}));
      for (const [col, cls, name] of [[2, "undivided", "undivided"], [3, "divided", "divided by \u221ad"]]) {
        const pts = s5.curve.map((r, k) => `${x(k)},${y(r[col])}`).join(" ");
        plot.append(s("polyline", {points: pts, class: `line ${cls}`}));
        s5.curve.forEach((r, k) => plot.append(s("circle", {cx: x(k), cy: y(r[col]), r: 3,
                                                            class: `dot ${cls}`})));
        const last = s5.curve[n - 1][col];
        plot.append(s("text", {x: W - R, y: y(last) + (col === 2 ? -8 : 16), class: `tick end ${cls}`},
                      name));
      }
    }

    function draw() {
      const k = Number(slider.value), [d, std, un, sc] = s5.curve[k];
      const lessonRow = s5.lesson.some(([ld]) => ld === d);
      label.textContent = `= ${d}`;
      slider.setAttribute("aria-valuetext", `d = ${d}`);
      say.textContent = `d = ${d}: the dot products spread with std ${fixed(std, 2)} ` +
        `(\u221ad = ${fixed(Math.sqrt(d), 2)}); average top weight ${fixed(un)} undivided, ` +
        `${fixed(sc)} divided` + (lessonRow ? " (the lesson's own row)." : ` (same measurement, ` +
        `seed ${s5.extra_seed}).`);
      const [, scores] = s5.examples[k];
      const plain = softmaxRows([scores])[0];
      const divided = softmaxRows([scores.map(v => v / Math.sqrt(d))])[0];
      const names = scores.map((_, j) => `key ${j}`);
      const scoreBox = h("div"), plainBox = h("div"), dividedBox = h("div");
      const top = Math.max(...scores.map(Math.abs));
      bars(scoreBox, names.map((n, j) => [n, scores[j]]), -top, top, "#6b6b6b");
      bars(plainBox, names.map((n, j) => [n, plain[j]]), 0, 1, "#c0392b");
      bars(dividedBox, names.map((n, j) => [n, divided[j]]), 0, 1, "#2468b4");
      example.replaceChildren(
        h("h3", {}, `One row at d = ${d}: a random query against ${scores.length} random keys`),
        h("div", {class: "lives"},
          h("div", {class: "life", id: "s5-scores"}, h("h4", {}, "scores q \u00b7 k"), scoreBox),
          h("div", {class: "life", id: "s5-plain"},
            h("h4", {}, `softmax, undivided (largest: ${largest(plain, names)})`), plainBox),
          h("div", {class: "life", id: "s5-divided"},
            h("h4", {}, `softmax of scores / \u221a${d} (largest: ${largest(divided, names)})`),
            dividedBox)));
      drawCurve(k);
    }
    // The learner's sentence and wiring change nothing here: drawn once, then by its slider.
    return {section, update: change => { if (change === "start") draw(); }};
  };
});
