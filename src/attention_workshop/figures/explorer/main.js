// main.js: read the embedded data, build the registered panels (AW.panels, in SCRIPTS order)
// and a link to each, keep them in step with the controls, and expose window.explorer for the
// tests and the benchmark (the engine plus the page's state).
//
// A panel's update(change) is called with "start" once, then "sentence" (a new sentence: new
// labels), "follow" (another word followed) or "wiring" (W_Q, W_K, W_V or a switch moved);
// ctx.current holds this sentence's tokens, X and both heads' matrices, already computed.
AW.define("main.js", ({words, followIndex, simpleAttention, wiredAttention, exploreRows,
                       softmaxRows, fixed, headsToward, copy, h, markScrolling}) => {
  const DATA = JSON.parse(document.getElementById("data").textContent);
  const table = new Map(DATA.table.words);  // word -> row on the named axes
  let startTokens = words(DATA.start.sentence, table).filter(w => table.has(w));
  if (!startTokens.length) startTokens = words(DATA.lesson.sentences[0], table);
  const state = {
    // want: the word the learner chose to follow; follow: where it is in this sentence (its
    // last place, else the last word). A sentence without it follows another word for now and
    // the next sentence that has it follows it again, so typing "the money bank" key by key
    // still ends on bank.
    tokens: startTokens, want: DATA.start.word, follow: followIndex(startTokens, DATA.start.word),
    wq: copy(DATA.wiring.w_q), wk: copy(DATA.wiring.w_k),
    wv: DATA.wiring.w_v ? copy(DATA.wiring.w_v) : null, scale: true, causal: false,
    pins: DATA.lesson.sentences.slice(), real: {layer: 0, head: 0},
  };
  const ctx = {data: DATA, table, axes: DATA.table.axes, state, current: null};
  const timing = {last: 0};

  function compute() {
    const X = state.tokens.map(w => table.get(w));
    ctx.current = {tokens: state.tokens, X, raw: simpleAttention(X),
                   wired: wiredAttention(X, state.wq, state.wk, state.wv,
                                         {scale: state.scale, causal: state.causal})};
  }
  let panels = [];
  const root = document.getElementById("panels");
  const changed = change => {
    const t0 = performance.now();
    if (change !== "follow") compute();
    for (const p of panels) p.update(change);
    markScrolling(root);
    timing.last = performance.now() - t0;
  };
  ctx.setSentence = (tokens, want) => {
    state.tokens = tokens;
    if (want) state.want = want;
    state.follow = followIndex(tokens, state.want);
    changed("sentence");
  };
  ctx.setFollow = i => { state.follow = i; state.want = state.tokens[i]; changed("follow"); };
  ctx.wiringChanged = () => changed("wiring");

  compute();
  panels = AW.panels.map(({build}) => build(ctx));
  root.append(...panels.map(p => p.section));
  document.getElementById("nav").append(...panels.map(p => p.section)
    .filter(section => section.tagName === "SECTION").map(section => h("a",
      {href: `#${section.id}`}, section.querySelector("h2").textContent.split(":")[0])));
  changed("start");
  window.addEventListener("resize", () => markScrolling(root));

  window.explorer = {
    // The engine, for checking against Python: rows in, every intermediate matrix out.
    engine: {simpleAttention, wiredAttention, exploreRows, softmaxRows, fixed},
    // One case as `explore --format json` takes it: words of the table, a wiring, the switches.
    explore(c) {
      const X = words(c.sentence, table).map(w => table.get(w));
      return exploreRows(X, c.w_q || DATA.wiring.w_q, c.w_k || DATA.wiring.w_k, c.w_v || null,
                         {scale: c.scale !== false, causal: !!c.causal});
    },
    words: text => words(text, table),
    headsToward,
    state: () => JSON.parse(JSON.stringify(state)),
    current: () => ctx.current,
    lastRedrawMs: () => timing.last,
    data: DATA,
  };
  return {};
});
