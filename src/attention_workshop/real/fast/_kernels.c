/* The float32 element-wise steps of a transformer layer, each in one pass over memory, and a
   generated token's products from a GGUF file's blocks.

   numpy runs gelu as ~20 passes over the MLP's [d_mlp, T] activations, a softmax as three or
   four over the scores and a layer norm as a dozen short calls; here each is one loop that
   finds its data in cache, vectorised by the compiler and run without the GIL, so two
   threads' parts run at once. Each loop is compiled three times (x86-64-v4: AVX-512 with
   fused multiply-adds; v3: AVX2 and FMA; the baseline) and the CPU's best is picked when the
   module loads (what each gains: docs/benchmarks.md).

   Same formulas as ops.py's numpy passes (kernels.py says which run): Abramowitz & Stegun
   7.1.26 for gelu's erfc, softmax with the row's max subtracted, layer norm centred first.
   NaN and infinity come out as numpy's passes give them. As with the BLAS, the last bit of a
   result may differ between CPUs (FMA or not).

   Arrays come through the buffer protocol: C-contiguous float32, the written ones writable. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* One copy of each loop per x86-64 level, the CPU's best picked at load (GNU ifunc). */
#if defined(__x86_64__) && defined(__linux__) && !defined(__clang__) && __GNUC__ >= 12
#define VECTOR_WIDTHS \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define VECTOR_WIDTHS
#endif

/* Loops written for one instruction set each, picked by the CPU at run time. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define BLOCK_SIMD 1
#define AVX512 __attribute__((target("avx512f,avx2,fma")))
#define AVX2 __attribute__((target("avx2,fma")))
#endif

/* The loops' versions, the CPU's best picked at run time. */
enum { PLAIN_C, WITH_AVX2, WITH_AVX512 };
static const char *const BLOCK_VERSIONS[] = {"c", "avx2", "avx512"};

static int has_version(int version) {
#ifdef BLOCK_SIMD
    if (version == WITH_AVX512) return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    if (version == WITH_AVX2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    return version == PLAIN_C;
}

/* exp_f's steps, one expression each, also written out for vectors (exp8): kf = round(xc /
   ln 2), r = xc - kf ln 2; p from its first coefficient to p(r). */
#define EXP_REDUCED(xc, kf, r)                                    \
    kf = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f; \
    r = xc - kf * 0.693359375f;                                   \
    r = r - kf * -2.12194440e-4f
#define EXP_POLYNOMIAL(p, r)          \
    p = p * r + 1.3981999507e-3f;     \
    p = p * r + 8.3334519073e-3f;     \
    p = p * r + 4.1665795894e-2f;     \
    p = p * r + 1.6666665459e-1f;     \
    p = p * r + 5.0000001201e-1f;     \
    p = p * r * r + r + 1.0f

/* exp(x) = 2^k p(r), k = round(x / ln 2), r = x - k ln 2 in [-ln 2 / 2, ln 2 / 2] (ln 2 in two
   parts, so r is exact), p Cephes' degree-6 fit (relative error < 2e-7). Above 88.72: +inf;
   below -87.34: 0 (a float32 exp's smallest normal result); NaN stays NaN. No branches, so the
   loops calling it vectorise. */
static inline float exp_f(float x) {
    float xc = x == x ? x : 0.0f;                             /* NaN: any number, answered below */
    xc = xc > 88.0f ? 88.0f : (xc < -87.0f ? -87.0f : xc);  /* 2^k stays a normal float */
    float kf, r, p = 1.9875691500e-4f;
    EXP_REDUCED(xc, kf, r);
    EXP_POLYNOMIAL(p, r);
    int32_t bits = ((int32_t)kf + 127) << 23;  /* 2^k */
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    float e = p * scale;
    e = x > 88.72283f ? INFINITY : e;
    e = x < -87.33654f ? 0.0f : e;
    return x == x ? e : x;
}

/* Where GCC left a VECTOR_WIDTHS loop one float at a time on AVX2 (softmax_rows_avx2 says
   why), an AVX2 version of it runs instead: the same numbers to the bit. */
#ifdef BLOCK_SIMD
static void softmax_rows_avx2(float *s, Py_ssize_t rows, Py_ssize_t n, float scale);
static void gelu_avx2(float *x, Py_ssize_t n);
static void silu_times_avx2(float *g, const float *u, Py_ssize_t n);
static int by_avx2(void) {  /* AVX2 and FMA, no AVX-512 */
    static int answer = -1;
    if (answer < 0) answer = has_version(WITH_AVX2) && !has_version(WITH_AVX512);
    return answer;
}
#define OR_AVX2(call)          \
    if (by_avx2()) {           \
        call;                  \
        return;                \
    }
#else
#define OR_AVX2(call)
#endif

/* x Phi(x) = max(x, 0) - |x| Phi(-|x|), Phi(-|x|) = erfc(z) / 2 with z = |x| / sqrt(2), and
   erfc(z) = t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-z^2), t = 1 / (1 + p z). */
VECTOR_WIDTHS static void gelu_f32(float *x, Py_ssize_t n) {  /* x [n], in place */
    OR_AVX2(gelu_avx2(x, n))
    const float p = 0.3275911f, a1 = 0.254829592f, a2 = -0.284496736f, a3 = 1.421413741f,
                a4 = -1.453152027f, a5 = 1.061405429f;
    for (Py_ssize_t i = 0; i < n; i++) {
        float v = x[i], a = fabsf(v);
        float z = a * 0.70710678118654752f;
        float t = 1.0f / (1.0f + p * z);
        float erfc = t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5)))) * exp_f(-(z * z));
        float positive = v > 0.0f ? v : (v == v ? 0.0f : v);  /* numpy's maximum(v, 0) */
        x[i] = positive - a * (0.5f * erfc);
    }
}

/* Llama's gated activation, g = silu(g) u = g / (1 + e^-g) u, in place on g [n]: layers.silu
   writes sigmoid through tanh, the same function; e^-g past float32's range gives -0 (as
   numpy's gives 0), and NaN and infinity come out as there. */
VECTOR_WIDTHS static void silu_times_f32(float *g, const float *u, Py_ssize_t n) {
    OR_AVX2(silu_times_avx2(g, u, n))
    for (Py_ssize_t i = 0; i < n; i++) g[i] = g[i] / (1.0f + exp_f(-g[i])) * u[i];
}

/* The largest of row [n], NaN skipped (it spreads through the softmax's sum anyway): 16 lanes
   as one vector (GNU C vector extension), one compare and blend per 16 floats. */
typedef float floats16 __attribute__((vector_size(64)));
typedef int32_t ints16 __attribute__((vector_size(64)));

VECTOR_WIDTHS static float row_max(const float *row, Py_ssize_t n) {
    floats16 top, v;
    for (int j = 0; j < 16; j++) top[j] = -INFINITY;
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) {
        memcpy(&v, row + i, sizeof v);
        ints16 bigger = v > top;
        top = (floats16)(((ints16)v & bigger) | ((ints16)top & ~bigger));
    }
    float m = -INFINITY;
    for (int j = 0; j < 16; j++) m = top[j] > m ? top[j] : m;
    for (; i < n; i++) m = row[i] > m ? row[i] : m;
    return m;
}

/* Each row of s [rows, n] becomes softmax(scale row) = exp(scale (row - max)) / sum (scale > 0,
   so the max of scale row is scale max): attention's 1 / sqrt(d_head) at no extra pass. The
   sum runs in 16 lanes, added in a fixed order. */
VECTOR_WIDTHS static void softmax_rows_f32(float *s, Py_ssize_t rows, Py_ssize_t n, float scale) {
    OR_AVX2(softmax_rows_avx2(s, rows, n, scale))
    for (Py_ssize_t r = 0; r < rows; r++) {
        float *row = s + r * n, m = row_max(row, n), lanes[16] = {0.0f}, total = 0.0f;
        Py_ssize_t i = 0;
        for (; i + 16 <= n; i += 16)
            for (int j = 0; j < 16; j++) {
                float e = exp_f((row[i + j] - m) * scale);
                row[i + j] = e;
                lanes[j] += e;
            }
        for (; i < n; i++) {
            float e = exp_f((row[i] - m) * scale);
            row[i] = e;
            lanes[i % 16] += e;
        }
        for (int j = 0; j < 16; j++) total += lanes[j];
        float share = 1.0f / total;
        for (i = 0; i < n; i++) row[i] *= share;
    }
}

/* A decoder's causal softmax: s is [heads, T, S] scores of T new tokens against S keys (the
   last T of them the new tokens'); row t keeps its first seen + t + 1 scores (every key up to
   its own; seen = S - T, or fewer where the rows are a block of a longer prompt's: fast/
   llama.py's row blocks) and the rest become 0, which they would be as exp(-inf) after a
   mask: each kept score lands in the same lane as in softmax_rows, so the weights are the
   same bits, without the mask's pass and with half the exponentials at S = T. */
VECTOR_WIDTHS static void causal_softmax_f32(float *s, Py_ssize_t heads, Py_ssize_t T,
                                             Py_ssize_t S, float scale, Py_ssize_t seen) {
    for (Py_ssize_t h = 0; h < heads; h++)
        for (Py_ssize_t t = 0; t < T; t++) {
            float *row = s + (h * T + t) * S;
            Py_ssize_t keep = seen + t + 1;
            softmax_rows_f32(row, 1, keep, scale);
            for (Py_ssize_t i = keep; i < S; i++) row[i] = 0.0f;
        }
}

/* Layer norm of each column of x [d, T] (a token's features, feature-major) into out (which
   may be x): centre, average the squares, scale by 1 / sqrt(var + eps), then weight and bias
   per feature. Rows are read in order, so each loop runs along the T tokens at once. mean and
   inv are [T] scratch. */
/* Returns 1 if a column's sum of squares overflowed (inf or NaN): its output would be the bias,
   finite but wrong, so the caller refuses it (fast/ops.py layer_norm_columns). */
VECTOR_WIDTHS static int layer_norm_columns_f32(const float *x, float *out, const float *weight,
                                                const float *bias, float eps, Py_ssize_t d,
                                                Py_ssize_t T, float *mean, float *inv) {
    for (Py_ssize_t t = 0; t < T; t++) mean[t] = inv[t] = 0.0f;
    for (Py_ssize_t i = 0; i < d; i++)
        for (Py_ssize_t t = 0; t < T; t++) mean[t] += x[i * T + t];
    for (Py_ssize_t t = 0; t < T; t++) mean[t] /= (float)d;
    for (Py_ssize_t i = 0; i < d; i++)
        for (Py_ssize_t t = 0; t < T; t++) {
            float c = x[i * T + t] - mean[t];
            out[i * T + t] = c;
            inv[t] += c * c;
        }
    int overflowed = 0;
    for (Py_ssize_t t = 0; t < T; t++) {
        overflowed |= !(inv[t] <= FLT_MAX);
        inv[t] = 1.0f / sqrtf(inv[t] * (1.0f / (float)d) + eps);
    }
    for (Py_ssize_t i = 0; i < d; i++)
        for (Py_ssize_t t = 0; t < T; t++)
            out[i * T + t] = out[i * T + t] * inv[t] * weight[i] + bias[i];
    return overflowed;
}

/* --- A weight matrix as the GGUF file stores it, times one token's vector --- */

/* W [rows, n] in blocks of 32 numbers along each row (n a multiple of 32), block b of row r
   with its scale d = scales[r, b] (and, for 4-bit blocks, its offset m = mins[r, b]):
   - 4 bits (GGUF Q4_1): the number is d q + m, q = 0..15; the block's 16 bytes hold its first
     16 numbers in their low halves, the next 16 in their high halves;
   - 8 bits (GGUF Q8_0): the number is d q, q = -128..127, one byte each.
   Each number is made exactly as gguf's dequantize makes it in float32 (d q is exact: 11
   bits of d times at most 8 of q; then one rounding for + m), so out = W x is the float32
   product with those very weights, only summed in another order (AVX2's loop takes d and m
   out of each block's sum: the same weights, other roundings). A token reads 0.75 (4 bits)
   or 1.125 bytes (8 bits) per weight here, against 4 from the float32 matrix
   (docs/benchmarks.md). Three versions: AVX-512, AVX2 (each picked only if the CPU has it),
   and plain C. */

static void q4_rows_c(const uint8_t *q, const float *scales, const float *mins, const float *x,
                      float *out, Py_ssize_t rows, Py_ssize_t n) {
    Py_ssize_t nb = n / 32;
    for (Py_ssize_t r = 0; r < rows; r++) {
        const uint8_t *qr = q + r * (n / 2);
        float lanes[32] = {0.0f}, total = 0.0f;
        for (Py_ssize_t b = 0; b < nb; b++) {
            float d = scales[r * nb + b], m = mins[r * nb + b];
            for (int j = 0; j < 16; j++) {
                lanes[j] += (d * (float)(qr[b * 16 + j] & 15) + m) * x[b * 32 + j];
                lanes[16 + j] += (d * (float)(qr[b * 16 + j] >> 4) + m) * x[b * 32 + 16 + j];
            }
        }
        for (int j = 0; j < 32; j++) total += lanes[j];
        out[r] = total;
    }
}

static void q8_rows_c(const int8_t *q, const float *scales, const float *x, float *out,
                      Py_ssize_t rows, Py_ssize_t n) {
    Py_ssize_t nb = n / 32;
    for (Py_ssize_t r = 0; r < rows; r++) {
        float lanes[32] = {0.0f}, total = 0.0f;
        for (Py_ssize_t b = 0; b < nb; b++) {
            float d = scales[r * nb + b];
            for (int j = 0; j < 32; j++) lanes[j] += (d * (float)q[r * n + b * 32 + j]) * x[b * 32 + j];
        }
        for (int j = 0; j < 32; j++) total += lanes[j];
        out[r] = total;
    }
}

#ifdef BLOCK_SIMD

/* Rows AHEAD rows further on are asked for (software prefetch) while a row is summed: a
   token's step reads 111 MB of blocks once, from memory, and the hardware's own prefetcher,
   which stops at each 4 KB page, left the loop waiting for it (docs/benchmarks.md: all 211
   products of a token, one thread, 12.6 -> 8.4 ms on the Xeon). Each call asks for the 64
   bytes of row `ahead` (clamped to the last row) at byte offset `at` of each of its arrays. */
