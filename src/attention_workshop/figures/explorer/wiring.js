// wiring.js: a weight matrix as editable cells, each a number box and a slider kept in step.
// Rows are the table's axes; columns are channels (W_Q, W_K) or axes again (W_V). A box that
// holds no number, or one past LIMIT, is refused out loud: the line under the table says so
// and which number the tables still use, and leaving the box puts that number back.
AW.define("wiring.js", ({h, text, fixed}) => {
  const SLIDER = {min: -3, max: 3, step: 0.1};
  const LIMIT = 1000;  // |entry|: past this a score overflows what the page can print readably

  function buildWiringEditor(name, rows, cols, get, set) {
    // get() -> current [rows, cols] matrix; set(i, j, value) stores one finite value.
    const table = h("table", {class: "wiring", id: `edit-${name}`});
    const status = h("p", {class: "status", id: `edit-${name}-status`, role: "status",
                           "aria-live": "polite"});
    table.append(h("caption", {}, name),
                 h("thead", {}, h("tr", {}, h("th", {scope: "col", class: "corner"}, "axis"),
                                  ...cols.map(c => h("th", {scope: "col"}, c)))));
    const body = h("tbody"), inputs = [];
    rows.forEach((r, i) => {
      const tr = h("tr", {}, h("th", {scope: "row"}, r));
      inputs.push(cols.map((c, j) => {
        const label = `${name} row ${r}, column ${c}`, cell = `${name}[${r}, ${c}]`;
        const box = h("input", {type: "number", step: "0.1", "aria-label": label,
                                "data-cell": `${name}:${i}:${j}`, "aria-describedby": status.id});
        const slider = h("input", {type: "range", min: SLIDER.min, max: SLIDER.max,
                                   step: SLIDER.step, "aria-label": `${label} (slider)`,
                                   "data-slider": `${name}:${i}:${j}`});
        const refuse = why => {
          box.setAttribute("aria-invalid", "true");
          text(status, `${cell}: ${why}; the tables still use ${get()[i][j]}, the last number. ` +
            "Type a number, or leave the box to put that one back.");
        };
        const accept = v => {
          box.setAttribute("aria-invalid", "false");
          text(status, "");
          slider.value = String(v);
          set(i, j, v);
        };
        box.oninput = () => {
          const v = box.value.trim() === "" ? NaN : Number(box.value);
          if (box.validity.badInput || !Number.isFinite(v)) refuse("not a number");
          else if (Math.abs(v) > LIMIT) refuse(`${fixed(v, 1)} is past \u00b1${LIMIT}`);
          else accept(v);
        };
        box.onchange = () => {  // leaving the box (or Enter): it shows the number in use
          if (box.getAttribute("aria-invalid") !== "true") return;
          box.value = String(get()[i][j]);
          box.setAttribute("aria-invalid", "false");
          text(status, `${cell}: kept ${get()[i][j]} (what you typed was not a number within ` +
            `\u00b1${LIMIT}).`);
        };
        slider.oninput = () => { box.value = slider.value; accept(Number(slider.value)); };
        tr.append(h("td", {}, box, slider));
        return [box, slider];
      }));
      body.append(tr);
    });
    table.append(body);
    return {
      element: h("div", {class: "editor"}, table, status),
      refresh() {  // show get()'s numbers (after a reset)
        const M = get();
        inputs.forEach((row, i) => row.forEach(([box, slider], j) => {
          box.value = String(M[i][j]); slider.value = String(M[i][j]);
          box.setAttribute("aria-invalid", "false");
        }));
        text(status, "");
      },
    };
  }

  return {buildWiringEditor, LIMIT};
});
