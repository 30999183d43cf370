// save.js: a picture on the page saved as a file, from the page itself (nothing fetched): the
// SVG as it is drawn now (its text stays text, its look copied from the stylesheet into
// attributes so the file looks the same anywhere), or a PNG drawn from that SVG at twice its
// size. Used by the explorer's pictures and by the head view (head_view.py).
AW.define("save.js", ({h}) => {
  const SVG_NS = "http://www.w3.org/2000/svg";
  const LOOK = ["fill", "fill-opacity", "stroke", "stroke-width", "stroke-opacity",
                "stroke-dasharray", "opacity", "font-family", "font-size", "font-weight",
                "text-anchor", "dominant-baseline", "visibility"];

  function standalone(svg) {  // -> [SVG text, width, height]
    const copy = svg.cloneNode(true), box = svg.viewBox.baseVal;
    const width = box.width || svg.clientWidth, height = box.height || svg.clientHeight;
    const from = [svg, ...svg.querySelectorAll("*")], to = [copy, ...copy.querySelectorAll("*")];
    from.forEach((e, k) => {
      const look = getComputedStyle(e);  // nothing for a picture built apart (tableSvg)
      for (const name of LOOK) {
        const value = look.getPropertyValue(name);
        if (value && !to[k].hasAttribute(name)) to[k].setAttribute(name, value);
      }
      for (const name of ["tabindex", "role", "class", "id", "aria-pressed", "aria-label"]) {
        to[k].removeAttribute(name);
      }
    });
    copy.setAttribute("xmlns", SVG_NS);
    copy.setAttribute("width", width); copy.setAttribute("height", height);
    const paper = document.createElementNS(SVG_NS, "rect");
    for (const [k, v] of Object.entries({x: box.x, y: box.y, width, height, fill: "#fff"})) {
      paper.setAttribute(k, v);
    }
    copy.insertBefore(paper, copy.firstChild);
    return [new XMLSerializer().serializeToString(copy), width, height];
  }

  function download(blob, name) {
    const url = URL.createObjectURL(blob), link = h("a", {href: url, download: name, hidden: true});
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  function saveSvg(svg, name) {
    download(new Blob([standalone(svg)[0]], {type: "image/svg+xml"}), `${name}.svg`);
  }

  function savePng(svg, name, scale = 2) {
    const [text, width, height] = standalone(svg);
    const url = URL.createObjectURL(new Blob([text], {type: "image/svg+xml"}));
    const image = new Image();
    image.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = Math.ceil(width * scale); canvas.height = Math.ceil(height * scale);
      const draw = canvas.getContext("2d");
      draw.scale(scale, scale);
      draw.drawImage(image, 0, 0, width, height);
      URL.revokeObjectURL(url);
      canvas.toBlob(blob => download(blob, `${name}.png`), "image/png");
    };
    image.src = url;
  }

  // A table as it is drawn now (its caption, labels, numbers and cell colours) as an SVG picture,
  // built apart from the page. Example: tableSvg(weights.table) -> <svg> of rects and texts.
  function tableSvg(table) {
    const rows = [...table.rows], cols = Math.max(...rows.map(r => r.cells.length));
    const label = Math.max(4, ...rows.map(r => r.cells[0].textContent.length)) * 7.5 + 12;
    const cw = Math.max(58, ...rows.flatMap(r => [...r.cells].slice(1)
      .map(c => c.textContent.length * 7.5 + 12))), rh = 22, top = 24;
    const title = table.caption ? table.caption.textContent : "";
    const width = Math.max(label + (cols - 1) * cw, title.length * 7.5 + 8);
    const height = top + rows.length * rh + 4;
    const el = (tag, attrs, value) => {
      const e = document.createElementNS(SVG_NS, tag);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
      if (value !== undefined) e.textContent = value;
      return e;
    };
    const svg = el("svg", {viewBox: `0 0 ${width} ${height}`, "font-family": "monospace",
                           "font-size": "13px"});
    svg.append(el("text", {x: 2, y: 16, "font-weight": "600", "font-family": "sans-serif"},
                  title));
    rows.forEach((row, i) => [...row.cells].forEach((cell, j) => {
      const x = j ? label + (j - 1) * cw : 0, y = top + i * rh, look = getComputedStyle(cell);
      const paint = look.backgroundColor;
      if (cell.tagName === "TD") {
        svg.append(el("rect", {x, y, width: cw, height: rh, stroke: "#e3e5e8",
                               fill: paint && paint !== "rgba(0, 0, 0, 0)" ? paint : "#fff"}));
      }
      svg.append(el("text", {x: j ? x + cw - 6 : x + 4, y: y + 15, fill: look.color,
                             "text-anchor": j ? "end" : "start"}, cell.textContent));
    }));
    return svg;
  }

  // Two buttons that save what svg() returns now: "save as SVG", "save as PNG".
  function saveButtons(svg, name, what) {
    return h("span", {class: "save"},
      h("button", {type: "button", class: "save-svg", "aria-label": `save as SVG: ${what}`,
                   onclick: () => saveSvg(svg(), name)}, "save as SVG"),
      h("button", {type: "button", class: "save-png", "aria-label": `save as PNG: ${what}`,
                   onclick: () => savePng(svg(), name)}, "save as PNG"));
  }

  return {saveSvg, savePng, saveButtons, tableSvg};
});