#define AHEAD 16
static inline void prefetch_row(const void *base, Py_ssize_t row_bytes, Py_ssize_t ahead,
                                Py_ssize_t at) {
    _mm_prefetch((const char *)base + ahead * row_bytes + at, _MM_HINT_T0);
}
#define AHEAD_OF(r, rows) ((r) + AHEAD < (rows) ? (r) + AHEAD : (rows) - 1)

/* For row `ahead` at block b (blocks of block_bytes, rows of row_bytes): 64 bytes of it
   wherever b starts a cache line, and at every 16th block its scales (and offsets, mins
   non-NULL: 4-bit blocks); PREFETCH_PAIR does it for two rows. Macros: written as a
   function, GCC 12 dropped the prefetches from the loops it was inlined into (a token's
   products 1.5x slower). */
#define PREFETCH_ROW(q, scales, mins, row_bytes, block_bytes, nb, ahead, b)                \
    do {                                                                                  \
        if (((b) * (block_bytes)) % 64 == 0) {                                            \
            prefetch_row(q, row_bytes, ahead, (b) * (block_bytes));                       \
            if (((b) & 15) == 0) {                                                        \
                prefetch_row(scales, (nb) * 4, ahead, (b) * 4);                           \
                if (mins) prefetch_row(mins, (nb) * 4, ahead, (b) * 4);                   \
            }                                                                             \
        }                                                                                 \
    } while (0)
#define PREFETCH_PAIR(q, scales, mins, row_bytes, block_bytes, nb, ahead0, ahead1, b)      \
    do {                                                                                  \
        PREFETCH_ROW(q, scales, mins, row_bytes, block_bytes, nb, ahead0, b);             \
        PREFETCH_ROW(q, scales, mins, row_bytes, block_bytes, nb, ahead1, b);             \
    } while (0)

/* Two rows at a time: each block of x is loaded once for both, and their four chains of
   fused multiply-adds run side by side. A block's 16 possible weights d k + m (k = 0..15)
   are made once, one fused multiply-add, and each nibble picks its own (vpermps reads an
   index's low 4 bits only: the 16 bytes widened to 32 bits pick by their low nibbles
   as they are, by their high ones shifted 4): 7 vector instructions a block where widening
   each nibble to a float took 11, the same weights to the bit (fma(d, k, m) either way).
   A pair is its own loop (q4_pair), with its rows' addresses made once: the loop that took
   one or two rows as a count had kept that choice, and its indices, in every block (AMD
   EPYC Zen 5, SmolLM2's shapes, one core: 31-36 -> 37-43 G weights a second; the same
   bits). An odd count's last row is paired with itself (the same sums, twice). */
AVX512 static inline void q4_pair(const uint8_t *q, const float *scales, const float *mins,
                                  const float *x, float *out, Py_ssize_t r, Py_ssize_t s,
                                  Py_ssize_t rows, Py_ssize_t n) {  /* out[r], out[s] */
    Py_ssize_t nb = n / 32, row_bytes = n / 2;
    const __m512 k16 = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const uint8_t *q0 = q + r * row_bytes, *q1 = q + s * row_bytes;
    const float *d0 = scales + r * nb, *d1 = scales + s * nb, *m0 = mins + r * nb,
                *m1 = mins + s * nb;
    Py_ssize_t ahead0 = AHEAD_OF(r, rows), ahead1 = AHEAD_OF(s, rows);
    __m512 lo0 = _mm512_setzero_ps(), hi0 = lo0, lo1 = lo0, hi1 = lo0;
    for (Py_ssize_t b = 0; b < nb; b++) {
        PREFETCH_PAIR(q, scales, mins, row_bytes, 16, nb, ahead0, ahead1, b);
        __m512 xl = _mm512_loadu_ps(x + b * 32), xh = _mm512_loadu_ps(x + b * 32 + 16);
        __m512i bytes0 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(q0 + b * 16)));
        __m512i bytes1 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(q1 + b * 16)));
        __m512 w0 = _mm512_fmadd_ps(_mm512_set1_ps(d0[b]), k16, _mm512_set1_ps(m0[b]));
        __m512 w1 = _mm512_fmadd_ps(_mm512_set1_ps(d1[b]), k16, _mm512_set1_ps(m1[b]));
        lo0 = _mm512_fmadd_ps(_mm512_permutexvar_ps(bytes0, w0), xl, lo0);
        hi0 = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(bytes0, 4), w0), xh, hi0);
        lo1 = _mm512_fmadd_ps(_mm512_permutexvar_ps(bytes1, w1), xl, lo1);
        hi1 = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(bytes1, 4), w1), xh, hi1);
    }
    out[r] = _mm512_reduce_add_ps(_mm512_add_ps(lo0, hi0));
    out[s] = _mm512_reduce_add_ps(_mm512_add_ps(lo1, hi1));
}

AVX512 static void q4_rows_avx512(const uint8_t *q, const float *scales, const float *mins,
                                  const float *x, float *out, Py_ssize_t rows, Py_ssize_t n) {
    Py_ssize_t r = 0;
    for (; r + 2 <= rows; r += 2) q4_pair(q, scales, mins, x, out, r, r + 1, rows, n);
    if (r < rows) q4_pair(q, scales, mins, x, out, r, r, rows, n);
}

/* 8-bit blocks, two rows at a time as above: a weight is d q, then one chain of fused
   multiply-adds per 16 lanes (AMD EPYC Zen 5, one core: 18-30 -> 24-34 G weights a second;
   the same bits). */
AVX512 static inline void q8_pair(const int8_t *q, const float *scales, const float *x,
                                  float *out, Py_ssize_t r, Py_ssize_t s, Py_ssize_t rows,
                                  Py_ssize_t n) {  /* out[r], out[s] */
    Py_ssize_t nb = n / 32;
    const int8_t *q0 = q + r * n, *q1 = q + s * n;
    const float *d0 = scales + r * nb, *d1 = scales + s * nb;
    Py_ssize_t ahead0 = AHEAD_OF(r, rows), ahead1 = AHEAD_OF(s, rows);
    __m512 lo0 = _mm512_setzero_ps(), hi0 = lo0, lo1 = lo0, hi1 = lo0;
    for (Py_ssize_t b = 0; b < nb; b++) {
        PREFETCH_PAIR(q, scales, (const float *)NULL, n, 32, nb, ahead0, ahead1, b);
        __m512 xl = _mm512_loadu_ps(x + b * 32), xh = _mm512_loadu_ps(x + b * 32 + 16);
        __m512 s0 = _mm512_set1_ps(d0[b]), s1 = _mm512_set1_ps(d1[b]);
#define Q8_LANES(row, at) _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128( \
            (const __m128i *)((row) + b * 32 + (at)))))
        lo0 = _mm512_fmadd_ps(_mm512_mul_ps(s0, Q8_LANES(q0, 0)), xl, lo0);
        hi0 = _mm512_fmadd_ps(_mm512_mul_ps(s0, Q8_LANES(q0, 16)), xh, hi0);
        lo1 = _mm512_fmadd_ps(_mm512_mul_ps(s1, Q8_LANES(q1, 0)), xl, lo1);
        hi1 = _mm512_fmadd_ps(_mm512_mul_ps(s1, Q8_LANES(q1, 16)), xh, hi1);
#undef Q8_LANES
    }
    out[r] = _mm512_reduce_add_ps(_mm512_add_ps(lo0, hi0));
    out[s] = _mm512_reduce_add_ps(_mm512_add_ps(lo1, hi1));
}

AVX512 static void q8_rows_avx512(const int8_t *q, const float *scales, const float *x, float *out,
                                  Py_ssize_t rows, Py_ssize_t n) {
    Py_ssize_t r = 0;
    for (; r + 2 <= rows; r += 2) q8_pair(q, scales, x, out, r, r + 1, rows, n);
    if (r < rows) q8_pair(q, scales, x, out, r, r, rows, n);
}

AVX2 static float sum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

/* softmax_rows_f32 on AVX2 CPUs: the same numbers to the bit, written with 8-float GNU C
   vectors. GCC compiles softmax_rows_f32's loop of 16 lanes into vectors for AVX-512 but
   left it one float at a time for AVX2 (and GNU C's 16-float vectors, compared there,
   one lane at a time): a 512-token prompt's causal softmax on a Zen 3 was half of its
   attention's time. Each row's 16 lanes are two vectors of 8 here; the last n % 16 numbers
   are a vector padded with -inf (exp gives 0 there, which adds nothing to a lane's sum of
   numbers >= 0). exp8 is exp_f's operations lane by lane. */
typedef float floats8v __attribute__((vector_size(32)));
typedef int32_t ints8v __attribute__((vector_size(32)));
#define PICK8(where, a, b) ((floats8v)(((ints8v)(a) & (where)) | ((ints8v)(b) & ~(where))))

AVX2 static inline __attribute__((always_inline)) void exp8(floats8v *in_place) {
    const floats8v x = *in_place, zero = {0.0f}, inf = zero + INFINITY;
    ints8v number = x == x;
    floats8v xc = PICK8(number, x, zero);
    xc = PICK8(xc > 88.0f, zero + 88.0f, PICK8(xc < -87.0f, zero - 87.0f, xc));
    floats8v kf, r, p = zero + 1.9875691500e-4f;
    EXP_REDUCED(xc, kf, r);
    EXP_POLYNOMIAL(p, r);
    ints8v bits = (__builtin_convertvector(kf, ints8v) + 127) << 23;  /* 2^k */
    floats8v e = p * (floats8v)bits;
    e = PICK8(x > 88.72283f, inf, e);
    e = PICK8(x < -87.33654f, zero, e);
    *in_place = PICK8(number, e, x);
}

/* 8 numbers from i of x [n] into *v (fewer at the end: `pad` after them); back with put8 */
AVX2 static inline __attribute__((always_inline)) void get8(const float *x, Py_ssize_t i,
                                                            Py_ssize_t n, float pad, floats8v *v) {
    if (i + 8 <= n) {
        memcpy(v, x + i, sizeof *v);
        return;
    }
    float part[8];
    for (int j = 0; j < 8; j++) part[j] = i + j < n ? x[i + j] : pad;
    memcpy(v, part, sizeof part);
}

AVX2 static inline __attribute__((always_inline)) void put8(float *x, Py_ssize_t i, Py_ssize_t n,
                                                            const floats8v *v) {
    if (i + 8 <= n) {
        memcpy(x + i, v, sizeof *v);
        return;
    }
    for (Py_ssize_t j = i; j < n; j++) x[j] = (*v)[j - i];
}

AVX2 static void softmax_rows_avx2(float *s, Py_ssize_t rows, Py_ssize_t n, float scale) {
    for (Py_ssize_t r = 0; r < rows; r++) {
        float *row = s + r * n, m = -INFINITY, total = 0.0f;
        floats8v v[2], top[2] = {{0.0f}, {0.0f}}, lanes[2] = {{0.0f}, {0.0f}};
        top[0] += -INFINITY;
        top[1] += -INFINITY;
        for (Py_ssize_t i = 0; i < n; i += 16) {  /* row_max: NaN skipped */
            get8(row, i, n, -INFINITY, &v[0]);
            get8(row, i + 8, n, -INFINITY, &v[1]);
            for (int h = 0; h < 2; h++) {
                ints8v bigger = v[h] > top[h];
                top[h] = PICK8(bigger, v[h], top[h]);
            }
        }
        for (int j = 0; j < 16; j++) m = top[j / 8][j % 8] > m ? top[j / 8][j % 8] : m;
        for (Py_ssize_t i = 0; i < n; i += 16) {
            get8(row, i, n, -INFINITY, &v[0]);
            get8(row, i + 8, n, -INFINITY, &v[1]);
            for (int h = 0; h < 2; h++) {
                v[h] = (v[h] - m) * scale;
                exp8(&v[h]);
                lanes[h] += v[h];
            }
            put8(row, i, n, &v[0]);
            put8(row, i + 8, n, &v[1]);
        }
        for (int j = 0; j < 16; j++) total += lanes[j / 8][j % 8];
        float share = 1.0f / total;
        for (Py_ssize_t i = 0; i < n; i++) row[i] *= share;
    }
}

AVX2 static void gelu_avx2(float *x, Py_ssize_t n) {  /* gelu_f32's operations, 8 at a time */
    const float p = 0.3275911f, a1 = 0.254829592f, a2 = -0.284496736f, a3 = 1.421413741f,
                a4 = -1.453152027f, a5 = 1.061405429f;
    const floats8v zero = {0.0f};
    for (Py_ssize_t i = 0; i < n; i += 8) {
        floats8v v, e;
        get8(x, i, n, 0.0f, &v);
        floats8v a = (floats8v)((ints8v)v & 0x7fffffff);  /* fabsf */
        floats8v z = a * 0.70710678118654752f;
        floats8v t = 1.0f / (1.0f + p * z);
        e = -(z * z);
        exp8(&e);
        floats8v erfc = t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5)))) * e;
        floats8v positive = PICK8(v > 0.0f, v, PICK8(v == v, zero, v));
        v = positive - a * (0.5f * erfc);
        put8(x, i, n, &v);
    }
}

AVX2 static void silu_times_avx2(float *g, const float *u, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i += 8) {  /* silu_times_f32's operations, 8 at a time */
        floats8v v, w, e;
        get8(g, i, n, 0.0f, &v);
        get8(u, i, n, 0.0f, &w);
        e = -v;
        exp8(&e);
        v = v / (1.0f + e) * w;
        put8(g, i, n, &v);
    }
}

/* AVX2 (no AVX-512): a block's weights are not made at all. Each block's sum is taken over its
   integers, S = sum_j k_j x_j, and scaled once: the row's sum is sum_b d_b S_b, plus, for
   4-bit blocks, sum_b m_b (x's sum over block b). The same weights (a unit vector gives
   d k + m, gguf's number, to the bit: d k is exact), d and m only taken out of each block's
   sum; that saves the per-weight multiply-add that makes a weight (the AVX2 loop was
   compute-bound: 4.4 weights a cycle on a Zen 2; docs/benchmarks.md). Four chains of 8
   lanes would need 32 registers for the few-token loop; a block's sum as (k0 x0 + k1 x1) +
   (k2 x2 + k3 x3) and one chain a row let it keep 8 tokens in registers and sum each
   token's row in exactly the one-token loop's order: a prompt's token gets the bits a
   generated one gets. AMD EPYC Zen 3, one core, builds alternating in one process: one
   1536 x 576 matrix in cache 7.3-9.2 -> 14.4-16.0 G weights a second; a token's 211
   products 13.8 -> 10.5 ms (0.76 of the time); 16 tokens' products 94 -> 104 ms at best
   (1.10: a token's sum per block is now 5 multiply-adds where made weights took 4, and
   their making was shared by 8 tokens). A block's sum in one chain of four (k0 x0, then
   k1 x1 ... added in turn) took 11.3 ms: its longer chain left fewer loads in flight. */
