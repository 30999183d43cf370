// module5.js: Module 5, switch a head off and see what it did (SmolLM2, the Python run's own
// numbers: modules/module5.py's head sets, embedded by data_module5.py). Choose a set of heads
// to switch off: the loss on each half of [S14]'s repeated sequence beside every head on, and
// SmolLM2's greedy continuation of a phrase said twice beside the plain one, the first token
// that differs marked; then the sink heads' short value vectors at position 0 ([S19]).
// A page without Module 5's data has no such panel.
AW.panel("module5.js", ({h, panel, bars, readout, scrollBox, text, fixed}) => ctx => {
  const m5 = ctx.data.switch;
  if (!m5) return {section: document.createDocumentFragment(), update() {}};  // no panel, no link
  const {section, body} = panel("module5", "Module 5: switch a head off",
    "Module 4 found heads by their patterns; here a head's output is set to zero (before W_O " +
    "mixes the heads) and the model runs without it, so what the head did shows in what goes " +
    "missing.");
  const choices = m5.choices, plain = choices[0], P = m5.prompt_tokens.length;
  const named = heads => heads.map(([l, hd]) => `L${l}H${hd}`).join(", ");
  const nats = x => fixed(x, 2);  // as results.log [S18]-[S19] print them
  const q = t => `\u201c${t}\u201d`;  // a token in a sentence: "Ġwide"
  body.append(h("p", {class: "hint", id: "m5-model"}, `${m5.model}, computed in float64 by the ` +
    "workshop's own NumPy code, as Module 5 of run (results.log [S18]-[S19]). Heads are " +
    "written L18H6: layer 18, head 6, counting from 0; tokens are spelled as the tokenizer " +
    "spells them: \u0120 marks a space, \u010a a line break."));

  // --- The choice: one radio button per head set ---
  const radios = choices.map((c, i) => h("input", {type: "radio", name: "m5-choice",
    id: `m5-choice-${i}`, value: String(i), checked: i === 0}));
  const group = h("fieldset", {class: "m5-choices", id: "m5-choices"},
    h("legend", {}, "Switch off"),
    ...choices.map((c, i) => h("div", {class: "m5-choice"}, radios[i],
      h("label", {for: radios[i].id}, c.heads.length ? `the ${c.name}: ${named(c.heads)}` :
        `nothing (${c.name})`))));
  body.append(group);

  // --- (a) The loss on each half of [S14]'s sequence ---
  const lossSay = readout(), lossBars = h("div", {class: "m5-bars", id: "m5-bars"});
  lossSay.id = "m5-loss";
  const top = Math.max(...choices.flatMap(c => c.loss));
  body.append(h("h3", {}, `The loss on [S14]'s sequence: ${m5.half} random tokens, then the ` +
      "same again"),
    h("p", {class: "hint"}, "Next-token loss in nats (lower: better predicted). The first " +
      "half's tokens are new, so no head can know them; the repeat's all came before, so a " +
      "model that copies predicts them well."),
    lossSay, lossBars);

  // --- (b) The continuation, token by token beside the plain one ---
  const heading = ["new token", ...m5.choices[0].tokens.map((_, k) => String(k + 1))];
  const written = h("table", {class: "m5-table m5-written", id: "m5-written"},
    h("caption", {}, ""), h("thead", {}, h("tr", {}, ...heading.map((t, k) =>
      h("th", {scope: "col", class: k ? "" : "corner"}, t)))), h("tbody"));
  const notice = h("p", {class: "hint", id: "m5-notice", "aria-live": "polite"});
  body.append(h("h3", {}, `It writes: "${m5.prompt}" and ${m5.new_tokens} tokens more (greedy)`),
    h("p", {class: "hint"}, `The prompt is ${P} tokens: ${m5.prompt_tokens.join(" ")}. A ` +
      "phrase, then its start again: a model that copies writes what came next last time."),
    scrollBox(written), notice);

  // Where token k of a continuation copies: the token before it came earlier in the text, and
  // the token that followed it then is the one written now. -> [earlier position, token] or null
  function copied(tokens, k) {
    const seq = [...m5.prompt_tokens, ...tokens], p = P + k - 1;
    const j = seq.slice(0, p).lastIndexOf(seq[p]);
    return j >= 0 && seq[j + 1] === tokens[k] ? [j, seq[p]] : null;
  }
  const parts = c => c.ids.findIndex((id, k) => id !== plain.ids[k]);  // -1: the same tokens

  function row(label, tokens, mark) {
    return h("tr", {}, h("th", {scope: "row"}, label), ...tokens.map((t, k) =>
      h("td", {class: k === mark ? "differs" : ""}, t)));
  }

  function draw() {
    const i = radios.findIndex(r => r.checked), c = choices[i], off = c.heads.length > 0;
    // (a)
    const [f0, r0] = plain.loss, [f1, r1] = c.loss;
    text(lossSay, off ? `The ${c.name} off (${named(c.heads)}): ${nats(f1)} nats on the first ` +
      `half, ${nats(r1)} on the repeat; every head on: ${nats(f0)} and ${nats(r0)}.` :
      `Every head on: ${nats(f0)} nats on the first half, ${nats(r0)} on the repeat. Choose ` +
      "heads to switch off above.");
    const items = [["first half, every head on", f0, false], ["first half, heads off", f1, true],
                   ["repeat, every head on", r0, false], ["repeat, heads off", r1, true]]
      .filter(item => off || !item[2]);
    bars(lossBars, items, 0, top, null, 2);
    items.forEach((item, j) => lossBars.children[j].classList.toggle("off", item[2]));
    // (b)
    const k = parts(c);
    written.caption.textContent = off ? `every head on, then with the ${c.name} off` +
      (k >= 0 ? "; the first token that differs is outlined" : "") : "every head on";
    written.tBodies[0].replaceChildren(row("every head on", plain.tokens, -1),
      ...(off ? [row("heads off", c.tokens, k)] : []));
    const copy = copied(plain.tokens, 0);
    const plainSays = copy ? `With every head on, SmolLM2 copies: ${q(copy[1])} came before ` +
      `(position ${copy[0]}), followed by ${q(plain.tokens[0])}, and it writes ` +
      `${q(plain.tokens[0])} again.` : `With every head on, SmolLM2 writes ` +
      `${q(plain.tokens[0])} first.`;
    if (!off) text(notice, `What to notice: ${plainSays} Switch heads off to see which of them ` +
      "that copy needs.");
    else if (k < 0) text(notice, `What to notice: with the ${c.name} off, SmolLM2 writes the same ` +
      `${c.tokens.length} tokens as with every head on: these heads are not what it copies with ` +
      `(the repeat's loss: ${nats(r0)} \u2192 ${nats(r1)} nats).`);
    else text(notice, `What to notice: with the ${c.name} off, SmolLM2 parts from every head on ` +
      `at new token ${k + 1}: it writes ${q(c.tokens[k])} where every head on writes ` +
      `${q(plain.tokens[k])}` + (copied(plain.tokens, k) ? ` (the copy of what followed ` +
      `${q(copied(plain.tokens, k)[1])} last time)` : "") + `. On [S14]'s sequence the repeat's ` +
      `loss goes from ${nats(r0)} to ${nats(r1)} nats.`);
  }
  radios.forEach(r => { r.onchange = draw; });

  // --- Every set at once: the table a screen reader (or a comparison) reads in one go ---
  const all = h("table", {class: "m5-table m5-all", id: "m5-all"},
    h("caption", {}, "Every head set: the loss on each half of [S14]'s sequence (nats) and " +
      "the continuation"),
    h("thead", {}, h("tr", {}, ...["switched off", "first half", "repeat", "continuation"]
      .map(t => h("th", {scope: "col"}, t)))),
    h("tbody", {}, ...choices.map(c => h("tr", {},
      h("th", {scope: "row"}, c.heads.length ? `the ${c.name}` : "nothing"),
      h("td", {class: "number"}, nats(c.loss[0])), h("td", {class: "number"}, nats(c.loss[1])),
      h("td", {class: "tokens"}, c.tokens.join(" "))))));
  const listed = keep => choices.slice(1).filter(c => (parts(c) >= 0) === keep)
    .map(c => `the ${c.name}`).join(", ");
  const changed = listed(true), same = listed(false);
  body.append(h("h3", {}, "Every set at once"), scrollBox(all),
    h("p", {class: "hint", id: "m5-sets-say"}, (changed ? "Switched off, these change the " +
      `continuation: ${changed}. ` : "") + (same ? `These leave it as it was: ${same}.` : "")));

  // --- (c) The sink: weight parked where the value adds almost nothing ---
  const sinkBoxes = m5.sinks.map(sk => {
    const box = h("div", {class: "m5-bars m5-sink", id: `m5-sink-L${sk.head[0]}H${sk.head[1]}`});
    bars(box, [["position 0", sk.at0], ["the others (mean)", sk.rest]], 0,
         Math.max(...m5.sinks.map(x => x.rest)), null, 2);
    return h("div", {class: "life"}, h("h4", {}, `L${sk.head[0]}H${sk.head[1]} (KV head ` +
      `${sk.kv})`), box);
  });
  const first = m5.sinks[0];
  body.append(h("h3", {}, "The sink: where a head puts the weight it does not need"),
    h("p", {class: "hint"}, "A head's weights must add up to 1. A sink head puts most of " +
      "them on position 0, whose value vector is short, so that weight adds almost nothing: " +
      "the length |v| of each head's value vector on [S14]'s sequence, at position 0 and on " +
      "average at the other positions (results.log [S19])."),
    h("div", {class: "lives", id: "m5-sinks"}, ...sinkBoxes),
    h("p", {class: "hint", id: "m5-sink-say"}, `L${first.head[0]}H${first.head[1]} puts ` +
      `${fixed(first.weight)} of its weight on position 0 in "${m5.sink_text}" (on average over ` +
      "the tokens after the first); on [S14]'s sequence its value vector there is " +
      `${nats(first.at0)} long against ${nats(first.rest)} elsewhere, so what it adds is ` +
      "mostly that short vector."));

  draw();
  return {section, update() {}};  // the run's numbers: no control outside the panel moves them
});
