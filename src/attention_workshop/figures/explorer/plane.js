// plane.js: Module 1's picture, live. The followed word's lookup row (gray) and its output in
// this sentence (red diamond) on the first two axes (water, money); kept sentences stay as
// hollow diamonds, so "the river bank" and "the money bank" split bank in two, as in bank_split.png.

const PLANE = {size: 340, pad: 44};

function buildPlane(ctx) {
  const svg = s("svg", {viewBox: `0 0 ${PLANE.size + 2 * PLANE.pad} ${PLANE.size + 2 * PLANE.pad}`,
                        class: "plane", role: "img", "aria-labelledby": "plane-title"});
  const title = h("p", {id: "plane-title", class: "readout", role: "status", "aria-live": "polite"});
  const pins = h("div", {class: "pins row", role: "group", "aria-label": "kept diamonds"});
  const keep = h("button", {type: "button", id: "keep", onclick: () => {
    const text = ctx.state.tokens.join(" ");
    if (!ctx.state.pins.includes(text)) ctx.state.pins = [...ctx.state.pins, text].slice(-4);
    update();
  }}, "keep this diamond");
  const element = h("div", {class: "plane-box"}, svg, title, h("div", {class: "row"}, keep, pins));

  function output(tokens, word) {  // the word's simple-attention output in another sentence
    const X = tokens.map(t => ctx.table.get(t));
    return simpleAttention(X).outputs[followIndex(tokens, word)];
  }

  function update() {
    const {tokens, X} = ctx.current, f = ctx.state.follow, word = tokens[f];
    const [ax, ay] = ctx.axes, z = ctx.current.raw.outputs[f], look = X[f];
    const kept = ctx.state.pins.map(text => [text, words(text)])
      .filter(([, t]) => t.includes(word) && t.every(w => ctx.table.has(w)))
      .map(([text, t]) => [text, output(t, word)]);
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
    // A label sits to the right of its point, or to the left in the frame's right third.
    const side = (p, text, cls, dy = 4) => {
      const left = px(p[0]) > PLANE.pad + PLANE.size * 0.65;
      return s("text", {x: px(p[0]) + (left ? -10 : 10), y: py(p[1]) + dy,
                        class: `label ${cls}${left ? " end" : ""}`}, text);
    };
    for (const {p, names} of spots.values()) {
      svg.append(s("circle", {cx: px(p[0]), cy: py(p[1]), r: 4, class: "word-dot"}),
                 side(p, `${names.join(", ")} (${fixed(p[0], 2)}, ${fixed(p[1], 2)})`, "", -6));
    }
    const diamond = (p, cls) => {
      const x = px(p[0]), y = py(p[1]), r = 7;
      return s("polygon", {points: `${x},${y - r} ${x + r},${y} ${x},${y + r} ${x - r},${y}`,
                           class: cls});
    };
    const here = tokens.join(" ");
    for (const [text, p] of kept) {
      if (text !== here) svg.append(diamond(p, "kept"), side(p, `"${text}"`, "kept-label", -10));
    }
    svg.append(s("line", {x1: px(look[0]), y1: py(look[1]), x2: px(z[0]), y2: py(z[1]),
                          class: "pull"}),
               s("circle", {cx: px(look[0]), cy: py(look[1]), r: 8, class: "lookup"}),
               s("text", {x: px(look[0]), y: py(look[1]) - 14, class: "label middle lookup-label"},
                 `${word}'s lookup (${fixed(look[0], 2)}, ${fixed(look[1], 2)})`),
               diamond(z, "now"),
               side(z, `"${here.length > 28 ? here.slice(0, 27) + "\u2026" : here}"`, "now-label", -6),
               side(z, `(${fixed(z[0])}, ${fixed(z[1])})`, "now-label", 10));
    title.textContent = `${word}: lookup row ${ax} ${fixed(look[0])}, ${ay} ${fixed(look[1])}` +
      ` \u2192 after simple attention in this sentence ${ax} ${fixed(z[0])}, ${ay} ${fixed(z[1])}.`;
    pins.replaceChildren(ctx.state.pins.length ? h("span", {class: "hint"}, "kept (click to remove):") : "",
                         ...ctx.state.pins.map(text => h("button", {type: "button", class: "pin",
      "aria-label": `stop showing "${text}"`,
      onclick: () => { ctx.state.pins = ctx.state.pins.filter(p => p !== text); update(); }},
      `"${text}" \u00d7`)));
  }
  return {element, update};
}