#define BLOCK_SUMS_ON_STACK 512  /* rows of up to 16,384 numbers: x's block sums on the stack */
AVX2 static void block_sums(const float *x, Py_ssize_t nb, float *sx) {  /* sx [nb] */
    for (Py_ssize_t b = 0; b < nb; b++) {
        const float *xb = x + b * 32;
        sx[b] = sum8(_mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(xb), _mm256_loadu_ps(xb + 8)),
                                   _mm256_add_ps(_mm256_loadu_ps(xb + 16), _mm256_loadu_ps(xb + 24))));
    }
}

AVX2 static float offsets_dot(const float *m, const float *sx, Py_ssize_t nb) {  /* sum m_b sx_b */
    __m256 acc = _mm256_setzero_ps();
    Py_ssize_t b = 0;
    for (; b + 8 <= nb; b += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(m + b), _mm256_loadu_ps(sx + b), acc);
    float total = sum8(acc);
    for (; b < nb; b++) total = fmaf(m[b], sx[b], total);
    return total;
}

/* offsets_dot(m, x's block sums) with no memory for the sums: 8 of them made at a time, the
   same bits (a row too long for the stack's BLOCK_SUMS_ON_STACK, or no memory left). */
AVX2 static float offsets_dot_of_x(const float *m, const float *x, Py_ssize_t nb) {
    float sx[8];
    __m256 acc = _mm256_setzero_ps();
    Py_ssize_t b = 0;
    for (; b + 8 <= nb; b += 8) {
        block_sums(x + b * 32, 8, sx);
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(m + b), _mm256_loadu_ps(sx), acc);
    }
    float total = sum8(acc);
    for (; b < nb; b++) {
        block_sums(x + b * 32, 1, sx);
        total = fmaf(m[b], sx[0], total);
    }
    return total;
}

/* the offsets' term of a row: from x's block sums sx, or from x itself where sx is NULL */
#define OFFSETS(m, sx, x, nb) ((sx) ? offsets_dot(m, sx, nb) : offsets_dot_of_x(m, x, nb))

/* A block's 32 integers as floats, in x's order: k[0] the numbers 0-7, k[1] 8-15, k[2]
   16-23, k[3] 24-31 (4 bits: bytes 0-7 and 8-15 widened, their low halves, then high). */
AVX2 static inline __attribute__((always_inline)) void block_integers(int bits, const uint8_t *q, __m256 *k) {
    if (bits == 4) {
        const __m256i low = _mm256_set1_epi32(15);
        __m256i a = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)q));
        __m256i c = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(q + 8)));
        k[0] = _mm256_cvtepi32_ps(_mm256_and_si256(a, low));
        k[1] = _mm256_cvtepi32_ps(_mm256_and_si256(c, low));
        k[2] = _mm256_cvtepi32_ps(_mm256_srli_epi32(a, 4));
        k[3] = _mm256_cvtepi32_ps(_mm256_srli_epi32(c, 4));
    } else {
        for (int j = 0; j < 4; j++)
            k[j] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(q + 8 * j))));
    }
}

/* One block's sum of k x, scaled by d into acc: the one order both loops use. */
AVX2 static inline __attribute__((always_inline)) __m256 block_step(const __m256 *k, const float *xb, float d, __m256 acc) {
    __m256 s = _mm256_mul_ps(k[0], _mm256_loadu_ps(xb));
    __m256 u = _mm256_mul_ps(k[2], _mm256_loadu_ps(xb + 16));
    s = _mm256_fmadd_ps(k[1], _mm256_loadu_ps(xb + 8), s);
    u = _mm256_fmadd_ps(k[3], _mm256_loadu_ps(xb + 24), u);
    return _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_add_ps(s, u), acc);
}

/* Row r: its blocks' sums scaled into one chain of 8 lanes, the offsets after. One row at a
   time, not two sharing each load of x as AVX-512's loop does: in pairs, the logits' 49,152
   rows of 8-bit blocks took 6.5 ms instead of 2.3 (a token's products 15.3 -> 10.5 ms one
   row at a time, alternating builds, Zen 3). */
AVX2 static inline __attribute__((always_inline)) void avx2_row(int bits, const uint8_t *q,
        const float *scales, const float *mins, const float *x, const float *sx, float *out,
        Py_ssize_t r, Py_ssize_t rows, Py_ssize_t n) {
    Py_ssize_t nb = n / 32, block_bytes = 4 * bits, row_bytes = nb * block_bytes;
    const uint8_t *qr = q + r * row_bytes;
    const float *d = scales + r * nb;
    Py_ssize_t ahead = AHEAD_OF(r, rows);
    __m256 acc = _mm256_setzero_ps(), k[4];
    for (Py_ssize_t b = 0; b < nb; b++) {
        PREFETCH_ROW(q, scales, mins, row_bytes, block_bytes, nb, ahead, b);
        block_integers(bits, qr + b * block_bytes, k);
        acc = block_step(k, x + b * 32, d[b], acc);
    }
    float total = sum8(acc);
    if (mins) total += OFFSETS(mins + r * nb, sx, x, nb);
    out[r] = total;
}

AVX2 static void rows_avx2(int bits, const void *q, const float *scales, const float *mins,
                           const float *x, float *out, Py_ssize_t rows, Py_ssize_t n) {
    Py_ssize_t nb = n / 32, r = 0;
    float stack[BLOCK_SUMS_ON_STACK], *sx = nb <= BLOCK_SUMS_ON_STACK ? stack : NULL;
    if (mins && sx) block_sums(x, nb, sx);
    /* bits a constant in each loop, so that each is compiled for its kind of block */
    if (bits == 4)
        for (; r < rows; r++) avx2_row(4, q, scales, mins, x, sx, out, r, rows, n);
    else
        for (; r < rows; r++) avx2_row(8, q, scales, mins, x, sx, out, r, rows, n);
}

/* A prompt's few tokens at once: x [T, n] and out [T, out_stride], a block read and widened
   once for several tokens instead of once for each (the BLAS's float32 product reads 4
   bytes a weight), each token's row summed in the one-token loop's order. AVX2 here: up to
   8 tokens a pass, a block's integers made once for all of them; AVX-512 below: rows in
   pairs, 4 tokens a pass. */
#define TOKEN_GROUP 8
AVX2 static void tokens_avx2(int bits, const void *q, const float *scales, const float *mins,
                             const float *x, float *out, Py_ssize_t rows, Py_ssize_t n,
                             Py_ssize_t T, Py_ssize_t out_stride) {
    Py_ssize_t nb = n / 32, block_bytes = 4 * bits, row_bytes = nb * block_bytes;
    float *sx = mins ? malloc(T * nb * sizeof(float)) : NULL;  /* [T, nb]; NULL: OFFSETS */
    if (sx)
        for (Py_ssize_t t = 0; t < T; t++) block_sums(x + t * n, nb, sx + t * nb);
    for (Py_ssize_t r = 0; r < rows; r++) {
        const uint8_t *qr = (const uint8_t *)q + r * row_bytes;
        Py_ssize_t ahead = AHEAD_OF(r, rows);
        for (Py_ssize_t t0 = 0; t0 < T; t0 += TOKEN_GROUP) {
            Py_ssize_t g = T - t0 < TOKEN_GROUP ? T - t0 : TOKEN_GROUP;
            __m256 acc[TOKEN_GROUP], k[4];
            for (int t = 0; t < TOKEN_GROUP; t++) acc[t] = _mm256_setzero_ps();
            for (Py_ssize_t b = 0; b < nb; b++) {
                if (t0 == 0) PREFETCH_ROW(q, scales, mins, row_bytes, block_bytes, nb, ahead, b);
                block_integers(bits, qr + b * block_bytes, k);
                for (Py_ssize_t t = 0; t < g; t++)
                    acc[t] = block_step(k, x + (t0 + t) * n + b * 32, scales[r * nb + b], acc[t]);
            }
            for (Py_ssize_t t = 0; t < g; t++) {
                float total = sum8(acc[t]);
                if (mins)
                    total += OFFSETS(mins + r * nb, sx ? sx + (t0 + t) * nb : NULL,
                                     x + (t0 + t) * n, nb);
                out[(t0 + t) * out_stride + r] = total;
            }
        }
    }
    free(sx);
}

/* One block's 32 weights as gguf makes them: low (first 16) and high (next 16) halves. */
AVX512 static inline void block_weights(int bits, const void *q, float d, float m, __m512 *wl,
                                        __m512 *wh) {
    __m512 dv = _mm512_set1_ps(d);
    if (bits == 4) {  /* 16 bytes: the low halves of the bytes, then the high halves; each
                         weight picked from the block's 16 possible ones (q4_rows_avx512) */
        const __m128i v = _mm_loadu_si128((const __m128i *)q);
        __m512 mv = _mm512_set1_ps(m);
        __m512 table = _mm512_fmadd_ps(dv, _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                                          12, 13, 14, 15), mv);  /* d k + m */
        __m512i nibbles = _mm512_cvtepu8_epi32(v);  /* vpermps reads an index's low 4 bits */
        *wl = _mm512_permutexvar_ps(nibbles, table);
        *wh = _mm512_permutexvar_ps(_mm512_srli_epi32(nibbles, 4), table);
    } else {  /* 32 signed bytes */
        *wl = _mm512_mul_ps(dv, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
            _mm_loadu_si128((const __m128i *)q))));
        *wh = _mm512_mul_ps(dv, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
            _mm_loadu_si128((const __m128i *)((const int8_t *)q + 16)))));
    }
}

/* The AVX-512 machines' version, 4- or 8-bit blocks: each token's sums in the order of the
   one-token loops above (two chains of 16 lanes per row, the same fused multiply-adds, the
   same final sum), so a prompt's product gives the bits a generated token's gets. Rows go
   in pairs, 4 tokens a pass: an x block loaded once feeds both rows' multiply-adds, and 4
   tokens of x (24 KB at n = 1536) stay in a 32 KB L1 through the pair's blocks. On the
   EPYC (Zen 4), SmolLM2's 30 layers' products, 16 tokens: 13.4 -> 10.8 ms on one thread
   (one row 8 tokens a pass, as before; 2 to 23 tokens all 12-20% faster). With more than
   two passes and rows of at most BUFFERED_N numbers, tokens_buffered runs instead. */
#define PAIR_GROUP 4
#define BUFFERED_N 1024
AVX512 static void tokens_buffered(int bits, const void *q, const float *scales,
                                   const float *mins, const float *x, float *out,
                                   Py_ssize_t rows, Py_ssize_t n, Py_ssize_t T,
                                   Py_ssize_t out_stride);

AVX512 static void tokens_avx512(int bits, const void *q, const float *scales, const float *mins,
                                 const float *x, float *out, Py_ssize_t rows, Py_ssize_t n,
                                 Py_ssize_t T, Py_ssize_t out_stride) {
    Py_ssize_t nb = n / 32, block_bytes = 4 * bits, row_bytes = nb * block_bytes;
    Py_ssize_t r0 = 0;
    if (T > 2 * PAIR_GROUP && n <= BUFFERED_N && rows >= 2) {  /* its pairs; an odd last row below */
        r0 = rows / 2 * 2;
        tokens_buffered(bits, q, scales, mins, x, out, r0, n, T, out_stride);
    }
    for (; r0 + 2 <= rows; r0 += 2) {  /* rows in pairs, PAIR_GROUP tokens a pass */
        const uint8_t *q0 = (const uint8_t *)q + r0 * row_bytes, *q1 = q0 + row_bytes;
        Py_ssize_t ahead = AHEAD_OF(r0, rows), ahead1 = AHEAD_OF(r0 + 1, rows);
        for (Py_ssize_t t0 = 0; t0 < T; t0 += PAIR_GROUP) {
            Py_ssize_t g = T - t0 < PAIR_GROUP ? T - t0 : PAIR_GROUP;
            __m512 lo0[PAIR_GROUP], hi0[PAIR_GROUP], lo1[PAIR_GROUP], hi1[PAIR_GROUP];
            for (int t = 0; t < PAIR_GROUP; t++)
                lo0[t] = hi0[t] = lo1[t] = hi1[t] = _mm512_setzero_ps();
            for (Py_ssize_t b = 0; b < nb; b++) {
                if (t0 == 0) PREFETCH_PAIR(q, scales, mins, row_bytes, block_bytes, nb, ahead,
                                           ahead1, b);
                __m512 wl0, wh0, wl1, wh1;
                block_weights(bits, q0 + b * block_bytes, scales[r0 * nb + b],
                              mins ? mins[r0 * nb + b] : 0.0f, &wl0, &wh0);
                block_weights(bits, q1 + b * block_bytes, scales[(r0 + 1) * nb + b],
                              mins ? mins[(r0 + 1) * nb + b] : 0.0f, &wl1, &wh1);
                for (Py_ssize_t t = 0; t < g; t++) {
                    const float *xb = x + (t0 + t) * n + b * 32;
                    __m512 xl = _mm512_loadu_ps(xb), xh = _mm512_loadu_ps(xb + 16);
                    lo0[t] = _mm512_fmadd_ps(wl0, xl, lo0[t]);
                    hi0[t] = _mm512_fmadd_ps(wh0, xh, hi0[t]);
                    lo1[t] = _mm512_fmadd_ps(wl1, xl, lo1[t]);
                    hi1[t] = _mm512_fmadd_ps(wh1, xh, hi1[t]);
                }
            }
            for (Py_ssize_t t = 0; t < g; t++) {
                float *o = out + (t0 + t) * out_stride + r0;
                o[0] = _mm512_reduce_add_ps(_mm512_add_ps(lo0[t], hi0[t]));
                o[1] = _mm512_reduce_add_ps(_mm512_add_ps(lo1[t], hi1[t]));
            }
        }
    }
    for (Py_ssize_t r = r0; r < rows; r++) {  /* an odd last row: alone, 8 tokens a pass */
        const uint8_t *qr = (const uint8_t *)q + r * row_bytes;
        Py_ssize_t ahead = AHEAD_OF(r, rows);
        for (Py_ssize_t t0 = 0; t0 < T; t0 += TOKEN_GROUP) {
            Py_ssize_t g = T - t0 < TOKEN_GROUP ? T - t0 : TOKEN_GROUP;
            __m512 lo[TOKEN_GROUP], hi[TOKEN_GROUP], wl, wh;
            for (int t = 0; t < TOKEN_GROUP; t++) lo[t] = hi[t] = _mm512_setzero_ps();
            for (Py_ssize_t b = 0; b < nb; b++) {
                if (t0 == 0 && (b * block_bytes) % 64 == 0) prefetch_row(q, row_bytes, ahead, b * block_bytes);
                if (t0 == 0 && (b & 15) == 0) {
                    prefetch_row(scales, nb * 4, ahead, b * 4);
                    if (mins) prefetch_row(mins, nb * 4, ahead, b * 4);
                }
                block_weights(bits, qr + b * block_bytes, scales[r * nb + b],
                              mins ? mins[r * nb + b] : 0.0f, &wl, &wh);
                for (Py_ssize_t t = 0; t < g; t++) {  /* token t0 + t's block of x */
                    const float *xb = x + (t0 + t) * n + b * 32;
                    lo[t] = _mm512_fmadd_ps(wl, _mm512_loadu_ps(xb), lo[t]);
                    hi[t] = _mm512_fmadd_ps(wh, _mm512_loadu_ps(xb + 16), hi[t]);
                }
            }
            for (Py_ssize_t t = 0; t < g; t++)
                out[(t0 + t) * out_stride + r] = _mm512_reduce_add_ps(_mm512_add_ps(lo[t], hi[t]));
        }
    }
}

