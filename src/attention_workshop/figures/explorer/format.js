// format.js: numbers as text, exactly as the Python engine prints them.
AW.define("format.js", () => {
  // fixed(x, 3) is Python's f"{x:.3f}": the exact binary value rounded to `d` decimals, a tie going
  // to the even digit (toFixed would round it up: 0.0625 -> "0.063" where Python says "0.062").
  // A value that rounds to zero prints without a sign. Example: fixed(0.49845, 3) -> "0.498".
  function fixed(x, d = 3) {
    if (!Number.isFinite(x)) return String(x);
    let s = x.toFixed(d);
    const scaled = Math.abs(x) * 10 ** d;  // exact for a true tie (k + 1/2 is representable)
    if (scaled - Math.floor(scaled) === 0.5) {  // a tie, or within an ulp of one: look closely
      const exact = Math.abs(x).toFixed(100);  // every digit of the double, or enough to tell
      const point = exact.indexOf("."), tail = exact.slice(point + 1 + d);
      if (/^50*$/.test(tail)) {
        const kept = exact.slice(0, point + 1 + d).replace(/\.$/, "");
        if (Number(kept[kept.length - 1]) % 2 === 0) s = (x < 0 ? "-" : "") + kept;
      }
    }
    return s[0] === "-" && /^-[0.]*$/.test(s) ? s.slice(1) : s;
  }

  // The fewest decimals (at least d) at which a and b print differently, so that "a > b" is true as
  // printed. Example: decimalsApart(0.50004, 0.49996, 3) -> 4.
  function decimalsApart(a, b, d = 3) {
    let k = d;
    while (k < 17 && fixed(a, k) === fixed(b, k)) k++;
    return k;
  }

  // A word's name, with its place when the sentence holds it more than once.
  // Example: named(["the", "bank", "the"], 2) -> "the (word 3)".
  function named(labels, j) {
    return labels.indexOf(labels[j]) === labels.lastIndexOf(labels[j])
      ? labels[j] : `${labels[j]} (word ${j + 1})`;
  }

  // Where one row of weights puts its largest share, ties named as ties.
  // Example: largest([0.2, 0.4, 0.4], ["the", "lake", "bank"]) -> "a tie: lake, bank (0.400 each)".
  function largest(row, labels) {
    let top = -Infinity;
    for (const w of row) if (w > top) top = w;
    const at = row.map((w, j) => (w === top ? j : -1)).filter(j => j >= 0);
    if (at.length > 1) {
      return `a tie: ${at.map(j => named(labels, j)).join(", ")} (${fixed(top)} each)`;
    }
    let second = -Infinity, next = -1;
    row.forEach((w, j) => { if (w < top && w > second) { second = w; next = j; } });
    if (next >= 0 && fixed(top) === fixed(second)) {  // looks like a tie at 3 decimals, is not one
      const k = decimalsApart(top, second);
      return `${named(labels, at[0])} ${fixed(top, k)}, just above ${named(labels, next)} ` +
        fixed(second, k);
    }
    return `${named(labels, at[0])} ${fixed(top)}`;
  }

  // A ratio as a learner reads it: one decimal below 10,000, then a power of ten (never
  // "2.4666981883721585e+83"). Example: readable(2.4666981883721585e+83) -> "2.5 × 10⁸³";
  // readable(5.43) -> "5.4".
  function readable(x) {
    if (!Number.isFinite(x) || Math.abs(x) < 1e4) return fixed(x, 1);
    const [mantissa, power] = x.toExponential(1).split("e");
    const up = [..."\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"];
    const digits = String(Number(power)).replace("-", "\u207b").replace(/[0-9]/g, c => up[c]);
    return `${mantissa} \u00d7 10${digits}`;
  }

  return {fixed, decimalsApart, named, largest, readable};
});
