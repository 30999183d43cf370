// wiring.js: a weight matrix as editable cells, each a number box and a slider kept in step.
// Rows are the table's axes; columns are channels (W_Q, W_K) or axes again (W_V).

const SLIDER = {min: -3, max: 3, step: 0.1};

function buildWiringEditor(name, rows, cols, get, set) {
  // get() -> current [rows, cols] matrix; set(i, j, value) stores one finite value.
  const table = h("table", {class: "wiring", id: `edit-${name}`});
  table.append(h("caption", {}, name),
               h("thead", {}, h("tr", {}, h("th", {scope: "col", class: "corner"}, "axis"),
                                ...cols.map(c => h("th", {scope: "col"}, c)))));
  const body = h("tbody"), inputs = [];
  rows.forEach((r, i) => {
    const tr = h("tr", {}, h("th", {scope: "row"}, r));
    inputs.push(cols.map((c, j) => {
      const label = `${name} row ${r}, column ${c}`;
      const box = h("input", {type: "number", step: "0.1", "aria-label": label,
                              "data-cell": `${name}:${i}:${j}`});
      const slider = h("input", {type: "range", min: SLIDER.min, max: SLIDER.max,
                                 step: SLIDER.step, "aria-label": `${label} (slider)`,
                                 "data-slider": `${name}:${i}:${j}`});
      box.oninput = () => {
        const v = box.value.trim() === "" ? NaN : Number(box.value);
        box.setAttribute("aria-invalid", Number.isFinite(v) ? "false" : "true");
        if (!Number.isFinite(v)) return;  // keep the last good number until this one is
        slider.value = String(v);
        set(i, j, v);
      };
      slider.oninput = () => { box.value = slider.value; box.removeAttribute("aria-invalid");
                               set(i, j, Number(slider.value)); };
      tr.append(h("td", {}, box, slider));
      return [box, slider];
    }));
    body.append(tr);
  });
  table.append(body);
  return {
    element: table,
    refresh() {  // show get()'s numbers (after a reset)
      const M = get();
      inputs.forEach((row, i) => row.forEach(([box, slider], j) => {
        box.value = String(M[i][j]); slider.value = String(M[i][j]);
        box.removeAttribute("aria-invalid");
      }));
    },
  };
}