/* tokens_avx512's pairs (rows even) with the pair's weights made once: into L1, [block][low
   16 | high 16], each pass of PAIR_GROUP tokens reading them there instead of making them
   again (tokens_avx512 makes them once a pass). The same weights and the same sums in the
   same order, so the same bits. AMD EPYC Zen 5, 16 tokens, one core: SmolLM2's 4-bit
   products of 576 numbers a row in 0.75-0.90 of the time, the logits' 8-bit ones in
   0.97-1.01; rows of 1536 (x's 4 tokens and the weights then fill L1) gained nothing, so
   they keep making theirs; with two passes (5-8 tokens) it was no faster. A 16-token
   forward with every position's logits, one process alternating builds: 0.91 [0.83-1.08]
   of the time on one thread, 0.93 [0.87-1.02] on two. */
AVX512 static void tokens_buffered(int bits, const void *q, const float *scales,
                                   const float *mins, const float *x, float *out,
                                   Py_ssize_t rows, Py_ssize_t n, Py_ssize_t T,
                                   Py_ssize_t out_stride) {
    Py_ssize_t nb = n / 32, block_bytes = 4 * bits, row_bytes = nb * block_bytes;
    float w0[BUFFERED_N] __attribute__((aligned(64))), w1[BUFFERED_N] __attribute__((aligned(64)));
    for (Py_ssize_t r0 = 0; r0 < rows; r0 += 2) {
        const uint8_t *q0 = (const uint8_t *)q + r0 * row_bytes, *q1 = q0 + row_bytes;
        Py_ssize_t ahead = AHEAD_OF(r0, rows), ahead1 = AHEAD_OF(r0 + 1, rows);
        for (Py_ssize_t b = 0; b < nb; b++) {  /* both rows' weights, the rows ahead asked for */
            PREFETCH_PAIR(q, scales, mins, row_bytes, block_bytes, nb, ahead, ahead1, b);
            __m512 wl, wh;
            block_weights(bits, q0 + b * block_bytes, scales[r0 * nb + b],
                          mins ? mins[r0 * nb + b] : 0.0f, &wl, &wh);
            _mm512_store_ps(w0 + b * 32, wl);
            _mm512_store_ps(w0 + b * 32 + 16, wh);
            block_weights(bits, q1 + b * block_bytes, scales[(r0 + 1) * nb + b],
                          mins ? mins[(r0 + 1) * nb + b] : 0.0f, &wl, &wh);
            _mm512_store_ps(w1 + b * 32, wl);
            _mm512_store_ps(w1 + b * 32 + 16, wh);
        }
        for (Py_ssize_t t0 = 0; t0 < T; t0 += PAIR_GROUP) {
            Py_ssize_t g = T - t0 < PAIR_GROUP ? T - t0 : PAIR_GROUP;
            __m512 lo0[PAIR_GROUP], hi0[PAIR_GROUP], lo1[PAIR_GROUP], hi1[PAIR_GROUP];
            for (int t = 0; t < PAIR_GROUP; t++)
                lo0[t] = hi0[t] = lo1[t] = hi1[t] = _mm512_setzero_ps();
#define BUFFERED_PASS(tokens)                                                                 \
            for (Py_ssize_t b = 0; b < nb; b++) {                                             \
                __m512 wl0 = _mm512_load_ps(w0 + b * 32), wh0 = _mm512_load_ps(w0 + b * 32 + 16); \
                __m512 wl1 = _mm512_load_ps(w1 + b * 32), wh1 = _mm512_load_ps(w1 + b * 32 + 16); \
                for (Py_ssize_t t = 0; t < (tokens); t++) {                                   \
                    const float *xb = x + (t0 + t) * n + b * 32;                              \
                    __m512 xl = _mm512_loadu_ps(xb), xh = _mm512_loadu_ps(xb + 16);           \
                    lo0[t] = _mm512_fmadd_ps(wl0, xl, lo0[t]);                                \
                    hi0[t] = _mm512_fmadd_ps(wh0, xh, hi0[t]);                                \
                    lo1[t] = _mm512_fmadd_ps(wl1, xl, lo1[t]);                                \
                    hi1[t] = _mm512_fmadd_ps(wh1, xh, hi1[t]);                                \
                }                                                                             \
            }
            if (g == PAIR_GROUP) {  /* a whole pass: its count known here, its sums in registers */
                BUFFERED_PASS(PAIR_GROUP)
            } else {
                BUFFERED_PASS(g)
            }
#undef BUFFERED_PASS
            for (Py_ssize_t t = 0; t < g; t++) {
                float *o = out + (t0 + t) * out_stride + r0;
                o[0] = _mm512_reduce_add_ps(_mm512_add_ps(lo0[t], hi0[t]));
                o[1] = _mm512_reduce_add_ps(_mm512_add_ps(lo1[t], hi1[t]));
            }
        }
    }
}

#endif

static void block_rows(int version, int bits, const void *q, const float *scales, const float *mins,
                       const float *x, float *out, Py_ssize_t rows, Py_ssize_t n) {
#ifdef BLOCK_SIMD
    if (version == WITH_AVX512) {
        if (bits == 4) q4_rows_avx512(q, scales, mins, x, out, rows, n);
        else q8_rows_avx512(q, scales, x, out, rows, n);
        return;
    }
    if (version == WITH_AVX2) {
        rows_avx2(bits, q, scales, bits == 4 ? mins : NULL, x, out, rows, n);
        return;
    }
#endif
    if (bits == 4) q4_rows_c(q, scales, mins, x, out, rows, n);
    else q8_rows_c(q, scales, x, out, rows, n);
}

/* T tokens' products (x [T, n], out [T, out_stride]): the AVX-512 or AVX2 loop, else the
   plain C one-token loop for each token. */
static void block_rows_tokens(int version, int bits, const void *q, const float *scales,
                              const float *mins, const float *x, float *out, Py_ssize_t rows,
                              Py_ssize_t n, Py_ssize_t T, Py_ssize_t out_stride) {
#ifdef BLOCK_SIMD
    if (version == WITH_AVX512) {
        tokens_avx512(bits, q, scales, bits == 4 ? mins : NULL, x, out, rows, n, T, out_stride);
        return;
    }
    if (version == WITH_AVX2) {
        tokens_avx2(bits, q, scales, bits == 4 ? mins : NULL, x, out, rows, n, T, out_stride);
        return;
    }
#endif
    for (Py_ssize_t t = 0; t < T; t++)
        block_rows(PLAIN_C, bits, q, scales, mins, x + t * n, out + t * out_stride, rows, n);
}

/* --- A generated token's steps around its products (fast/decode_step.py) ---

   One token, so each is a few hundred numbers: what numpy's calls cost here is their
   overhead (a dozen calls for an RMSNorm, two batched products and a copy for an attention
   row), not their arithmetic. Same formulas as layers.py's rms_norm and rotate and
   fast/llama.py's attention. */

/* out = x / sqrt(mean(x^2) + eps) * weight, x [n]: the sum of squares in 16 lanes (numpy's
   pairwise sum in another order), then as numpy rounds: (x r) w, r = 1 / sqrt(ms + eps). */
VECTOR_WIDTHS static void rms_norm_f32(const float *x, const float *weight, float eps, float *out,
                                       Py_ssize_t n) {
    float lanes[16] = {0.0f}, total = 0.0f;
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++) lanes[j] += x[i + j] * x[i + j];
    for (; i < n; i++) lanes[i % 16] += x[i] * x[i];
    for (int j = 0; j < 16; j++) total += lanes[j];
    float r = 1.0f / sqrtf(total / (float)n + eps);
    for (i = 0; i < n; i++) out[i] = (x[i] * r) * weight[i];
}

/* Rotary positions on rows of x [rows, d] in place, the halves convention: (x_j, x_j+d/2)
   turned by the angle whose cos and sin [d] (float64) are given. In float64, as numpy's
   x * cos + turned * sin with float64 cos and sin, each product and the sum rounded to float64
   (no fused multiply-add: this loop is compiled for the baseline CPU only), then to float32:
   the same bits as layers.rotate. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
static void rotary_f32(float *x, const double *cos_, const double *sin_, Py_ssize_t rows,
                       Py_ssize_t d) {
    Py_ssize_t half = d / 2;
    for (Py_ssize_t r = 0; r < rows; r++) {
        float *row = x + r * d;
        for (Py_ssize_t j = 0; j < half; j++) {
            double a = row[j], b = row[j + half];
            double first = a * cos_[j], second = b * cos_[j + half];
            double turned_first = -b * sin_[j], turned_second = a * sin_[j + half];
            row[j] = (float)(first + turned_first);
            row[j + half] = (float)(second + turned_second);
        }
    }
}

/* One new token's attention over a cache: q [H, d]; keys and values [K, room, d], the first
   S rows of each KV head written; query head h reads KV head h / (H / K) (grouped-query).
   weights [H, S] = softmax(q k^T / sqrt(d)) (causal_softmax_f32's row: the same bits as
   fast/llama.py's for the same scores); z [H, d] = weights v. */
typedef float floats8 __attribute__((vector_size(32)));

VECTOR_WIDTHS static void attend_cached_plain(const float *q, const float *keys,
                                              const float *values, float *weights, float *z,
                                              Py_ssize_t H, Py_ssize_t K, Py_ssize_t room,
                                              Py_ssize_t S, Py_ssize_t d, float scale) {
    Py_ssize_t G = H / K;  /* a KV head's query heads: its key and value rows read once for all */
    for (Py_ssize_t kv = 0; kv < K; kv++) {
        const float *kh = keys + kv * room * d, *vh = values + kv * room * d;
        const float *qg = q + kv * G * d;
        float *wg = weights + kv * G * S, *zg = z + kv * G * d;
        for (Py_ssize_t s = 0; s < S; s++) {
            const float *key = kh + s * d;
            for (Py_ssize_t g = 0; g < G; g++) {  /* 8 lanes over the features, then added */
                floats8 lanes = {0.0f}, a, b;
                Py_ssize_t j = 0;
                for (; j + 8 <= d; j += 8) {
                    memcpy(&a, qg + g * d + j, sizeof a);
                    memcpy(&b, key + j, sizeof b);
                    lanes += a * b;
                }
                float total = ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5]))
                            + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
                for (; j < d; j++) total += qg[g * d + j] * key[j];
                wg[g * S + s] = total;
            }
        }
        causal_softmax_f32(wg, G, 1, S, scale, S - 1);
        for (Py_ssize_t i = 0; i < G * d; i++) zg[i] = 0.0f;
        for (Py_ssize_t s = 0; s < S; s++)
            for (Py_ssize_t g = 0; g < G; g++) {
                float w = wg[g * S + s];
                for (Py_ssize_t j = 0; j < d; j++) zg[g * d + j] += w * vh[s * d + j];
            }
    }
}

#ifdef BLOCK_SIMD
/* The same on AVX-512 for head sizes of 16 to 128 in steps of 16: a score is 16 lanes of
   multiply-adds and one sum (8 lanes and 7 scalar adds above), a head's output sums stay
   in registers over the keys (above, in memory), and the keys are prefetched KEYS_AHEAD
   rows on. SmolLM2's 30 layers (9 heads over 3) at 470 cached tokens: 1.56-1.66 -> 1.04-1.31
   ms on the EPYC (Zen 4), one process alternating builds; 40 tokens 0.15 -> 0.12, 1000
   3.4-3.9 -> 3.2-3.4. The sums' order differs from the plain loop's, within float32's
   rounding (tests/test_fast_decode_step.py holds both to the float64 formula: a head size
   of 24 runs the plain loop here). The cache's 21.7 MB at 470 tokens would take 0.7 ms at
   one core's streaming rate: what is left is the computation. */
#define KEYS_AHEAD 16
AVX512 static void attend_cached_avx512(const float *q, const float *keys, const float *values,
                                        float *weights, float *z, Py_ssize_t H, Py_ssize_t K,
                                        Py_ssize_t room, Py_ssize_t S, Py_ssize_t d,
                                        float scale) {
    Py_ssize_t G = H / K, C = d / 16;  /* C <= 8 chunks of 16 features */
    for (Py_ssize_t kv = 0; kv < K; kv++) {
        const float *kh = keys + kv * room * d, *vh = values + kv * room * d;
        const float *qg = q + kv * G * d;
        float *wg = weights + kv * G * S, *zg = z + kv * G * d;
        for (Py_ssize_t s = 0; s < S; s++) {  /* a key read once for the G query heads */
            const float *key = kh + s * d;
            for (Py_ssize_t c = 0; c < C; c++) {  /* a key KEYS_AHEAD on (a hint: past the
                                                     cache's end it faults nothing) and the
                                                     value, read after the softmax */
                _mm_prefetch((const char *)(key + KEYS_AHEAD * d + 16 * c), _MM_HINT_T0);
                _mm_prefetch((const char *)(vh + s * d + 16 * c), _MM_HINT_T1);
            }
            for (Py_ssize_t g = 0; g < G; g++) {
                const float *qh = qg + g * d;
                __m512 acc = _mm512_mul_ps(_mm512_loadu_ps(qh), _mm512_loadu_ps(key));
                for (Py_ssize_t c = 1; c < C; c++)
                    acc = _mm512_fmadd_ps(_mm512_loadu_ps(qh + 16 * c),
                                          _mm512_loadu_ps(key + 16 * c), acc);
                wg[g * S + s] = _mm512_reduce_add_ps(acc);
            }
        }
        causal_softmax_f32(wg, G, 1, S, scale, S - 1);
        for (Py_ssize_t g = 0; g < G; g++) {  /* z_g = sum over s of w[g, s] v_s */
            __m512 sums[8];
            for (Py_ssize_t c = 0; c < C; c++) sums[c] = _mm512_setzero_ps();
            const float *w = wg + g * S;
            for (Py_ssize_t s = 0; s < S; s++) {
                __m512 ws = _mm512_set1_ps(w[s]);
                for (Py_ssize_t c = 0; c < C; c++)
                    sums[c] = _mm512_fmadd_ps(ws, _mm512_loadu_ps(vh + s * d + 16 * c),
                                              sums[c]);
            }
            for (Py_ssize_t c = 0; c < C; c++) _mm512_storeu_ps(zg + g * d + 16 * c, sums[c]);
        }
    }
}
#endif

