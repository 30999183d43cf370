// main.js: read the embedded data, build the panels, keep them in step with the controls, and
// expose window.explorer for the tests and the benchmark (the engine plus the page's state).

const DATA = JSON.parse(document.getElementById("data").textContent);

function start() {
  const table = new Map(DATA.table.words);  // word -> row on the named axes
  let startTokens = words(DATA.start.sentence).filter(w => table.has(w));
  if (!startTokens.length) startTokens = words(DATA.lesson.sentences[0]);
  const state = {
    tokens: startTokens, follow: followIndex(startTokens, DATA.start.word),
    wq: copy(DATA.wiring.w_q), wk: copy(DATA.wiring.w_k),
    wv: DATA.wiring.w_v ? copy(DATA.wiring.w_v) : null, scale: true, causal: false,
    pins: DATA.lesson.sentences.slice(), real: {layer: 0, head: 0},
  };
  const ctx = {data: DATA, table, axes: DATA.table.axes, state, current: null};
  const timing = {last: 0};

  function computeRaw() {  // Module 1 depends on the sentence only
    const X = state.tokens.map(w => table.get(w));
    ctx.current = {tokens: state.tokens, X, raw: simpleAttention(X), wired: null};
  }
  function computeWired() {
    const {X} = ctx.current;
    ctx.current.wired = wiredAttention(X, state.wq, state.wk, state.wv,
                                       {scale: state.scale, causal: state.causal});
  }
  const timed = fn => (...args) => {
    const t0 = performance.now();
    fn(...args);
    timing.last = performance.now() - t0;
  };

  ctx.setSentence = timed(tokens => {
    const followed = state.tokens[state.follow];
    state.tokens = tokens;
    state.follow = followIndex(tokens, followed);
    computeRaw(); computeWired();
    sentence.update();
    m1.rebuild(); m2.rebuild(); m1.update(); m2.update();
  });
  ctx.setFollow = timed(i => { state.follow = i; m1.updateFollow(); m2.updateFollow(); });
  ctx.wiringChanged = timed(() => { computeWired(); m2.update(); });

  const sentence = buildSentencePanel(ctx), m1 = buildModule1(ctx), m2 = buildModule2(ctx);
  const s5 = buildScaling(ctx), m3 = buildReal(ctx);
  document.getElementById("panels").append(sentence.section, m1.section, m2.section, s5.section,
                                           m3.section);
  m2.showWiring();
  computeRaw(); computeWired();
  sentence.update(); m1.rebuild(); m2.rebuild(); m1.update(); m2.update(); s5.update();

  window.explorer = {
    // The engine, for checking against Python: rows in, every intermediate matrix out.
    engine: {simpleAttention, wiredAttention, exploreRows, softmaxRows, fixed},
    // One case as `explore --format json` takes it: words of the table, a wiring, the switches.
    explore(c) {
      const X = words(c.sentence).map(w => table.get(w));
      return exploreRows(X, c.w_q || DATA.wiring.w_q, c.w_k || DATA.wiring.w_k, c.w_v || null,
                         {scale: c.scale !== false, causal: !!c.causal});
    },
    headsToward,
    state: () => JSON.parse(JSON.stringify(state)),
    current: () => ctx.current,
    lastRedrawMs: () => timing.last,
    data: DATA,
  };
}

start();
