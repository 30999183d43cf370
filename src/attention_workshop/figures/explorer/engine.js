// engine.js: the workshop's attention in plain float64 JavaScript, the same steps in the same
// order as the Python engine (attention.py), so every number agrees with `explore --format json`
// within 1e-12. Matrices are arrays of rows. Shapes: T words, d_model axes, d_k channels.
AW.define("engine.js", () => {
  function matmul(A, B) {  // [n, k] @ [k, m] -> [n, m]
    const n = A.length, k = B.length, m = k ? B[0].length : 0;
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      const row = new Array(m).fill(0), a = A[i];
      for (let t = 0; t < k; t++) {
        const x = a[t], b = B[t];
        for (let j = 0; j < m; j++) row[j] += x * b[j];
      }
      out[i] = row;
    }
    return out;
  }

  function transpose(A) {  // [n, m] -> [m, n]
    return A.length ? A[0].map((_, j) => A.map(row => row[j])) : [];
  }

  function causalMask(T) {  // T -> [T, T] booleans, true where i may look at j (j <= i)
    return Array.from({length: T}, (_, i) => Array.from({length: T}, (_, j) => j <= i));
  }

  // Each row becomes shares that are positive and sum to 1. Subtracting the row's largest entry
  // first changes nothing mathematically and keeps exp() from overflowing. A masked cell (mask
  // false) gets exactly 0. Example: softmaxRows([[0, 0.54, 0.99]]) -> [[0.185, 0.317, 0.498]].
  function softmaxRows(S, mask) {  // [T, T'] (, [T, T'] booleans) -> [T, T']
    return S.map((row, i) => {
      const keep = j => !mask || mask[i][j];
      let top = -Infinity;
      row.forEach((s, j) => { if (keep(j) && s > top) top = s; });
      const e = row.map((s, j) => (keep(j) ? Math.exp(s - top) : 0));
      let sum = 0;
      for (const v of e) sum += v;
      return e.map(v => v / sum);
    });
  }

  // Module 1: nothing learned. scores = X @ X.T, weights = row softmax, outputs = weights @ X.
  function simpleAttention(X) {  // [T, d_model] -> {scores [T, T], weights [T, T], outputs}
    const scores = matmul(X, transpose(X));
    const weights = softmaxRows(scores);
    return {scores, weights, outputs: matmul(weights, X)};
  }

  // Module 2: Q = X W_Q, K = X W_K, V = X W_V; weights = softmax(Q K^T / sqrt(d_k)) with the
  // optional causal mask; outputs = weights @ V. Like attention.py, the division is applied to Q
  // before the product. `scores` is the undivided Q @ K.T, as `explore` reports it.
  function wiredAttention(X, wq, wk, wv, options) {
    // [T, d_model], [d_model, d_k] x2, [d_model, d_model] | null -> queries, keys, values, ...
    const scale = !options || options.scale !== false, causal = !!(options && options.causal);
    const queries = matmul(X, wq), keys = matmul(X, wk);  // [T, d_k] each
    const values = wv ? matmul(X, wv) : X;  // [T, d_model]; W_V = identity keeps X itself
    const kT = transpose(keys);
    const scores = matmul(queries, kT);  // [T, T]
    const root = Math.sqrt(wq[0].length);
    const divided = scale ? matmul(queries.map(q => q.map(v => v / root)), kT) : scores;
    const mask = causal ? causalMask(X.length) : null;
    const weights = softmaxRows(divided, mask);
    return {queries, keys, values, scores, divided, mask, weights,
            outputs: matmul(weights, values)};
  }

  // Both heads on one list of rows: what the page draws and what the tests compare with Python.
  function exploreRows(X, wq, wk, wv, options) {
    return {raw: simpleAttention(X), wired: wiredAttention(X, wq, wk, wv, options)};
  }

  return {matmul, transpose, softmaxRows, simpleAttention, wiredAttention, exploreRows};
});