static void attend_cached_f32(const float *q, const float *keys, const float *values,
                              float *weights, float *z, Py_ssize_t H, Py_ssize_t K,
                              Py_ssize_t room, Py_ssize_t S, Py_ssize_t d, float scale) {
#ifdef BLOCK_SIMD
    static int avx512 = -1;
    if (avx512 < 0) avx512 = has_version(WITH_AVX512);
    if (avx512 && d % 16 == 0 && d <= 128) {
        attend_cached_avx512(q, keys, values, weights, z, H, K, room, S, d, scale);
        return;
    }
#endif
    attend_cached_plain(q, keys, values, weights, z, H, K, room, S, d, scale);
}

/* A prompt's causal attention: rows u0 <= u < u1 of q [H, T, d] (u = h T + t) against their
   head's keys and values [H, S, d] (the last T of S positions the prompt's; row t sees keys
   0 .. S - T + t), the weights [H, T, S] written whole (0 on the keys a row may not see),
   the outputs into z [H, T, d]. One call a thread for all its rows, the GIL released: numpy's
   products a head's block at a time left two threads no faster than one at 128 tokens (its
   calls, not their arithmetic, bound it). A head's keys are turned [d][S] first (kt, S
   floats a feature), so 16 keys' scores are 16 lanes of multiply-adds; ROWS_TOGETHER rows
   share each load of the keys and of the values. d a multiple of 16, at most 64, and
   AVX-512 or AVX2 (attend_runs, checked by the caller). */
#define ROWS_TOGETHER 4
#ifdef BLOCK_SIMD
typedef struct {  /* where a head's numbers are: q[t, c] at q[t * q_t + c * q_c], the keys
                     turned (feature c of key s at kt[c * ldk + s]), v [S, d], weights row t
                     at w + t * S, z[t, c] at z[t * z_t + c * z_c] */
    const float *q, *kt, *v;
    float *w, *z;
    Py_ssize_t q_t, q_c, ldk, z_t, z_c, S, d;
} head_view;

/* Rows r0 .. r0 + r - 1 of a head (r at most ROWS_TOGETHER; -> r): their q and weights rows
   (past the last row, the last row again, not stored), and in *keep the keys the last one
   sees. */
static int row_group(const head_view *hv, Py_ssize_t first_keep, Py_ssize_t rows, Py_ssize_t r0,
                     int causal, const float **qi, float **wi, Py_ssize_t *keep) {
    int r = rows - r0 < ROWS_TOGETHER ? (int)(rows - r0) : ROWS_TOGETHER;
    *keep = causal ? first_keep + r0 + r - 1 : hv->S;
    for (int i = 0; i < ROWS_TOGETHER; i++) {
        Py_ssize_t t = r0 + (i < r ? i : r - 1);
        qi[i] = hv->q + t * hv->q_t;
        wi[i] = hv->w + t * hv->S;
    }
    return r;
}

/* The group's r rows of scores [S] scaled and turned into weights: causal, row i keeps
   first + i keys (0 after them); else every key. */
static void group_softmax(float **wi, int r, Py_ssize_t S, float scale, int causal,
                          Py_ssize_t first) {
    for (int i = 0; i < r; i++)
        if (causal) causal_softmax_f32(wi[i], 1, 1, S, scale, first + i - 1);
        else softmax_rows_f32(wi[i], 1, S, scale);
}

AVX512 static void attend_rows_avx512(const head_view *hv, float scale, Py_ssize_t first_keep,
                                      Py_ssize_t rows, int causal) {
    /* rows 0 <= t < rows of one head; row t keeps first_keep + t keys if causal, else all
       S. d a multiple of 16, at most 64. */
    Py_ssize_t C = hv->d / 16, S = hv->S, d = hv->d;
    for (Py_ssize_t r0 = 0; r0 < rows; r0 += ROWS_TOGETHER) {
        const float *qi[ROWS_TOGETHER];  /* past the last row: the last row again, not stored */
        float *wi[ROWS_TOGETHER];
        Py_ssize_t keep;
        int r = row_group(hv, first_keep, rows, r0, causal, qi, wi, &keep);
        for (Py_ssize_t j = 0; j < keep; j += 16) {  /* 16 keys' scores, every row at once */
            __mmask16 m = keep - j >= 16 ? 0xffff : (__mmask16)((1u << (keep - j)) - 1);
            __m512 acc[ROWS_TOGETHER];
            for (int i = 0; i < ROWS_TOGETHER; i++) acc[i] = _mm512_setzero_ps();
            for (Py_ssize_t c = 0; c < d; c++) {
                __m512 kv = _mm512_maskz_loadu_ps(m, hv->kt + c * hv->ldk + j);
                for (int i = 0; i < ROWS_TOGETHER; i++)
                    acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(qi[i][c * hv->q_c]), kv, acc[i]);
            }
            for (int i = 0; i < ROWS_TOGETHER; i++)
                if (i < r) _mm512_mask_storeu_ps(wi[i] + j, m, acc[i]);
        }
        group_softmax(wi, r, S, scale, causal, first_keep + r0);
        __m512 sums[ROWS_TOGETHER][4];
        for (int i = 0; i < ROWS_TOGETHER; i++)
            for (int c = 0; c < 4; c++) sums[i][c] = _mm512_setzero_ps();
        for (Py_ssize_t s = 0; s < keep; s++)  /* a row's later keys weigh 0 */
            for (int c = 0; c < 4; c++)
                if (c < C) {
                    __m512 vs = _mm512_loadu_ps(hv->v + s * d + 16 * c);
                    for (int i = 0; i < ROWS_TOGETHER; i++)
                        sums[i][c] = _mm512_fmadd_ps(_mm512_set1_ps(wi[i][s]), vs, sums[i][c]);
                }
        for (int i = 0; i < r; i++) {
            float *zt = hv->z + (r0 + i) * hv->z_t;
            if (hv->z_c == 1) {
                for (int c = 0; c < 4; c++)
                    if (c < C) _mm512_storeu_ps(zt + 16 * c, sums[i][c]);
            } else {  /* feature by feature: a number each */
                float row[64];
                for (int c = 0; c < 4; c++)
                    if (c < C) _mm512_storeu_ps(row + 16 * c, sums[i][c]);
                for (Py_ssize_t c = 0; c < d; c++) zt[c * hv->z_c] = row[c];
            }
        }
    }
}
/* The same rows on AVX2 (8 lanes): 16 keys' scores a step (two vectors of 8: 8 chains of
   multiply-adds, as two 4-cycle units need; 8 keys a step took 1.14x the time on a Zen 3),
   and the outputs 16 features at a time (4 rows x 16 features: 8 registers of sums of the
   16 there are). Each score and each output is the same chain as attend_rows_avx512's
   (over the features in order, over the keys in order), so the same bits. AMD EPYC Zen 3, against numpy's products a head's
   block at a time (forwards with attentions, the default threads, builds alternating in one
   process): SmolLM2 at 16 / 128 / 512 tokens 0.88 / 0.96 / 0.99 of the time; MiniLM at 16
   and 128 0.97 / 1.03 (noise: 0.78-1.20 block to block). */
AVX2 static void attend_rows_avx2(const head_view *hv, float scale, Py_ssize_t first_keep,
                                  Py_ssize_t rows, int causal) {
    Py_ssize_t S = hv->S, d = hv->d;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (Py_ssize_t r0 = 0; r0 < rows; r0 += ROWS_TOGETHER) {
        const float *qi[ROWS_TOGETHER];  /* past the last row: the last row again, not stored */
        float *wi[ROWS_TOGETHER];
        Py_ssize_t keep;
        int r = row_group(hv, first_keep, rows, r0, causal, qi, wi, &keep);
        for (Py_ssize_t j = 0; j < keep; j += 16) {  /* 16 keys' scores, every row at once:
                                                         8 chains of sums, not 4 */
            Py_ssize_t left = keep - j < 16 ? keep - j : 16;
            __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left), lane);
            __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left - 8), lane);
            __m256 acc0[ROWS_TOGETHER], acc1[ROWS_TOGETHER];
            for (int i = 0; i < ROWS_TOGETHER; i++) acc0[i] = acc1[i] = _mm256_setzero_ps();
            for (Py_ssize_t c = 0; c < d; c++) {
                const float *kc = hv->kt + c * hv->ldk + j;
                __m256 kv0 = _mm256_maskload_ps(kc, m0), kv1 = _mm256_maskload_ps(kc + 8, m1);
                for (int i = 0; i < ROWS_TOGETHER; i++) {
                    __m256 qc = _mm256_set1_ps(qi[i][c * hv->q_c]);
                    acc0[i] = _mm256_fmadd_ps(qc, kv0, acc0[i]);
                    acc1[i] = _mm256_fmadd_ps(qc, kv1, acc1[i]);
                }
            }
            for (int i = 0; i < ROWS_TOGETHER; i++)
                if (i < r) {
                    _mm256_maskstore_ps(wi[i] + j, m0, acc0[i]);
                    if (left > 8) _mm256_maskstore_ps(wi[i] + j + 8, m1, acc1[i]);
                }
        }
        group_softmax(wi, r, S, scale, causal, first_keep + r0);
        for (Py_ssize_t c0 = 0; c0 < d; c0 += 16) {  /* d a multiple of 16 */
            __m256 sums[ROWS_TOGETHER][2];
            for (int i = 0; i < ROWS_TOGETHER; i++) sums[i][0] = sums[i][1] = _mm256_setzero_ps();
            for (Py_ssize_t s = 0; s < keep; s++) {  /* a row's later keys weigh 0 */
                __m256 v0 = _mm256_loadu_ps(hv->v + s * d + c0), v1 = _mm256_loadu_ps(hv->v + s * d + c0 + 8);
                for (int i = 0; i < ROWS_TOGETHER; i++) {
                    __m256 ws = _mm256_set1_ps(wi[i][s]);
                    sums[i][0] = _mm256_fmadd_ps(ws, v0, sums[i][0]);
                    sums[i][1] = _mm256_fmadd_ps(ws, v1, sums[i][1]);
                }
            }
            for (int i = 0; i < r; i++) {
                float *zt = hv->z + (r0 + i) * hv->z_t;
                float part[16];
                _mm256_storeu_ps(part, sums[i][0]);
                _mm256_storeu_ps(part + 8, sums[i][1]);
                for (int c = 0; c < 16; c++) zt[(c0 + c) * hv->z_c] = part[c];
            }
        }
    }
}

/* attend_rows_avx512 where the CPU has AVX-512, else attend_rows_avx2 (attend_runs: one of
   the two). */
static void attend_rows(const head_view *hv, float scale, Py_ssize_t first_keep, Py_ssize_t rows,
                        int causal) {
    static int avx512 = -1;
    if (avx512 < 0) avx512 = has_version(WITH_AVX512);
    if (avx512) attend_rows_avx512(hv, scale, first_keep, rows, causal);
    else attend_rows_avx2(hv, scale, first_keep, rows, causal);
}
#endif

static int attend_prompt_f32(const float *q, const float *k, const float *v, float *w, float *z,
                             Py_ssize_t H, Py_ssize_t T, Py_ssize_t S, Py_ssize_t d, float scale,
                             Py_ssize_t u0, Py_ssize_t u1) {  /* -> -1 if out of memory */
#ifdef BLOCK_SIMD
    float *kt = malloc(sizeof(float) * S * d);  /* a head's keys, turned */
    if (!kt) return -1;
    for (Py_ssize_t h = u0 / T; h < H && h * T < u1; h++) {
        Py_ssize_t t0 = u0 > h * T ? u0 - h * T : 0, t1 = u1 < (h + 1) * T ? u1 - h * T : T;
        const float *kh = k + h * S * d;
        for (Py_ssize_t s = 0; s < S; s++)
            for (Py_ssize_t c = 0; c < d; c++) kt[c * S + s] = kh[s * d + c];
        Py_ssize_t first = h * T + t0;  /* the first row's place */
        head_view hv = {q + first * d, kt, v + h * S * d, w + first * S, z + first * d, d, 1, S,
                        d, 1, S, d};
        attend_rows(&hv, scale, S - T + t0 + 1, t1 - t0, 1);
    }
    free(kt);
#endif
    return 0;
}

/* An encoder's attention (every key seen) for heads h0 <= h < h1, feature by feature as
   fast/loop.py holds a layer: qkv [3 D, T] (Q's rows, then K's, then V's; head h's are its
   d rows of each), weights [H, T, T] written whole, context [D, T] (head h's d rows), and
   values [H, T, d]: each head's v token by token, as the model reports it and as the
   weights' product reads it. K's rows are already the turned keys attend_rows_avx512 reads.
   d a multiple of 16, at most 64, and AVX-512 or AVX2 (attend_runs, checked by the caller). */
static void attend_features_f32(const float *qkv, float *w, float *context, float *values,
                                Py_ssize_t H, Py_ssize_t T, Py_ssize_t d, float scale,
                                Py_ssize_t h0, Py_ssize_t h1) {
#ifdef BLOCK_SIMD
    Py_ssize_t D = H * d;
    for (Py_ssize_t h = h0; h < h1; h++) {
        const float *q = qkv + h * d * T, *k = qkv + (D + h * d) * T, *v = qkv + (2 * D + h * d) * T;
        float *vt = values + h * T * d;
        for (Py_ssize_t c = 0; c < d; c++)
            for (Py_ssize_t s = 0; s < T; s++) vt[s * d + c] = v[c * T + s];
        head_view hv = {q, k, vt, w + h * T * T, context + h * d * T, 1, T, T, 1, T, T, d};
        attend_rows(&hv, scale, T, T, 0);
    }
#endif
}

