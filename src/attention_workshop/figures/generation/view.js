// generation.html: step through the tokens a decoder wrote; for one layer and head, the
// new token's attention over everything before it, as numbers and bars.
(() => {
  "use strict";
  const data = JSON.parse(document.getElementById("data").textContent);
  const $ = (id) => document.getElementById(id);
  const step = $("step"), layer = $("layer"), head = $("head");
  const shown = (t) => t;  // as the tokenizer spells it (\u0120 a space), as results.log does
  step.max = String(data.steps.length - 1);
  const option = (select, value, text) => {
    const o = document.createElement("option");
    o.value = String(value); o.textContent = text; select.appendChild(o);
  };
  for (let l = 0; l < data.layers; l++) option(layer, l, String(l));
  option(head, -1, "mean");
  for (let h = 0; h < data.heads; h++) option(head, h, String(h));
  layer.value = String(data.start_layer); head.value = String(data.start_head);
  $("start").textContent = `It opens on layer ${data.start_layer}, head ${data.start_head}: ` +
    "summed over every step, the head that put the most weight on a token other than the " +
    "first one (the sink), the token itself and the one before it, so a head that looks by " +
    "content. Pick any other with the menus.";

  function row(k, l, h) {  // the weights of new token k, layer l, head h (-1: their mean)
    const rows = data.steps[k].attention[l];  // [H][S]
    if (h >= 0) return rows[h].map((w) => w / 1000);
    return rows[0].map((_, j) => rows.reduce((sum, r) => sum + r[j], 0) / rows.length / 1000);
  }
  function draw() {
    const k = Number(step.value), l = Number(layer.value), h = Number(head.value);
    const s = data.steps[k], weights = row(k, l, h);
    $("prev").disabled = k === 0; $("next").disabled = k === data.steps.length - 1;
    $("written").textContent = `new token ${k + 1} of ${data.steps.length}: ` +
      `${JSON.stringify(shown(s.token))} (position ${data.prompt.length + k}), written from ` +
      `position ${data.prompt.length + k - 1}`;
    $("caption").textContent = `layer ${l}, ${h < 0 ? "mean of all heads" : "head " + h}: ` +
      "where it looked (each row an earlier token; the weights sum to 1)";
    const tokens = data.prompt.concat(data.steps.slice(0, k).map((x) => x.token));
    const body = $("weights").tBodies[0];
    body.replaceChildren();
    const top = Math.max(...weights);
    weights.forEach((w, j) => {
      const tr = document.createElement("tr");
      if (w === top) tr.className = "top";
      for (const text of [String(j), shown(tokens[j]), w.toFixed(3)]) {
        const td = document.createElement("td"); td.textContent = text; tr.appendChild(td);
      }
      const bar = document.createElement("td"), fill = document.createElement("span");
      bar.setAttribute("aria-hidden", "true"); fill.className = "bar";
      fill.style.width = `${Math.round(w * 100)}%`; bar.appendChild(fill); tr.appendChild(bar);
      body.appendChild(tr);
    });
    const text = $("text");
    text.replaceChildren();
    data.prompt.forEach((t) => { const p = document.createElement("span"); p.className = "prompt"; p.textContent = shown(t); text.appendChild(p); });
    data.steps.slice(0, k + 1).forEach((x, i) => {  // the text so far: up to this step
      const b = document.createElement("button");
      b.type = "button"; b.className = i === k ? "new chosen" : "new"; b.textContent = shown(x.token);
      b.setAttribute("aria-label", `new token ${i + 1}: ${shown(x.token)}`);
      b.addEventListener("click", () => { step.value = String(i); draw(); });
      text.appendChild(b);
    });
  }
  step.addEventListener("input", draw);
  layer.addEventListener("change", draw);
  head.addEventListener("change", draw);
  $("prev").addEventListener("click", () => { step.value = String(Math.max(0, Number(step.value) - 1)); draw(); });
  $("next").addEventListener("click", () => { step.value = String(Math.min(data.steps.length - 1, Number(step.value) + 1)); draw(); });
  draw();
})();
