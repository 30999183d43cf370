// dom.js: building the page. Every piece of text goes in through textContent (never innerHTML),
// so a word that holds markup (a closing script tag, an svg with onload) is shown as letters.
AW.define("dom.js", ({fixed}) => {
  function h(tag, attrs, ...children) {  // h("p", {class: "note"}, "text", otherNode) -> element
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k.startsWith("on")) e[k] = v;  // an event handler: a function, never a string
      else if (v !== false && v !== null && v !== undefined) e.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return e;
  }

  const SVG_NS = "http://www.w3.org/2000/svg";
  function s(tag, attrs, text) {  // an SVG element; `text` (if any) set with textContent
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined) e.setAttribute(k, v);
    }
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // A panel: a title, one plain sentence saying what it shows, then its content.
  function panel(id, title, sentence) {
    const body = h("div", {class: "body"});
    const section = h("section", {id, class: "panel", "aria-labelledby": id + "-title"},
                      h("h2", {id: id + "-title"}, title), h("p", {class: "lede"}, sentence), body);
    return {section, body};
  }

  // White to dark blue as a share goes from 0 to `top` (one hue, so it reads the same to every
  // common colour blindness); the number is written in white or black, whichever contrasts more
  // with the cell (WCAG relative luminance): at worst 4.58 to 1, past WCAG AA's 4.5.
  function heat(cell, value, top) {
    const t = top > 0 ? Math.max(0, Math.min(1, value / top)) : 0;
    const rgb = [[255, 23], [255, 78], [255, 140]].map(([a, b]) => Math.round(a + (b - a) * t));
    const lin = c => { const v = c / 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    const L = 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2]);
    cell.style.backgroundColor = `rgb(${rgb.join(", ")})`;
    cell.style.color = 1.05 / (L + 0.05) > (L + 0.05) / 0.05 ? "#fff" : "#000";
  }

  // A labelled matrix as a <table>: numbers as text in every cell, optionally a heatmap behind
  // them. Keyboard: the table takes focus once (Tab), arrow keys move between cells, and the
  // focused or hovered cell is announced through onCell(i, j) (the panel's readout line).
  // Columns have fixed widths (in characters of the monospace font) so that new numbers never
  // make the browser measure the whole table again; a column widens if a number outgrows it.
  // options.number and options.pad (characters) narrow them, and options.format(v) writes a
  // number its own way: a compact grid on a phone.
  class MatrixView {
    constructor(caption, rows, cols, options = {}) {
      this.options = options; this.active = null;
      this.table = h("table", {class: "matrix" + (options.heat ? " heat" : ""), tabindex: "0"});
      this.colgroup = h("colgroup", {}, h("col"));
      const head = h("tr", {}, h("th", {scope: "col", class: "corner"}, options.corner || ""));
      const body = h("tbody");
      this.table.append(h("caption", {}, caption), this.colgroup, h("thead", {}, head), body);
      body.onmouseover = e => {  // one listener for every cell
        const td = e.target.closest("td");
        if (td) this.announce(td.parentNode.rowIndex - 1, td.cellIndex - 1);
      };
      this.table.onkeydown = e => this.key(e);
      this.table.onfocus = () => this.announce(...(this.active || [0, 0]));
      this.table.onblur = () => this.mark(null);
      this.relabel(rows, cols);
    }

    // New labels (a new sentence): rows and columns are added or dropped at the end and the
    // cells that stay are reused, so one word more or less costs a row and a column, not a table.
    relabel(rows, cols) {
      this.mark(null);
      const head = this.table.tHead.rows[0], body = this.table.tBodies[0];
      while (head.cells.length - 1 < cols.length) {
        head.append(h("th", {scope: "col"})); this.colgroup.append(h("col"));
      }
      while (head.cells.length - 1 > cols.length) {
        head.lastChild.remove(); this.colgroup.lastChild.remove();
      }
      while (body.rows.length < rows.length) body.append(h("tr", {}, h("th", {scope: "row"})));
      while (body.rows.length > rows.length) body.lastChild.remove();
      this.cells = [...body.rows].map(tr => {
        while (tr.cells.length - 1 < cols.length) tr.append(h("td"));
        while (tr.cells.length - 1 > cols.length) tr.lastChild.remove();
        return [...tr.cells].slice(1);
      });
      const label = (th, text) => { if (th.textContent !== text) th.textContent = text; };
      cols.forEach((c, j) => label(head.cells[j + 1], c));
      rows.forEach((r, i) => label(body.rows[i].cells[0], r));
      this.rows = rows; this.cols = cols; this.active = null; this.values = null;
      const pad = this.options.pad ?? 2, number = this.options.number ?? MatrixView.NUMBER;
      this.widths = [Math.max(4, ...rows.map(r => r.length)) + pad,
                     ...cols.map(c => Math.max(number, c.length + pad))];
      this.size();
    }

    size() {
      [...this.colgroup.children].forEach((col, k) => { col.style.width = `${this.widths[k]}ch`; });
      this.table.style.width = `${this.widths.reduce((a, b) => a + b, 0)}ch`;
    }

    set(values, {top = 1, mask = null, digits = 3} = {}) {
      this.values = values; this.mask = mask;
      let grown = false;
      values.forEach((row, i) => row.forEach((v, j) => {
        const td = this.cells[i][j];
        if (mask && !mask[i][j]) {
          text(td, "\u2013"); setClass(td, "masked"); td.style.backgroundColor = "";
          td.style.color = "";
          return;
        }
        const shown = this.options.format ? this.options.format(v) : fixed(v, digits);
        const need = shown.length + (this.options.pad ?? 2);  // characters, padding included
        if (need > this.widths[j + 1]) { this.widths[j + 1] = need; grown = true; }
        text(td, shown);  // an unchanged cell is left alone: no new text to lay out
        setClass(td, "");
        if (this.options.heat) heat(td, v, top);
      }));
      if (grown) this.size();
    }

    key(e) {
      const moves = {ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1]};
      if (!moves[e.key]) return;
      e.preventDefault();
      const [i, j] = this.active || [0, 0], [di, dj] = moves[e.key];
      this.announce(Math.max(0, Math.min(this.rows.length - 1, i + di)),
                    Math.max(0, Math.min(this.cols.length - 1, j + dj)));
    }

    announce(i, j) {
      this.active = [i, j];
      this.mark([i, j]);
      if (this.options.onCell && this.values) this.options.onCell(i, j, this);
    }

    mark(at) {
      this.table.querySelectorAll("td.current").forEach(td => td.classList.remove("current"));
      if (at) this.cells[at[0]][at[1]].classList.add("current");
    }
  }

  // A readout line that screen readers announce when it changes.
  MatrixView.NUMBER = 7;  // characters: "-12.345"

  function readout(text) {
    return h("p", {class: "readout", role: "status", "aria-live": "polite"}, text || "\u00a0");
  }

  // The line that says one table cell in words, never stale: after every redraw it says the
  // last cell read again with the new numbers (same sentence), or its prompt again (the cells
  // of a new sentence are other words). Example: const say = cellReadout("Point at ...");
  // new MatrixView(..., {onCell: say.cell((i, j) => `...`)}); after a redraw, say.refresh().
  function cellReadout(prompt) {
    const line = readout(prompt);
    let last = null;  // the view whose cell the line says
    return {
      element: line,
      cell: words => (i, j, view) => { last = view; text(line, words(i, j)); },
      refresh() {
        if (last && last.active && last.values) last.announce(...last.active);
        else { last = null; text(line, prompt); }
      },
    };
  }

  // A table's box: it scrolls sideways when the table is wider than the screen, and then says so
  // (markScrolling, after every redraw and on resize, shows its note).
  function scrollBox(...children) {
    return h("div", {class: "mat"}, h("p", {class: "scroll-hint", hidden: true},
      "\u2190 wider than the screen: scroll the table sideways \u2192"), ...children);
  }

  function markScrolling(root) {
    for (const box of root.querySelectorAll(".mat")) {
      const note = box.querySelector(":scope > .scroll-hint");
      const wide = box.scrollWidth > box.clientWidth + 1;
      if (note && note.hidden === wide) note.hidden = !wide;
    }
  }

  // Horizontal bars with their numbers (`digits` decimals): [[label, value], ...] on one shared
  // scale lo..hi. The bars already there are reused (a slider's redraw changes widths and text,
  // not elements).
  function bars(container, items, lo, hi, colour, digits = 3) {
    while (container.children.length > items.length) container.lastChild.remove();
    while (container.children.length < items.length) {
      container.append(h("div", {class: "bar"}, h("span", {class: "label"}),
                         h("span", {class: "track"}, h("span", {class: "fill"})),
                         h("span", {class: "value"})));
    }
    const span = hi - lo || 1, zero = (0 - lo) / span * 100;
    items.forEach(([label, value], k) => {
      const [name, track, number] = container.children[k].children, fill = track.firstChild;
      text(name, label);
      text(number, fixed(value, digits));
      fill.style.left = Math.min(zero, (value - lo) / span * 100) + "%";
      fill.style.width = Math.abs(value) / span * 100 + "%";
      if (colour) fill.style.backgroundColor = colour;
    });
  }

  // Set an element's text only when it changes (no needless layout), or a list's items.
  function text(element, value) {
    if (element.textContent !== value) element.textContent = value;
  }
  function setClass(element, value) {
    if (element.className !== value) element.className = value;
  }

  function listItems(list, texts) {
    while (list.children.length > texts.length) list.lastChild.remove();
    while (list.children.length < texts.length) list.append(h("li"));
    texts.forEach((value, k) => text(list.children[k], value));
  }

  return {h, s, panel, heat, MatrixView, readout, cellReadout, scrollBox, markScrolling, bars,
          text, setClass, listItems};
});