/* --- A team of threads for blocks_times_vector: the output rows in chunks, taken in turn ---

   A generated token makes ~200 of these products, each 10-80 us of work, so the team's
   threads are started once (the first call that asks for them) and stay. The caller and
   the workers take the next chunk of rows from one atomic ticket until none is left, and
   the caller returns once every row taken is done. Chunks shrink as the rows run out
   (guided: a chunk is 1 / threads of the rows left, at least CHUNK): the first ones are
   long, so a row's prefetch (AHEAD rows on, kept inside its chunk) is rarely wasted on rows
   another thread takes, and the last ones are short, so the threads end together (1 / (2 x
   threads) made twice the chunks: a generated token on two threads 6.0-6.7 -> 5.4-6.1 ms,
   alternating builds, Xeon). So
   on a machine whose other programs keep a worker off its core, the caller does that
   worker's chunks itself rather than wait for it: never much slower than one thread. A
   worker watches the ticket, spinning up to SPIN_NS after its last chunk (the next product
   comes a few microseconds later), then sleeps on a condition variable (between tokens, or
   while the program does something else). Each row is summed by the same loop in the same
   order whichever thread takes it, so the result is the same bits on any number of threads.
   One caller at a time: a second Python thread calling meanwhile computes its product alone.

   The ticket packs, from the top: the job's number (24 bits), its row count (20) and the
   next row to take (20). A thread that takes rows a:b of job g (compare-and-swap) reads the
   job's arrays only then: the caller rewrites them for job g + 1 only after all of job g's
   rows are done, a:b among them. */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#define TEAM_MAX 64
#define SPIN_NS 200000L
#define CHUNK 16  /* rows, at least: 16 x 576 Q4_1 weights is ~0.6-1 us of work */
#define REST_CALLS 64      /* calls made alone after a window of shared ones took longer than */
#define REST_MOST 1024     /* alone would, doubled at each failure in a row up to ~8 tokens'
                              (16384 before: 78 passes of a 16-token prompt, 211 products each,
                              alone after a moment's load, such as another program's spinning
                              threads; the probes keep the estimate current meanwhile) */

typedef struct {
    int version, bits;
    const void *q;
    const float *scales, *mins, *x;
    float *out;
    Py_ssize_t rows, n;
    Py_ssize_t tokens;  /* 0 or 1: x [n], out [rows]; more: x [tokens, n], out [tokens, rows] */
} block_job;

static pthread_mutex_t team_lock = PTHREAD_MUTEX_INITIALIZER;   /* held by the one caller */
static pthread_mutex_t sleep_lock = PTHREAD_MUTEX_INITIALIZER;  /* for the sleepers below */
static pthread_cond_t sleep_cond = PTHREAD_COND_INITIALIZER;
static int team_size = 1, team_sleepers = 0;  /* threads in the team, the caller included */
static int team_rest = 0, team_rest_next = REST_CALLS;  /* calls left to make alone, and
                                                            how many after the next failure */
static block_job team_job;
static _Atomic uint64_t team_ticket;  /* job number | row count | next row (see above) */
static atomic_int team_resting;  /* 1 while the caller runs alone: a worker sleeps at once */
static atomic_int team_done;          /* rows of the current job computed */

#define NEXT_OF(t) ((t) & 0xFFFFF)
#define ROWS_OF(t) (((t) >> 20) & 0xFFFFF)
#define JOB_OF(t) ((t) >> 40)

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static long since_ns(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000000000L + (t.tv_nsec - t0->tv_nsec);
}

static void job_rows(const block_job *j, Py_ssize_t a, Py_ssize_t b) {  /* out[a:b] */
    Py_ssize_t nb = j->n / 32, row_bytes = j->n * j->bits / 8;
    const uint8_t *q = (const uint8_t *)j->q + a * row_bytes;
    const float *mins = j->mins ? j->mins + a * nb : NULL;
    if (j->tokens > 1)  /* every token's out[a:b], row a of out being out + a */
        block_rows_tokens(j->version, j->bits, q, j->scales + a * nb, mins, j->x, j->out + a,
                          b - a, j->n, j->tokens, j->rows);
    else
        block_rows(j->version, j->bits, q, j->scales + a * nb, mins, j->x, j->out + a, b - a, j->n);
}

static int take_chunks(void) {  /* computes chunks while any is left; -> how many it took */
    int took = 0;
    uint64_t t = atomic_load_explicit(&team_ticket, memory_order_acquire);
    while (NEXT_OF(t) < ROWS_OF(t)) {
        uint64_t a = NEXT_OF(t), left = ROWS_OF(t) - a, size = left / (uint64_t)team_size;
        size = size < CHUNK ? CHUNK : (size + CHUNK - 1) / CHUNK * CHUNK;
        size = size > left ? left : size;
        if (!atomic_compare_exchange_weak_explicit(&team_ticket, &t, t + size, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue;  /* t now holds the ticket another thread left */
        job_rows(&team_job, (Py_ssize_t)a, (Py_ssize_t)(a + size));
        atomic_fetch_add_explicit(&team_done, (int)size, memory_order_release);
        took++;
        t = atomic_load_explicit(&team_ticket, memory_order_acquire);
    }
    return took;
}

static void *team_worker(void *unused) {
    for (;;) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long spins = 1; !take_chunks(); spins++) {
            cpu_relax();
            if (spins % 256 == 0 && (atomic_load_explicit(&team_resting, memory_order_relaxed) ||
                                     since_ns(&t0) > SPIN_NS)) {  /* no work for a while: sleep */
                uint64_t seen = atomic_load(&team_ticket);
                pthread_mutex_lock(&sleep_lock);
                team_sleepers++;
                while (atomic_load(&team_ticket) == seen) pthread_cond_wait(&sleep_cond, &sleep_lock);
                team_sleepers--;
                pthread_mutex_unlock(&sleep_lock);
                clock_gettime(CLOCK_MONOTONIC, &t0);
            }
        }
    }
    return NULL;
}

static void team_forget(void) {  /* in a forked child: the threads did not come along */
    pthread_mutex_init(&team_lock, NULL);
    pthread_mutex_init(&sleep_lock, NULL);
    pthread_cond_init(&sleep_cond, NULL);
    team_size = 1;
    team_sleepers = 0;
}

static void team_grow(int size) {  /* called holding team_lock; may stop short of size */
    size = size > TEAM_MAX ? TEAM_MAX : size;
    while (team_size < size) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&t, &attr, team_worker, NULL);
        pthread_attr_destroy(&attr);
        if (failed) return;  /* fewer threads than asked: still the same numbers */
        team_size++;
    }
}

/* out = W x, its rows shared with the team's threads (`threads` allowed, the caller one of
   them); called without the GIL. Fewer than 2 CHUNK rows: the caller alone. Whether sharing
   pays is measured as it goes: the caller's time per weight alone (smoothed, per block
   type) against the shared calls', summed over a window of WINDOW shared calls (one call
   can be slow for reasons that pass: a worker preempted for a moment). A window slower in
   all than the same calls alone would be (the other threads kept off their cores, or, with
   the kernel's autogroups, the whole program held to its share of a machine busier than its
   cores) makes the next REST_CALLS calls run alone, then sharing is tried again; each
   failure in a row doubles the calls alone (up to REST_MOST), a window that pays brings
   them back to REST_CALLS. The first PROBE_CALLS calls of every PROBE_EVERY run alone too,
   so the estimate follows the machine (the first call's, cold, was once kept for good, and
   every window passed against it). While the caller runs alone the workers sleep, not
   spin: a spinning worker takes the core another program would have used, pushing it onto
   the caller's, and a loaded machine then made sharing look no slower than alone while
   both were slower. The first two shared calls after calls alone are not counted: they
   wake the workers that slept meanwhile (~50-100 us on a virtual machine's idle core). Any
   later call that has to wake one is: on a loaded machine a worker kept off its core falls
   asleep between calls; but not one that comes more than SPIN_NS after the last call
   returned (Python's work between two tokens' products): the workers slept for want of
   work, and a window failed by that one wake sent the next 64 calls or more to one
   thread. So a loaded machine stays close to one thread's time, and one that
   quietens down gets its threads back within a few tokens. */
static double alone_ns_per_weight[2];  /* [bits == 8], 0 until measured; under team_lock */
static int team_measured = 1;  /* 0: every call of 2 CHUNK rows or more shared (for the tests) */
static long team_shared_calls = 0;  /* calls whose rows were shared, since the module loaded */
#define WINDOW 16  /* shared calls judged together */
#define PROBE_EVERY 512  /* the first PROBE_CALLS calls of every PROBE_EVERY run alone, */
#define PROBE_CALLS 16   /* the workers asleep: the estimate of alone follows the machine */
static long team_calls = 0;
static int team_waking = 0;  /* shared calls left unjudged: the workers, asleep while the
                                caller ran alone, are being woken (~50-100 us each) */
static double window_took_ns = 0.0, window_alone_ns = 0.0;  /* the window's calls: shared, */
static int window_calls = 0;                                /* and alone as estimated */
static struct timespec team_last_end;  /* when the last call (shared or alone) returned */

static void block_rows_shared(const block_job *job, int threads) {
    uint64_t rows = (uint64_t)job->rows;
    if (threads > 1 && rows >= 2 * CHUNK && rows < (1 << 20) && pthread_mutex_trylock(&team_lock) == 0) {
        double weights = (double)job->rows * (double)job->n * (double)(job->tokens > 1 ? job->tokens : 1);
        double *alone = &alone_ns_per_weight[job->bits == 8];
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        long phase = team_calls++ % PROBE_EVERY;
        if (team_measured && (team_rest > 0 || *alone == 0.0 || phase < PROBE_CALLS)) {
            atomic_store_explicit(&team_resting, 1, memory_order_relaxed);  /* workers: sleep */
            team_waking = 2;
            team_rest -= team_rest > 0;
            job_rows(job, 0, job->rows);
            double took = (double)since_ns(&t0) / weights;
            if (*alone == 0.0) *alone = took;
            else if (phase >= 2)  /* a worker may still spin in a probe's first two calls */
                *alone = 0.75 * *alone + 0.25 * took;
            clock_gettime(CLOCK_MONOTONIC, &team_last_end);
            pthread_mutex_unlock(&team_lock);
            return;
        }
        atomic_store_explicit(&team_resting, 0, memory_order_relaxed);
        if (team_waking == 0 && team_last_end.tv_sec && since_ns(&team_last_end) > SPIN_NS)
            team_waking = 1;  /* the caller was away (Python's work between a token's
                                 products) longer than the workers spin: they slept for
                                 want of work, not for a busy machine; this call wakes them */
        team_grow(threads);  /* the team only grows: a later call asking fewer uses them all */
        team_job = *job;
        atomic_store_explicit(&team_done, 0, memory_order_relaxed);
        uint64_t number = JOB_OF(atomic_load(&team_ticket)) + 1;
        atomic_store_explicit(&team_ticket, ((number & 0xFFFFFF) << 40) | (rows << 20),
                              memory_order_release);
        pthread_mutex_lock(&sleep_lock);
        if (team_sleepers) pthread_cond_broadcast(&sleep_cond);
        pthread_mutex_unlock(&sleep_lock);
        take_chunks();
        for (long spins = 1; (uint64_t)atomic_load_explicit(&team_done, memory_order_acquire) < rows; spins++) {
            cpu_relax();  /* a worker finishing its chunk */
            if (spins % 1024 == 0) sched_yield();
        }
        team_shared_calls++;
        if (team_waking > 0) {
            team_waking--;
        } else if (team_measured) {
            window_took_ns += (double)since_ns(&t0);
            window_alone_ns += *alone * weights;
            if (++window_calls == WINDOW) {
                if (window_took_ns > window_alone_ns) {
                    team_rest = team_rest_next;
                    team_rest_next = team_rest_next < REST_MOST ? 2 * team_rest_next : REST_MOST;
                } else {
                    team_rest_next = REST_CALLS;
                }
                window_took_ns = window_alone_ns = 0.0;
                window_calls = 0;
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &team_last_end);
        pthread_mutex_unlock(&team_lock);
        return;
    }
    job_rows(job, 0, job->rows);
}

/* --- A generated token through every layer, in one call (fast/decode_step.py) ---

   decode_step.py's layer loop, the same sums in the same order (so the same bits), with
   no return to Python between them: ~12 calls into numpy or this file per layer were
   ~1 ms of a token's ~9 (docs/benchmarks.md). The plan holds, for each layer, the
   addresses of its weights as fast/decode_step.py's plan() lists them (PLAN_FIELDS int64s):
   the two norms' weights and, for four products, each matrix's quants, scales and offsets
   (offsets 0: 8-bit blocks). Q, K and V are one matrix there (their rows stacked), and so
   are the gate and up: two products where the Python loop makes five, so the team's
   threads are handed work 4 times a layer instead of 7 (each row is summed alone, so
   stacking changes no bit). The caller keeps those arrays alive and checked. */
enum { PLAN_NORM1, PLAN_QKV, PLAN_O = PLAN_QKV + 3, PLAN_NORM2 = PLAN_O + 3, PLAN_GATE_UP,
       PLAN_DOWN = PLAN_GATE_UP + 3, PLAN_FIELDS = PLAN_DOWN + 3 };

typedef struct {
    Py_ssize_t L, D, H, K, d, F, room, S;  /* S: tokens in the cache, this one included */
    float eps, scale;
    int version, threads;
} decode_sizes;

static void plan_product(const decode_sizes *z, const int64_t *m, const float *x, float *out,
                         Py_ssize_t rows, Py_ssize_t n) {  /* out [rows] = W x, W at m */
    block_job job = {z->version, m[2] ? 4 : 8, (const void *)(intptr_t)m[0],
                     (const float *)(intptr_t)m[1], (const float *)(intptr_t)m[2], x, out, rows, n, 1};
    block_rows_shared(&job, z->threads);
}

#define DECODE_WORK(D, H, K, d, F) (2 * (D) + ((H) + 2 * (K)) * (d) + 2 * (F))  /* floats */

/* x [D]: the token's embedding in, the last layer's output out (before the final norm);
   work: DECODE_WORK floats; outputs as decode_step.py's dict holds them. */
static void decode_layers_f32(const decode_sizes *z, const int64_t *plan, float *x,
                              const double *cos_, const double *sin_, float *key_memory,
                              float *value_memory, float *hidden, float *attentions,
                              float *queries, float *head_outputs, float *work) {
    Py_ssize_t D = z->D, H = z->H, K = z->K, d = z->d, F = z->F, S = z->S, room = z->room;
    float *h = work, *y = h + D, *qkv = y + D, *gate = qkv + (H + 2 * K) * d, *up = gate + F;
    float *k = qkv + H * d, *v = k + K * d;
    for (Py_ssize_t i = 0; i < z->L; i++) {
        const int64_t *f = plan + i * PLAN_FIELDS;
        float *q = queries + i * H * d, *zh = head_outputs + i * H * d;  /* [H, d] each */
        float *keys = key_memory + i * K * room * d, *values = value_memory + i * K * room * d;
        rms_norm_f32(x, (const float *)(intptr_t)f[PLAN_NORM1], z->eps, h, D);
        plan_product(z, f + PLAN_QKV, h, qkv, (H + 2 * K) * d, D);  /* q | k | v */
        memcpy(q, qkv, H * d * sizeof(float));
        rotary_f32(q, cos_, sin_, H, d);
        rotary_f32(k, cos_, sin_, K, d);
        for (Py_ssize_t kv = 0; kv < K; kv++) {  /* this token's row of each KV head */
            memcpy(keys + (kv * room + S - 1) * d, k + kv * d, d * sizeof(float));
            memcpy(values + (kv * room + S - 1) * d, v + kv * d, d * sizeof(float));
        }
        attend_cached_f32(q, keys, values, attentions + i * H * S, zh, H, K, room, S, d, z->scale);
        plan_product(z, f + PLAN_O, zh, y, D, H * d);
        for (Py_ssize_t j = 0; j < D; j++) x[j] = x[j] + y[j];
        rms_norm_f32(x, (const float *)(intptr_t)f[PLAN_NORM2], z->eps, h, D);
        plan_product(z, f + PLAN_GATE_UP, h, gate, 2 * F, D);  /* gate | up */
        silu_times_f32(gate, up, F);
        plan_product(z, f + PLAN_DOWN, gate, y, D, F);
        for (Py_ssize_t j = 0; j < D; j++) x[j] = x[j] + y[j];
        memcpy(hidden + (i + 1) * D, x, D * sizeof(float));
    }
}

/* --- Python's side: arrays by the buffer protocol --- */

static int float32_buffer(PyObject *o, Py_buffer *b, int writable, const char *what) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, b, flags) < 0) return -1;
    if (b->itemsize != 4 || strcmp(b->format, "f") != 0) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_TypeError, "%s must be float32", what);
        return -1;
    }
    return 0;
}

