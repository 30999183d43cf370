// sentence.js: the learner's sentence, built from the table's words (buttons or typing), and the
// word whose story the panels follow. Modules 1 and 2 both read it.

const MAX_WORDS = 16;

function words(text) {  // "The river  bank" -> ["the", "river", "bank"], like the engine's tokenize
  return text.toLowerCase().split(/\s+/).filter(w => w.length > 0);
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

function buildSentencePanel(ctx) {
  const {section, body} = panel("sentence", "Your sentence",
    "Every panel below works on this sentence: click words to add them, or type a sentence " +
    "made of the table's words.");
  const input = h("input", {type: "text", id: "sentence-text", autocomplete: "off",
                            spellcheck: "false", value: ctx.state.tokens.join(" ")});
  const status = h("p", {class: "status", role: "status", "aria-live": "polite"});
  const show = text => {
    const tokens = words(text), why = problem(tokens, ctx.table);
    status.textContent = why;
    input.setAttribute("aria-invalid", why ? "true" : "false");
    if (!why) ctx.setSentence(tokens);
  };
  input.oninput = () => { if (!problem(words(input.value), ctx.table)) show(input.value); };
  input.onkeydown = e => { if (e.key === "Enter") show(input.value); };
  // The buttons edit what the box holds (which may be empty, or not yet shown).
  const edit = tokens => { input.value = tokens.join(" "); show(input.value); };
  const wordButtons = h("div", {class: "words", role: "group", "aria-label": "add a word"});
  for (const w of ctx.table.keys()) {
    wordButtons.append(h("button", {type: "button", class: "word", "data-word": w,
      onclick: () => edit([...words(input.value), w])}, w));
  }
  const presets = h("div", {class: "row"},
    ...ctx.data.lesson.sentences.map(text => h("button", {type: "button", class: "preset",
      onclick: () => edit(words(text))}, `"${text}"`)),
    h("button", {type: "button", id: "remove-last",
      onclick: () => edit(words(input.value).slice(0, -1))}, "remove the last word"),
    h("button", {type: "button", id: "clear", onclick: () => { input.value = ""; show(""); }},
      "clear"));
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
    update() {  // after the sentence or the followed word changed
      const tokens = ctx.state.tokens;
      if (words(input.value).join(" ") !== tokens.join(" ")) input.value = tokens.join(" ");
      follow.replaceChildren(...tokens.map((t, i) => h("option", {value: String(i)},
        tokens.indexOf(t) === tokens.lastIndexOf(t) ? t : `${t} (word ${i + 1})`)));
      follow.value = String(ctx.state.follow);
    },
  };
}
