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
    const width = box && box.width ? box.width : svg.clientWidth;
    const height = box && box.height ? box.height : svg.clientHeight;
    const from = [svg, ...svg.querySelectorAll("*")], to = [copy, ...copy.querySelectorAll("*")];
    from.forEach((e, k) => {
      const look = getComputedStyle(e);
      for (const name of LOOK) to[k].setAttribute(name, look.getPropertyValue(name));
      for (const name of ["tabindex", "role", "class", "id", "aria-pressed", "aria-label"]) {
        to[k].removeAttribute(name);
      }
    });
    copy.setAttribute("xmlns", SVG_NS);
    copy.setAttribute("width", width); copy.setAttribute("height", height);
    const paper = document.createElementNS(SVG_NS, "rect");
    for (const [k, v] of Object.entries({x: box ? box.x : 0, y: box ? box.y : 0, width, height,
                                         fill: "#fff"})) paper.setAttribute(k, v);
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

  // Two buttons that save what svg() returns now: "save as SVG", "save as PNG".
  function saveButtons(svg, name, what) {
    return h("span", {class: "save"},
      h("button", {type: "button", class: "save-svg", "aria-label": `save as SVG: ${what}`,
                   onclick: () => saveSvg(svg(), name)}, "save as SVG"),
      h("button", {type: "button", class: "save-png", "aria-label": `save as PNG: ${what}`,
                   onclick: () => savePng(svg(), name)}, "save as PNG"));
  }

  return {saveSvg, savePng, saveButtons};
});