static PyObject *gelu(PyObject *self, PyObject *x) {
    Py_buffer b;
    if (float32_buffer(x, &b, 1, "gelu's array") < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    gelu_f32((float *)b.buf, b.len / 4);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    Py_RETURN_NONE;
}

static PyObject *silu_times(PyObject *self, PyObject *args) {
    PyObject *go, *uo;
    Py_buffer g, u;
    if (!PyArg_ParseTuple(args, "OO", &go, &uo)) return NULL;
    if (float32_buffer(go, &g, 1, "the gate") < 0) return NULL;
    if (float32_buffer(uo, &u, 0, "up") < 0) {
        PyBuffer_Release(&g);
        return NULL;
    }
    if (u.len != g.len)
        PyErr_SetString(PyExc_ValueError, "the gate and up must be the same size");
    else {
        Py_BEGIN_ALLOW_THREADS
        silu_times_f32((float *)g.buf, (const float *)u.buf, g.len / 4);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&u);
    PyBuffer_Release(&g);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static PyObject *softmax_rows(PyObject *self, PyObject *args) {
    PyObject *s;
    Py_ssize_t n;
    float scale = 1.0f;
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "On|f", &s, &n, &scale)) return NULL;
    if (!(scale > 0.0f)) return PyErr_Format(PyExc_ValueError, "the scale must be above 0");
    if (float32_buffer(s, &b, 1, "the scores") < 0) return NULL;
    if (n < 1 || (b.len / 4) % n != 0) {
        PyBuffer_Release(&b);
        return PyErr_Format(PyExc_ValueError, "rows of %zd do not divide the scores", n);
    }
    Py_BEGIN_ALLOW_THREADS
    softmax_rows_f32((float *)b.buf, b.len / 4 / n, n, scale);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    Py_RETURN_NONE;
}

static PyObject *causal_softmax(PyObject *self, PyObject *args) {
    PyObject *s;
    Py_ssize_t T, S, seen = PY_SSIZE_T_MIN;
    float scale = 1.0f;
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "Onn|fn", &s, &T, &S, &scale, &seen)) return NULL;
    if (seen == PY_SSIZE_T_MIN) seen = S - T;  /* the rows are the last T of S positions */
    if (!(scale > 0.0f)) return PyErr_Format(PyExc_ValueError, "the scale must be above 0");
    if (float32_buffer(s, &b, 1, "the scores") < 0) return NULL;
    if (T < 1 || seen < 0 || seen + T > S || (b.len / 4) % (T * S) != 0) {
        PyBuffer_Release(&b);
        return PyErr_Format(PyExc_ValueError, "the scores must be [heads, %zd, %zd]", T, S);
    }
    Py_BEGIN_ALLOW_THREADS
    causal_softmax_f32((float *)b.buf, b.len / 4 / (T * S), T, S, scale, seen);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    Py_RETURN_NONE;
}

static PyObject *layer_norm_columns(PyObject *self, PyObject *args) {
    PyObject *xo, *oo, *wo, *bo;
    Py_ssize_t T;
    float eps;
    int overflowed = 0;
    Py_buffer x, out, w, b;
    if (!PyArg_ParseTuple(args, "OOOOfn", &xo, &oo, &wo, &bo, &eps, &T)) return NULL;
    if (float32_buffer(xo, &x, 0, "x") < 0) return NULL;
    if (float32_buffer(oo, &out, 1, "out") < 0) goto x_only;
    if (float32_buffer(wo, &w, 0, "weight") < 0) goto out_too;
    if (float32_buffer(bo, &b, 0, "bias") < 0) goto w_too;
    Py_ssize_t d = w.len / 4;
    float *scratch = NULL;
    if (T < 1 || b.len != w.len || x.len != d * T * 4 || out.len != x.len)
        PyErr_SetString(PyExc_ValueError, "x and out must be [d, T], weight and bias [d]");
    else if ((scratch = PyMem_RawMalloc(2 * T * sizeof(float))) == NULL)
        PyErr_NoMemory();
    else {
        Py_BEGIN_ALLOW_THREADS
        overflowed = layer_norm_columns_f32(x.buf, out.buf, w.buf, b.buf, eps, d, T, scratch,
                                            scratch + T);
        Py_END_ALLOW_THREADS
        PyMem_RawFree(scratch);
    }
    PyBuffer_Release(&b);
w_too:
    PyBuffer_Release(&w);
out_too:
    PyBuffer_Release(&out);
x_only:
    PyBuffer_Release(&x);
    return PyErr_Occurred() ? NULL : PyBool_FromLong(overflowed);
}

static PyObject *block_versions(PyObject *self, PyObject *unused) {
    PyObject *names = PyList_New(0);
    for (int v = WITH_AVX512; names != NULL && v >= PLAIN_C; v--) {
        if (!has_version(v)) continue;
        PyObject *name = PyUnicode_FromString(BLOCK_VERSIONS[v]);
        if (name == NULL || PyList_Append(names, name) < 0) Py_CLEAR(names);
        Py_XDECREF(name);
    }
    return names;
}

static PyObject *block_team_size(PyObject *self, PyObject *unused) {
    pthread_mutex_lock(&team_lock);
    PyObject *got = Py_BuildValue("il", team_size, team_shared_calls);
    pthread_mutex_unlock(&team_lock);
    return got;
}

static PyObject *block_team_measured(PyObject *self, PyObject *flag) {
    int on = PyObject_IsTrue(flag);
    if (on < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&team_lock);
    Py_END_ALLOW_THREADS
    int was = team_measured;
    team_measured = on;
    pthread_mutex_unlock(&team_lock);
    return PyBool_FromLong(was);
}

