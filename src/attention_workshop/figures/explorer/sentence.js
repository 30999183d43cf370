// sentence.js: the learner's sentence, built from the table's words (buttons or typing), and the
// word whose story the panels follow. Modules 1 and 2 both read it.
AW.define("sentence.js", ({h, panel, text}) => {
  const MAX_WORDS = 16;

  // Python's string.punctuation: explore drops it around a word the table does not hold as it is.
  const PUNCTUATION = /^[!-\/:-@[-`{-~]+|[!-\/:-@[-`{-~]+$/g;

  // A sentence's words as explore reads them (explore/compute.py's words_of): split at spaces,
  // lower case, punctuation around a word dropped unless the table holds the word with it.
  // Example: words("The River, bank.", table) -> ["the", "river", "bank"].
  function words(text, table) {
    return text.toLowerCase().split(/\s+/)
      .map(w => (table && table.has(w) ? w : w.replace(PUNCTUATION, "")))
      .filter(w => w.length > 0);
  }

  function editDistance(a, b) {  // Levenshtein, for "did you mean" suggestions
    let prev = Array.from({length: b.length + 1}, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const row = [i];
      for (let j = 1; j <= b.length; j++) {
        row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      }
      prev = row;
    }
    return prev[b.length];
  }

  // Why a typed sentence cannot be shown, or "" when it can.
  // Example: problem(["the", "lak"], table) -> "'lak' is not in the table (closest: lake, bank)".
  function problem(tokens, table) {
    if (!tokens.length) return "The sentence is empty: type some words or click the word buttons.";
    if (tokens.length > MAX_WORDS) return `Up to ${MAX_WORDS} words fit on this page.`;
    const unknown = [...new Set(tokens.filter(w => !table.has(w)))];
    if (!unknown.length) return "";
    const known = [...table.keys()];
    const parts = unknown.map(w => {
      const close = known.map(k => [editDistance(w, k), k]).filter(([d]) => d <= 2)
        .sort((a, b) => a[0] - b[0]).slice(0, 3).map(([, k]) => k);
      return close.length ? `'${w}' (closest: ${close.join(", ")})` : `'${w}'`;
    });
    return `${parts.join(", ")} ${unknown.length === 1 ? "is" : "are"} not in the table; ` +
      "use the word buttons below.";
  }

  // The word the panels follow: `preferred` (its last occurrence) if present, else the last word.
  function followIndex(tokens, preferred) {
    const at = tokens.lastIndexOf(preferred);
    return at >= 0 ? at : tokens.length - 1;
  }

  return {words, problem, followIndex, MAX_WORDS};
});

AW.panel("sentence.js", ({h, panel, text, words, problem}) => {
  function buildSentencePanel(ctx) {
    const {section, body} = panel("sentence", "Your sentence",
      "Modules 1 and 2 below work on this sentence ([S5] draws random vectors, and Module 3 " +
      "shows the sentences its model was run on): click words to add them, or type a sentence " +
      "made of the table's words.");
    const input = h("input", {type: "text", id: "sentence-text", autocomplete: "off",
                              spellcheck: "false", value: ctx.state.tokens.join(" ")});
    const status = h("p", {class: "status", id: "sentence-status", role: "status",
                           "aria-live": "polite"});
    input.setAttribute("aria-describedby", status.id);
    // Enter, "show", a button: the box's sentence is shown, or what is wrong with it is said.
    // While typing, each sentence whose words are all in the table is shown at once (a word
    // half typed is not yet one), and the word followed stays the one the learner chose.
    const say = why => { text(status, why); input.setAttribute("aria-invalid", why ? "true" : "false"); };
    const show = (value, follow) => {
      const tokens = words(value, ctx.table), why = tokens.length ? problem(tokens, ctx.table) : "";
      say(tokens.length ? why : problem(tokens, ctx.table));
      if (!why) ctx.setSentence(tokens, follow);
    };
    input.oninput = () => {
      const tokens = words(input.value, ctx.table);
      if (!tokens.length || !problem(tokens, ctx.table)) show(input.value);
    };
    input.onkeydown = e => { if (e.key === "Enter") show(input.value); };
    input.onchange = () => show(input.value);  // leaving the box: say what is wrong, if anything
    // The buttons edit what the box holds (which may be empty, or not yet shown).
    const edit = (tokens, follow) => { input.value = tokens.join(" "); show(input.value, follow); };
    const wordButtons = h("div", {class: "words", role: "group", "aria-label": "add a word"});
    for (const w of ctx.table.keys()) {
      wordButtons.append(h("button", {type: "button", class: "word", "data-word": w,
        onclick: () => edit([...words(input.value, ctx.table), w])}, w));
    }
    const lessonWord = ctx.data.lesson.word;
    const presets = h("div", {class: "row"},
      ...ctx.data.lesson.sentences.map(sentence => h("button", {type: "button", class: "preset",
        onclick: () => edit(words(sentence, ctx.table), lessonWord)}, `"${sentence}"`)),
      h("button", {type: "button", id: "remove-last",
        onclick: () => edit(words(input.value, ctx.table).slice(0, -1))}, "remove the last word"),
      h("button", {type: "button", id: "clear", onclick: () => edit([])}, "clear"));
    const follow = h("select", {id: "follow"});
    follow.onchange = () => ctx.setFollow(Number(follow.value));
    body.append(
      h("div", {class: "row"}, h("label", {for: "sentence-text"}, "Sentence "), input,
        h("button", {type: "button", id: "show", onclick: () => show(input.value)}, "show")),
      status, presets, h("p", {class: "hint"}, "The table's words (click to add one):"),
      wordButtons,
      h("div", {class: "row"}, h("label", {for: "follow"}, "Follow the word "), follow,
        h("span", {class: "hint"}, " (its point on the plane, its three lives)")));
    return {
      section,
      update(change) {  // after the sentence or the followed word changed
        if (change === "wiring") return;
        const tokens = ctx.state.tokens;
        if (words(input.value, ctx.table).join(" ") !== tokens.join(" ")) input.value = tokens.join(" ");
        if (!tokens.length) say(problem(tokens, ctx.table));
        follow.replaceChildren(...tokens.map((t, i) => h("option", {value: String(i)},
          tokens.indexOf(t) === tokens.lastIndexOf(t) ? t : `${t} (word ${i + 1})`)));
        follow.disabled = !tokens.length;
        if (tokens.length) follow.value = String(ctx.state.follow);
      },
    };
  }
  return buildSentencePanel;
});
