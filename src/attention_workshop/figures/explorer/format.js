// format.js: numbers as text, exactly as the Python engine prints them.

// fixed(x, 3) is Python's f"{x:.3f}": the exact binary value rounded to `d` decimals, a tie going
// to the even digit (toFixed would round it up: 0.0625 -> "0.063" where Python says "0.062").
// A value that rounds to zero prints without a sign. Example: fixed(0.49845, 3) -> "0.498".
function fixed(x, d = 3) {
  if (!Number.isFinite(x)) return String(x);
  let s = x.toFixed(d);
  const exact = Math.abs(x).toFixed(100);  // every digit of the double (or enough to rule out a tie)
  const point = exact.indexOf("."), tail = exact.slice(point + 1 + d);
  if (tail[0] === "5" && /^50*$/.test(tail)) {
    const kept = exact.slice(0, point + 1 + d).replace(/\.$/, "");
    if (Number(kept[kept.length - 1]) % 2 === 0) s = (x < 0 ? "-" : "") + kept;
  }
  return Number(s) === 0 ? s.replace("-", "") : s;
}

// The fewest decimals (at least d) at which a and b print differently, so that "a > b" is true as
// printed. Example: decimalsApart(0.50004, 0.49996, 3) -> 4.
function decimalsApart(a, b, d = 3) {
  let k = d;
  while (k < 17 && fixed(a, k) === fixed(b, k)) k++;
  return k;
}

// Where one row of weights puts its largest share, ties named as ties.
// Example: largest([0.2, 0.4, 0.4], ["the", "bank", "bank"]) -> "a tie: bank, bank (0.400 each)".
function largest(row, labels) {
  let top = -Infinity;
  for (const w of row) if (w > top) top = w;
  const at = row.map((w, j) => (w === top ? j : -1)).filter(j => j >= 0);
  if (at.length > 1) {
    return `a tie: ${at.map(j => labels[j]).join(", ")} (${fixed(top)} each)`;
  }
  let second = -Infinity, next = -1;
  row.forEach((w, j) => { if (w < top && w > second) { second = w; next = j; } });
  if (next >= 0 && fixed(top) === fixed(second)) {  // looks like a tie at 3 decimals, is not one
    const k = decimalsApart(top, second);
    return `${labels[at[0]]} ${fixed(top, k)}, just above ${labels[next]} ${fixed(second, k)}`;
  }
  return `${labels[at[0]]} ${fixed(top)}`;
}