static PyObject *blocks_times(PyObject *args, int many) {
    PyObject *qo, *so, *mo, *xo, *oo;
    const char *name = NULL;
    int threads = 1;
    if (!PyArg_ParseTuple(args, "OOOOO|zi", &qo, &so, &mo, &xo, &oo, &name, &threads)) return NULL;
    if (threads < 1) return PyErr_Format(PyExc_ValueError, "threads must be 1 or more, not %d", threads);
    int version = -1;
    for (int v = WITH_AVX512; v >= PLAIN_C; v--)
        if (name == NULL ? has_version(v) : strcmp(name, BLOCK_VERSIONS[v]) == 0) {
            version = v;
            break;
        }
    if (version < 0 || !has_version(version))
        return PyErr_Format(PyExc_ValueError, "no '%s' version on this CPU", name ? name : "?");
    Py_buffer q, s, m = {0}, x, out;
    int bits = mo == Py_None ? 8 : 4;
    if (PyObject_GetBuffer(qo, &q, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (float32_buffer(so, &s, 0, "the scales") < 0) goto q_only;
    if (bits == 4 && float32_buffer(mo, &m, 0, "the offsets") < 0) goto s_too;
    if (float32_buffer(xo, &x, 0, "x") < 0) goto m_too;
    if (float32_buffer(oo, &out, 1, "out") < 0) goto x_too;
    Py_ssize_t tokens = 1;
    if (many) {  /* x [T, n], out [T, rows]: T from x's shape */
        tokens = x.ndim == 2 ? x.shape[0] : 0;
        if (x.ndim != 2 || tokens < 1 || out.ndim != 2 || out.shape[0] != tokens) tokens = 0;
    }
    Py_ssize_t n = tokens ? x.len / 4 / tokens : 0, rows = tokens ? out.len / 4 / tokens : 0;
    if (n < 32 || n % 32 || q.len != rows * n * bits / 8 || s.len != rows * (n / 32) * 4 ||
        (bits == 4 && m.len != s.len))
        PyErr_SetString(PyExc_ValueError, many ?
                        "quants must be [rows, n * bits / 8] bytes, scales (and offsets) "
                        "[rows, n / 32] float32, x [T, n] with n a multiple of 32, out [T, rows]" :
                        "quants must be [rows, n * bits / 8] bytes, scales "
                        "(and offsets) [rows, n / 32] float32, x [n] with n a multiple of 32, out [rows]");
    else {
        block_job job = {version, bits, q.buf, s.buf, bits == 4 ? m.buf : NULL, x.buf, out.buf,
                         rows, n, tokens};
        Py_BEGIN_ALLOW_THREADS
        block_rows_shared(&job, threads);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&out);
x_too:
    PyBuffer_Release(&x);
m_too:
    if (bits == 4) PyBuffer_Release(&m);
s_too:
    PyBuffer_Release(&s);
q_only:
    PyBuffer_Release(&q);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static PyObject *blocks_times_vector(PyObject *self, PyObject *args) {
    return blocks_times(args, 0);
}

static PyObject *blocks_times_tokens(PyObject *self, PyObject *args) {
    return blocks_times(args, 1);
}

static PyObject *rms_norm_row(PyObject *self, PyObject *args) {
    PyObject *xo, *wo, *oo;
    float eps;
    Py_buffer x, w, out;
    if (!PyArg_ParseTuple(args, "OOfO", &xo, &wo, &eps, &oo)) return NULL;
    if (float32_buffer(xo, &x, 0, "x") < 0) return NULL;
    if (float32_buffer(wo, &w, 0, "the weight") < 0) goto x_only;
    if (float32_buffer(oo, &out, 1, "out") < 0) goto w_too;
    if (w.len == 0 || x.len % w.len || out.len != x.len || x.len == 0)
        PyErr_SetString(PyExc_ValueError, "x and out must be rows of the weight's size");
    else {
        Py_ssize_t n = w.len / 4, rows = x.len / w.len;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t r = 0; r < rows; r++)
            rms_norm_f32((const float *)x.buf + r * n, (const float *)w.buf, eps,
                         (float *)out.buf + r * n, n);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&out);
w_too:
    PyBuffer_Release(&w);
x_only:
    PyBuffer_Release(&x);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static int float64_buffer(PyObject *o, Py_buffer *b, const char *what) {
    if (PyObject_GetBuffer(o, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (b->itemsize != 8 || strcmp(b->format, "d") != 0) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_TypeError, "%s must be float64", what);
        return -1;
    }
    return 0;
}

static PyObject *rotary(PyObject *self, PyObject *args) {
    PyObject *xo, *co, *so;
    Py_buffer x, c, s;
    Py_ssize_t d = 0;  /* 0: cos and sin are one position's [d]; else [P, d], P positions */
    if (!PyArg_ParseTuple(args, "OOO|n", &xo, &co, &so, &d)) return NULL;
    if (float32_buffer(xo, &x, 1, "x") < 0) return NULL;
    if (float64_buffer(co, &c, "cos") < 0) goto x_only;
    if (float64_buffer(so, &s, "sin") < 0) goto c_too;
    if (d == 0) d = c.len / 8;
    Py_ssize_t P = d > 0 ? c.len / 8 / d : 0;  /* x's rows are [..., P, d]: row r, position r % P */
    if (s.len != c.len || d < 2 || d % 2 || P < 1 || P * d * 8 != c.len || (x.len / 4) % (P * d))
        PyErr_SetString(PyExc_ValueError,
                        "x must be rows of d (cos's even size), P positions a group, sin as cos");
    else {
        Py_ssize_t groups = x.len / 4 / (P * d);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t g = 0; g < groups; g++)
            for (Py_ssize_t p = 0; p < P; p++)
                rotary_f32((float *)x.buf + (g * P + p) * d, (const double *)c.buf + p * d,
                           (const double *)s.buf + p * d, 1, d);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&s);
c_too:
    PyBuffer_Release(&c);
x_only:
    PyBuffer_Release(&x);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static PyObject *attend_cached(PyObject *self, PyObject *args) {
    PyObject *qo, *ko, *vo, *wo, *zo;
    Py_ssize_t H, K, S;
    float scale;
    Py_buffer q, k, v, w, z;
    if (!PyArg_ParseTuple(args, "OOOnnfOO", &qo, &ko, &vo, &K, &S, &scale, &wo, &zo)) return NULL;
    if (float32_buffer(qo, &q, 0, "q") < 0) return NULL;
    if (float32_buffer(ko, &k, 0, "the keys") < 0) goto q_only;
    if (float32_buffer(vo, &v, 0, "the values") < 0) goto k_too;
    if (float32_buffer(wo, &w, 1, "the weights") < 0) goto v_too;
    if (float32_buffer(zo, &z, 1, "z") < 0) goto w_too;
    H = S > 0 ? w.len / 4 / S : 0;
    Py_ssize_t d = H > 0 ? q.len / 4 / H : 0, room = K > 0 && d > 0 ? k.len / 4 / (K * d) : 0;
    if (S < 1 || K < 1 || H < K || H % K || w.len != 4 * H * S || d < 1 || q.len != 4 * H * d
        || z.len != q.len || k.len != 4 * K * room * d || v.len != k.len || room < S
        || !(scale > 0.0f))
        PyErr_SetString(PyExc_ValueError, "attend_cached(q [H, d], keys and values [K, room, d], "
                                          "K, S <= room, scale > 0, weights [H, S], z [H, d])");
    else {
        Py_BEGIN_ALLOW_THREADS
        attend_cached_f32((const float *)q.buf, (const float *)k.buf, (const float *)v.buf,
                          (float *)w.buf, (float *)z.buf, H, K, room, S, d, scale);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&z);
w_too:
    PyBuffer_Release(&w);
v_too:
    PyBuffer_Release(&v);
k_too:
    PyBuffer_Release(&k);
q_only:
    PyBuffer_Release(&q);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static int attend_runs(Py_ssize_t d) {  /* the two attentions' loop takes this head size */
#ifdef BLOCK_SIMD
    return (has_version(WITH_AVX512) || has_version(WITH_AVX2)) && d >= 16 && d % 16 == 0 && d <= 64;
#else
    return 0;
#endif
}

static PyObject *attend_runs_py(PyObject *self, PyObject *d) {
    Py_ssize_t n = PyNumber_AsSsize_t(d, PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred()) return NULL;
    return PyBool_FromLong(attend_runs(n));
}

/* attend_prompt(q, k, v, weights, z, scale, u0, u1): see attend_prompt_f32; q and z [H, T,
   d], k and v [H, S, d], weights [H, T, S], every one float32 and contiguous. */
static PyObject *attend_prompt(PyObject *self, PyObject *args) {
    PyObject *qo, *ko, *vo, *wo, *zo;
    float scale;
    Py_ssize_t u0, u1;
    Py_buffer b[5];
    if (!PyArg_ParseTuple(args, "OOOOOfnn", &qo, &ko, &vo, &wo, &zo, &scale, &u0, &u1))
        return NULL;
    PyObject *os[5] = {qo, ko, vo, wo, zo};
    const char *names[5] = {"q", "the keys", "the values", "the weights", "z"};
    int got = 0;
    for (; got < 5; got++)
        if (float32_buffer(os[got], &b[got], got >= 3, names[got]) < 0) break;
    if (got == 5) {
        Py_ssize_t H = 0, T = 0, S = 0, d = 0;
        if (b[0].ndim == 3 && b[1].ndim == 3) {
            H = b[0].shape[0], T = b[0].shape[1], d = b[0].shape[2], S = b[1].shape[1];
        }
        if (!attend_runs(d) || H < 1 || T < 1 || S < T || b[1].shape[0] != H || b[1].shape[2] != d
            || b[2].len != b[1].len || b[2].ndim != 3 || b[2].shape[1] != S
            || b[3].len != 4 * H * T * S || b[4].len != b[0].len || !(scale > 0.0f)
            || u0 < 0 || u1 < u0 || u1 > H * T)
            PyErr_SetString(PyExc_ValueError, "attend_prompt(q [H, T, d], k and v [H, S, d], "
                                              "weights [H, T, S], z [H, T, d], d: 16-64 by 16 "
                                              "on AVX-512, scale > 0, rows u0 <= u1 <= H T)");
        else {
            int failed;
            Py_BEGIN_ALLOW_THREADS
            failed = attend_prompt_f32((const float *)b[0].buf, (const float *)b[1].buf,
                                       (const float *)b[2].buf, (float *)b[3].buf,
                                       (float *)b[4].buf, H, T, S, d, scale, u0, u1);
            Py_END_ALLOW_THREADS
            if (failed) PyErr_NoMemory();
        }
    }
    for (int i = 0; i < got; i++) PyBuffer_Release(&b[i]);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

/* attend_features(qkv, weights, context, values, d, scale, h0, h1): see
   attend_features_f32; qkv [3 D, T], weights [H, T, T], context [D, T], values [H, T, d], every
   one float32 and contiguous; d a multiple of 16 up to 64 on an AVX-512 CPU. */
static PyObject *attend_features(PyObject *self, PyObject *args) {
    PyObject *os[4];
    Py_ssize_t d, h0, h1;
    float scale;
    Py_buffer b[4];
    if (!PyArg_ParseTuple(args, "OOOOnfnn", &os[0], &os[1], &os[2], &os[3], &d, &scale, &h0,
                          &h1))
        return NULL;
    const char *names[4] = {"qkv", "the weights", "the context", "the values"};
    int got = 0;
    for (; got < 4; got++)
        if (float32_buffer(os[got], &b[got], got >= 1, names[got]) < 0) break;
    if (got == 4) {
        Py_ssize_t T = b[0].ndim == 2 ? b[0].shape[1] : 0, D = b[2].ndim == 2 ? b[2].shape[0] : 0;
        Py_ssize_t H = d > 0 ? D / d : 0;
        if (!attend_runs(d) || T < 1 || H < 1 || H * d != D
            || b[0].shape[0] != 3 * D || b[2].shape[1] != T || b[1].len != 4 * H * T * T
            || b[3].len != 4 * H * T * d || !(scale > 0.0f) || h0 < 0 || h1 < h0 || h1 > H)
            PyErr_SetString(PyExc_ValueError, "attend_features(qkv [3 D, T], weights [H, T, T], "
                                              "context [D, T], values [H, T, d], d: 16-64 by "
                                              "16 on AVX-512, scale > 0, heads h0 <= h1 <= H)");
        else {
            Py_BEGIN_ALLOW_THREADS
            attend_features_f32((const float *)b[0].buf, (float *)b[1].buf, (float *)b[2].buf,
                                (float *)b[3].buf, H, T, d, scale, h0, h1);
            Py_END_ALLOW_THREADS
        }
    }
    for (int i = 0; i < got; i++) PyBuffer_Release(&b[i]);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

/* decode_layers(plan, sizes, x, cos, sin, key_memory, value_memory, hidden, attentions,
   queries, head_outputs, eps, scale, threads): see decode_layers_f32; sizes int64
   [L, D, H, K, d, F, room, S]; every size checked against the arrays' lengths here. */
static PyObject *decode_layers(PyObject *self, PyObject *args) {
    PyObject *o[11];
    float eps, scale;
    int threads;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOffi", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                          &o[7], &o[8], &o[9], &o[10], &eps, &scale, &threads))
        return NULL;
    Py_buffer b[11];
    int got = 0;
    for (; got < 11; got++) {  /* plan and sizes int64, cos and sin float64, the rest float32 */
        int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (got >= 5 || got == 2 ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(o[got], &b[got], flags) < 0) break;
        int itemsize = got < 2 || got == 3 || got == 4 ? 8 : 4;
        const char *fmt = b[got].format;
        int ok = b[got].itemsize == itemsize &&
                 (got < 2 ? (strcmp(fmt, "q") == 0 || strcmp(fmt, "l") == 0) :
                  strcmp(fmt, itemsize == 8 ? "d" : "f") == 0);
        if (!ok) {
            PyErr_SetString(PyExc_TypeError, "decode_layers: plan and sizes int64, cos and sin "
                                             "float64, every other array float32");
            got++;
            break;
        }
    }
    if (!PyErr_Occurred()) {
        const int64_t *n = (const int64_t *)b[1].buf;
        decode_sizes z = {0};
        if (b[1].len == 8 * 8) {
            z.L = n[0]; z.D = n[1]; z.H = n[2]; z.K = n[3]; z.d = n[4]; z.F = n[5]; z.room = n[6]; z.S = n[7];
        }
        z.eps = eps; z.scale = scale; z.threads = threads;
        for (z.version = WITH_AVX512; z.version > PLAIN_C && !has_version(z.version); z.version--) {}
        Py_ssize_t L = z.L, D = z.D, H = z.H, K = z.K, d = z.d, F = z.F;
        if (L < 1 || D < 32 || D % 32 || K < 1 || H < K || H % K || d < 2 || d % 2 ||
            (H * d) % 32 || F < 32 || F % 32 || z.S < 1 || z.room < z.S || threads < 1 ||
            !(scale > 0.0f) || b[0].len != 8 * L * PLAN_FIELDS || b[2].len != 4 * D ||
            b[3].len != 8 * d || b[4].len != 8 * d || b[5].len != 4 * L * K * z.room * d ||
            b[6].len != b[5].len || b[7].len != 4 * (L + 1) * D || b[8].len != 4 * L * H * z.S ||
            b[9].len != 4 * L * H * d || b[10].len != b[9].len)
            PyErr_SetString(PyExc_ValueError, "decode_layers: the arrays do not match the sizes "
                                              "[L, D, H, K, d, F, room, S]");
        else {
            float *work = PyMem_RawMalloc(sizeof(float) * DECODE_WORK(D, H, K, d, F));
            if (work == NULL) PyErr_NoMemory();
            else {
                Py_BEGIN_ALLOW_THREADS
                decode_layers_f32(&z, (const int64_t *)b[0].buf, (float *)b[2].buf,
                                  (const double *)b[3].buf, (const double *)b[4].buf,
                                  (float *)b[5].buf, (float *)b[6].buf, (float *)b[7].buf,
                                  (float *)b[8].buf, (float *)b[9].buf, (float *)b[10].buf, work);
                Py_END_ALLOW_THREADS
                PyMem_RawFree(work);
            }
        }
    }
    while (got-- > 0) PyBuffer_Release(&b[got]);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"attend_runs", attend_runs_py, METH_O,
     "attend_runs(d) -> whether attend_prompt and attend_features take this head size here\n"
     "(16-64 by 16, on an AVX-512 CPU)."},
    {"attend_features", attend_features, METH_VARARGS,
     "attend_features(qkv, weights, context, values, d, scale, h0, h1): an encoder's\n"
     "attention for heads h0..h1, feature by feature as fast/loop.py holds a layer."},
    {"attend_prompt", attend_prompt, METH_VARARGS,
     "attend_prompt(q, k, v, weights, z, scale, u0, u1): a prompt's causal attention, rows\n"
     "u0 <= h T + t < u1 (head sizes 16-64 by 16, AVX-512)."},
    {"gelu", gelu, METH_O, "gelu(x): x float32, C-contiguous, becomes x Phi(x) in place."},
    {"silu_times", silu_times, METH_VARARGS,
     "silu_times(g, u): g float32 becomes silu(g) u in place (u the same size)."},
    {"softmax_rows", softmax_rows, METH_VARARGS,
     "softmax_rows(s, n, scale=1): each row of n of s becomes softmax(scale row), in place."},
    {"causal_softmax", causal_softmax, METH_VARARGS,
     "causal_softmax(s, T, S, scale=1, seen=S - T): s [heads, T, S]; row t of each head becomes\n"
     "the softmax of scale times its first seen + t + 1 scores, the rest 0, in place."},
    {"layer_norm_columns", layer_norm_columns, METH_VARARGS,
     "layer_norm_columns(x, out, weight, bias, eps, T): each column of x [d, T] normed into out;\n"
     "True if a column's sum of squares overflowed."},
    {"blocks_times_vector", blocks_times_vector, METH_VARARGS,
     "blocks_times_vector(quants, scales, offsets, x, out, version=None, threads=1): out = W x\n"
     "for W in GGUF blocks of 32 (offsets None: 8-bit Q8_0; else 4-bit Q4_1); version 'avx512',\n"
     "'avx2' or 'c' (None: the CPU's best); out's rows shared by that many threads (the same bits)."},
    {"blocks_times_tokens", blocks_times_tokens, METH_VARARGS,
     "blocks_times_tokens(quants, scales, offsets, x, out, version=None, threads=1): out = x W^T\n"
     "for T tokens at once, x [T, n], out [T, rows]: each block's weights made once for 8 tokens."},
    {"block_team_size", block_team_size, METH_NOARGS,
     "block_team_size() -> (threads blocks_times_vector has shared rows with, the caller\n"
     "included; calls it shared)."},
    {"block_team_measured", block_team_measured, METH_O,
     "block_team_measured(flag) -> the previous flag: False shares every call of 32 rows or\n"
     "more, True (the default) only while sharing measures faster than the caller alone."},
    {"rms_norm_row", rms_norm_row, METH_VARARGS,
     "rms_norm_row(x, weight, eps, out): out = x / sqrt(mean(x^2) + eps) * weight, float32 [n]\n"
     "(or each row of x [rows, n])."},
    {"rotary", rotary, METH_VARARGS,
     "rotary(x, cos, sin, d=len(cos)): rows of x float32 [rows, d] turned in place (halves\n"
     "convention); cos and sin float64 [d], or [P, d] for x [..., P, d] (row r: position r % P)."},
    {"attend_cached", attend_cached, METH_VARARGS,
     "attend_cached(q, keys, values, K, S, scale, weights, z): one token's attention over the\n"
     "first S rows of a cache [K, room, d]; q [H, d]; weights [H, S] and z [H, d] written."},
    {"decode_layers", decode_layers, METH_VARARGS,
     "decode_layers(plan, sizes, x, cos, sin, key_memory, value_memory, hidden, attentions,\n"
     "queries, head_outputs, eps, scale, threads): a generated token through every layer of a\n"
     "Llama whose products are GGUF blocks (fast/decode_step.py); x [D] becomes the last\n"
     "layer's output, the cache's row S - 1 and the outputs are written."},
    {"block_versions", block_versions, METH_NOARGS,
     "block_versions(): the versions of blocks_times_vector this CPU runs, best first."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernels", "Float32 gelu, silu times up, softmax (causal too) and layer norm, each one pass; GGUF blocks\ntimes a vector.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__kernels(void) {
    static int registered = 0;
    if (!registered && pthread_atfork(NULL, NULL, team_forget) == 0) registered = 1;
    return PyModule_Create(&module);
}
