/* W x for a prompt's tokens: a float32 matrix product written for the shapes a layer has.

   out = x W^T (x [T, n] token by token, out [T, rows]: llama.py's `x @ W.T`) or
   out = W x (x [n, T] and out [rows, T] feature by feature: loop.py's layout), W [rows, n]
   as torch stores it. On one core of an AVX-512 Xeon, numpy's OpenBLAS ran SmolLM2's
   128-token shapes at 96-125 GFLOP/s (MiniLM's at 136-143), against 146 for the library
   transformers runs on; this loop 118-140 (MiniLM's 139-159), microbenchmarks in
   docs/benchmarks.md. From 256 tokens on, x and out token by token, it runs turned round
   (multiply_turned below: no copies of x or the sums); feature by feature, OpenBLAS is as
   fast or faster there and gemm.py leaves those products to it.

   How: 32 tokens make two 16-float registers; 12 rows of W are read along n, each number
   broadcast and multiplied into the 32 tokens: 24 registers of sums, 24 fused multiply-adds
   for every 14 loads. x is first copied as [n][32] for each group of 32 tokens (zeros past
   the last token; token-by-token x turned 16 x 16 in registers), so a step of n reads 128
   contiguous bytes of it; W is read in place, its 12 rows in step, the next tile's rows
   asked for meanwhile. The sums run over n in blocks of at most KC numbers; a later block
   adds to what the earlier wrote. A tokens-first out gets each tile's sums turned in
   registers and stored 12 numbers a token.

   The sum over n runs in order, one chain per output number: the same bits whatever the
   rows or tokens a call is given (so threads sharing a product's rows give the same bits
   as one thread), but not OpenBLAS's bits. Threads of its own share a product's rows (the
   pool below). AVX-512 only (an x86-64-v4 CPU); elsewhere available() is False and the
   caller uses numpy's product. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MR 32  /* tokens a tile (two registers of 16 floats) */
#define NR 12  /* rows of W a tile */
#define KC 768 /* the most numbers of n a block */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAS_X86 1
#define AVX512 __attribute__((target("avx512f,avx2,fma")))

/* One step of k in both loops below: number k of each of the 12 rows r0..r11, broadcast,
   times the two registers v0 and v1 (32 numbers), added into c[j][0] and c[j][1]. */
#define ROW(j, r)                                                   \
    {                                                               \
        __m512 b = _mm512_set1_ps(r[k]);                            \
        c[j][0] = _mm512_fmadd_ps(b, v0, c[j][0]);                  \
        c[j][1] = _mm512_fmadd_ps(b, v1, c[j][1]);                  \
    }
#define STEP_OF_K                                                   \
    ROW(0, r0) ROW(1, r1) ROW(2, r2) ROW(3, r3) ROW(4, r4) ROW(5, r5) \
    ROW(6, r6) ROW(7, r7) ROW(8, r8) ROW(9, r9) ROW(10, r10) ROW(11, r11)

/* sums[j][t] = sum over k < kc of w_j[k] xp[k][t], for NR rows w_j = w + j ldw and the 32
   tokens of xp ([kc][32]); sums written whole (the caller adds them where they go). The
   next rows' numbers (`next`, row stride ldn: the next tile's W) are asked for meanwhile, a
   cache line of each row per 16 steps of k: W comes from memory once per product, and the
   hardware's prefetcher, following 12 rows at once, left the loop waiting for it. */
AVX512 static void tile(const float *w, Py_ssize_t ldw, const float *xp, Py_ssize_t kc,
                        const float *next, Py_ssize_t ldn, float *sums) {
    __m512 c[NR][2];
    for (int j = 0; j < NR; j++) c[j][0] = c[j][1] = _mm512_setzero_ps();
    const float *r0 = w, *r1 = w + ldw, *r2 = w + 2 * ldw, *r3 = w + 3 * ldw;
    const float *r4 = r0 + 4 * ldw, *r5 = r1 + 4 * ldw, *r6 = r2 + 4 * ldw, *r7 = r3 + 4 * ldw;
    const float *r8 = r4 + 4 * ldw, *r9 = r5 + 4 * ldw, *r10 = r6 + 4 * ldw, *r11 = r7 + 4 * ldw;
    for (Py_ssize_t k16 = 0; k16 < kc; k16 += 16) {
        for (int j = 0; j < NR; j++) _mm_prefetch((const char *)(next + j * ldn + k16), _MM_HINT_T1);
        Py_ssize_t end = k16 + 16 < kc ? k16 + 16 : kc;
        for (Py_ssize_t k = k16; k < end; k++) {
            __m512 v0 = _mm512_loadu_ps(xp + k * MR), v1 = _mm512_loadu_ps(xp + k * MR + 16);
            STEP_OF_K
        }
    }
    for (int j = 0; j < NR; j++) {
        _mm512_storeu_ps(sums + j * MR, c[j][0]);
        _mm512_storeu_ps(sums + j * MR + 16, c[j][1]);
    }
}

/* tile() for a last tile of at most 16 tokens: the first 16 of xp's 32 (the rest are the
   zeros past T), one register of sums a row, each the same chain of sums as tile()'s (so the
   same bits); half the multiply-adds a tile of 32 makes (a 35-token prompt: 1.5 tiles' time
   instead of 2). */
AVX512 static void tile16(const float *w, Py_ssize_t ldw, const float *xp, Py_ssize_t kc,
                          const float *next, Py_ssize_t ldn, float *sums) {
    __m512 c[NR];
    for (int j = 0; j < NR; j++) c[j] = _mm512_setzero_ps();
    for (Py_ssize_t k16 = 0; k16 < kc; k16 += 16) {
        for (int j = 0; j < NR; j++) _mm_prefetch((const char *)(next + j * ldn + k16), _MM_HINT_T1);
        Py_ssize_t end = k16 + 16 < kc ? k16 + 16 : kc;
        for (Py_ssize_t k = k16; k < end; k++) {
            __m512 x0 = _mm512_loadu_ps(xp + k * MR);
            for (int j = 0; j < NR; j++)
                c[j] = _mm512_fmadd_ps(_mm512_set1_ps(w[j * ldw + k]), x0, c[j]);
        }
    }
    for (int j = 0; j < NR; j++) _mm512_storeu_ps(sums + j * MR, c[j]);
}

/* The same sums the other way round, for x and out token by token: 12 tokens' numbers
   broadcast (x's rows read in place: row j's k-th number at rows[j][k]) into 32 rows of W,
   packed as wp [kc][32] (two registers a step of k). The 12 x 32 sums go straight into out's
   rows (row stride ldo; rows j < nt, columns masked by m0 and m1), written, or added to what
   an earlier block of n wrote there (add). Each output number gets the same fused
   multiply-adds in the same order as in tile(), so the same bits. */
AVX512 static void tile_turned(const float *const *rows, int nt, const float *wp, Py_ssize_t kc,
                               float *out, Py_ssize_t ldo, __mmask16 m0, __mmask16 m1,
                               int add) {
    __m512 c[NR][2];
    for (int j = 0; j < NR; j++) c[j][0] = c[j][1] = _mm512_setzero_ps();
    const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3], *r4 = rows[4],
                *r5 = rows[5], *r6 = rows[6], *r7 = rows[7], *r8 = rows[8], *r9 = rows[9],
                *r10 = rows[10], *r11 = rows[11];
    for (Py_ssize_t k = 0; k < kc; k++) {
        __m512 v0 = _mm512_loadu_ps(wp + k * MR), v1 = _mm512_loadu_ps(wp + k * MR + 16);
        STEP_OF_K
    }
    for (int j = 0; j < nt; j++) {
        if (add) {
            c[j][0] = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, out + j * ldo), c[j][0]);
            c[j][1] = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, out + j * ldo + 16), c[j][1]);
        }
        _mm512_mask_storeu_ps(out + j * ldo, m0, c[j][0]);
        _mm512_mask_storeu_ps(out + j * ldo + 16, m1, c[j][1]);
    }
}

/* b = a^T for a 16 x 16 square (row strides lda, ldb), turned in registers (4 rounds of
   shuffles). transpose() below turns a whole [rows, cols] this way (the edges one number at
   a time): the copy of a token-by-token x that the tiles read. Turned one number at a time,
   that copy and the sums' way into a tokens-first out took a sixth of a product's time in
   a SmolLM2 forward (perf: 10% of the whole forward). */
AVX512 static void square(const float *a, Py_ssize_t lda, float *b, Py_ssize_t ldb) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(a + i * lda);
    for (int i = 0; i < 8; i++) {  /* per 128-bit lane: [a0 b0 a1 b1], [a2 b2 a3 b3] */
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {  /* lane L of r[4i + j]: column 4L + j of rows 4i..4i+3 */
        r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xee);
        r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xee);
    }
    for (int j = 0; j < 4; j++) {  /* lanes 0, 2 and 1, 3 of rows' groups 0, 1 and 2, 3 */
        t[j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
        t[4 + j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd);
        t[8 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
        t[12 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
    }
    for (int j = 0; j < 4; j++) {  /* column c: lane c / 4 of the four groups */
        r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
        r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
        r[4 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88);
        r[12 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xdd);
    }
    for (int i = 0; i < 16; i++) _mm512_storeu_ps(b + i * ldb, r[i]);
}

/* The same turn for a tile's sums (rows of a, 16 of its 32 tokens) into a tokens-first out:
   output row i (a token, i < tokens) gets its first numbers (mask: the tile's rows) written,
   or added to what is there. Writing them straight from registers, 16 stores a square,
   costs a fraction of what a [rows, T] copy turned afterwards did. */
AVX512 static void square_into(const float *a, Py_ssize_t lda, float *b, Py_ssize_t ldb,
                               __mmask16 mask, int tokens, int add) {
    float turned[16 * 16];
    square(a, lda, turned, 16);
    for (int i = 0; i < tokens; i++) {
        __m512 v = _mm512_loadu_ps(turned + 16 * i);
        if (add) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, b + i * ldb));
        _mm512_mask_storeu_ps(b + i * ldb, mask, v);
    }
}

static void transpose(const float *a, Py_ssize_t lda, float *b, Py_ssize_t ldb, Py_ssize_t rows,
                      Py_ssize_t cols) {
    for (Py_ssize_t r0 = 0; r0 < rows; r0 += 16)
        for (Py_ssize_t c0 = 0; c0 < cols; c0 += 16) {
            if (r0 + 16 <= rows && c0 + 16 <= cols) {
                square(a + r0 * lda + c0, lda, b + c0 * ldb + r0, ldb);
                continue;
            }
            Py_ssize_t r1 = r0 + 16 < rows ? r0 + 16 : rows, c1 = c0 + 16 < cols ? c0 + 16 : cols;
            for (Py_ssize_t c = c0; c < c1; c++)
                for (Py_ssize_t r = r0; r < r1; r++) b[c * ldb + r] = a[r * lda + c];
        }
}

/* The 32 tokens from t0 of x's numbers k0..k0 + kc as xp [kc][32], zeros past T. x token by
   token ([T, n], row stride ldx) or feature by feature ([n, T]). */
static void pack(const float *x, Py_ssize_t ldx, int tokens_first, Py_ssize_t T, Py_ssize_t t0,
                 Py_ssize_t k0, Py_ssize_t kc, float *xp) {
    Py_ssize_t m = T - t0 < MR ? T - t0 : MR;
    if (m < MR) memset(xp, 0, sizeof(float) * MR * kc);
    if (tokens_first) {
        transpose(x + t0 * ldx + k0, ldx, xp, MR, m, kc);
    } else {
        for (Py_ssize_t k = 0; k < kc; k++)
            memcpy(xp + k * MR, x + (k0 + k) * ldx + t0, sizeof(float) * m);
    }
}

/* A tile's sums (rows j < nr, tokens t < m) into out, written (first block) or added. */
static void put(const float *sums, float *out, Py_ssize_t ldo, int tokens_first, Py_ssize_t t0,
                Py_ssize_t r0, int nr, Py_ssize_t m, int add) {
    if (tokens_first) {  /* sums has 16 rows (those past nr not stored) */
        for (int half = 0; half * 16 < m; half++)
            square_into(sums + 16 * half, MR, out + (t0 + 16 * half) * ldo + r0, ldo,
                        (__mmask16)((1u << nr) - 1), m - 16 * half < 16 ? (int)(m - 16 * half) : 16,
                        add);
        return;
    }
    for (int j = 0; j < nr; j++) {
        const float *s = sums + j * MR;
        float *o = out + (r0 + j) * ldo + t0;
        if (add) for (Py_ssize_t t = 0; t < m; t++) o[t] += s[t];
        else memcpy(o, s, sizeof(float) * m);
    }
}

typedef struct {
    const float *w, *x;
    float *out;
    Py_ssize_t rows, n, T, ldw, ldx, ldo;
    int x_tokens_first, out_tokens_first;
} product;

/* The whole product. x is copied once as [blocks of n][tiles][kc][32] into xp. The rows go
   RC at a time (their W, ~220 KB, stays in L2), and for each block of n, GROUP tiles of
   tokens at a time (their copy of x, ~300 KB, stays in L2 while the RC rows take it in
   turn, NR rows a time, whose W stays in L1 across the GROUP tiles). A tokens-first out gets
   an RC-row chunk's sums in `stage` ([T][RC], after xp in the room: room_floats), copied
   out a token's RC numbers at a time once the chunk is done: written straight into out, a
   tile's 12 numbers a token landed 32 rows of out apart, each row a page of its own in a
   product as wide as the logits' (49,152 rows: 62 -> 53 ms at 128 tokens on one core). */
#define RC 96
#define GROUP 4
#define MC 384         /* rows of W a block, turned round */
#define TURN_FROM 256  /* the fewest tokens turned round */
static int turns(const product *p) {
    return p->x_tokens_first && p->out_tokens_first && p->T >= TURN_FROM;
}

static size_t room_floats(const product *p) {  /* xp, then stage for a tokens-first out; or,
                                                  turned round, a block of W */
    if (turns(p)) return (size_t)MC * KC;
    size_t padded = (size_t)((p->T + MR - 1) / MR) * MR;
    return padded * (size_t)p->n + (p->out_tokens_first ? padded * RC : 0);
}

static void multiply_tiles(const product *p, float *xp) {
    Py_ssize_t tiles = (p->T + MR - 1) / MR, blocks = (p->n + KC - 1) / KC;
    Py_ssize_t kb = (p->n + blocks - 1) / blocks;  /* equal blocks: 576 is one, 1536 two */
    float sums[16 * MR] = {0.0f}, wtail[NR * KC];  /* 16 rows: square_into reads 16 */
    float *stage = xp + tiles * MR * p->n;  /* [T][RC]: a tokens-first out's chunk */
    for (Py_ssize_t k0 = 0; k0 < p->n; k0 += kb) {
        Py_ssize_t kc = p->n - k0 < kb ? p->n - k0 : kb;
        for (Py_ssize_t i = 0; i < tiles; i++)
            pack(p->x, p->ldx, p->x_tokens_first, p->T, i * MR, k0, kc,
                 xp + (k0 * tiles + i * kc) * MR);
    }
    for (Py_ssize_t c = 0; c < p->rows; c += RC) {
        Py_ssize_t rc = p->rows - c < RC ? p->rows - c : RC;
        float *out = p->out_tokens_first ? stage : p->out + c * p->ldo;
        Py_ssize_t ldo = p->out_tokens_first ? RC : p->ldo;
        for (Py_ssize_t k0 = 0; k0 < p->n; k0 += kb) {
            Py_ssize_t kc = p->n - k0 < kb ? p->n - k0 : kb;
            for (Py_ssize_t g = 0; g < tiles; g += GROUP) {  /* GROUP tiles' x stays in L2 */
                Py_ssize_t g_end = g + GROUP < tiles ? g + GROUP : tiles;
                for (Py_ssize_t r = 0; r < rc; r += NR) {
                    int nr = rc - r < NR ? (int)(rc - r) : NR;
                    const float *w = p->w + (c + r) * p->ldw + k0;
                    Py_ssize_t ldw = p->ldw;
                    if (nr < NR) {  /* the last rows, copied beside zero rows */
                        memset(wtail, 0, sizeof wtail);
                        for (int j = 0; j < nr; j++)
                            memcpy(wtail + j * KC, w + j * p->ldw, sizeof(float) * kc);
                        w = wtail;
                        ldw = KC;
                    }
                    /* the rows the next tile reads (prefetched as this one runs): the next NR of
                       the chunk, else its first NR's next block of n, else the next chunk's */
                    const float *next = r + NR < rc ? w + NR * ldw
                                        : k0 + kc < p->n ? p->w + c * p->ldw + k0 + kc
                                        : c + RC < p->rows ? p->w + (c + RC) * p->ldw : w;
                    Py_ssize_t ldn = r + NR < rc || next == w ? ldw : p->ldw;
                    for (Py_ssize_t i = g; i < g_end; i++) {
                        Py_ssize_t m = p->T - i * MR < MR ? p->T - i * MR : MR;
                        (m > 16 ? tile : tile16)(w, ldw, xp + (k0 * tiles + i * kc) * MR, kc,
                                                 next, ldn, sums);
                        put(sums, out, ldo, p->out_tokens_first, i * MR, r, nr, m, k0 > 0);
                    }
                }
            }
        }
        if (p->out_tokens_first)
            for (Py_ssize_t t = 0; t < p->T; t++)
                memcpy(p->out + t * p->ldo + c, stage + t * RC, sizeof(float) * rc);
    }
}

/* The whole product the other way round (tile_turned), for x and out token by token from
   TURN_FROM tokens on: no copy of x and no turn of the sums, a copy of W instead. W's rows go
   MC at a time and n KC numbers at a time: that block of W is copied as [MC / 32][kc][32]
   (wp, in the room: up to 1.2 MB, in a 2 MB L2), then 12 tokens at a time (their numbers of
   the block, up to 36 KB, stay in L1) meet each 32 rows of it in turn. At 512 tokens on one
   core of an AVX-512 Xeon: 150-160 GFLOP/s on SmolLM2's shapes, the tiles 131-142, OpenBLAS
   ~150; at 128 tokens the copy of W costs more than the turns it saves (130-139 against
   142-146): docs/benchmarks.md. */
static const float zeros[KC];

static void pack_w(const float *w, Py_ssize_t ldw, Py_ssize_t rows, Py_ssize_t kc, float *wp) {
    /* rows [rows, kc] of W (rows <= MC) as [rows / 32][kc][32], zeros past the last row */
    for (Py_ssize_t p0 = 0; p0 < rows; p0 += MR) {
        Py_ssize_t m = rows - p0 < MR ? rows - p0 : MR;
        float *dst = wp + p0 * kc;
        if (m < MR) memset(dst, 0, sizeof(float) * MR * kc);
        transpose(w + p0 * ldw, ldw, dst, MR, m, kc);
    }
}

static void multiply_turned(const product *p, float *wp) {
    Py_ssize_t blocks = (p->n + KC - 1) / KC;
    Py_ssize_t kb = (p->n + blocks - 1) / blocks;  /* equal blocks */
    for (Py_ssize_t c = 0; c < p->rows; c += MC) {
        Py_ssize_t mc = p->rows - c < MC ? p->rows - c : MC;
        for (Py_ssize_t k0 = 0; k0 < p->n; k0 += kb) {
            Py_ssize_t kc = p->n - k0 < kb ? p->n - k0 : kb;
            pack_w(p->w + c * p->ldw + k0, p->ldw, mc, kc, wp);
            for (Py_ssize_t t0 = 0; t0 < p->T; t0 += NR) {
                int nt = p->T - t0 < NR ? (int)(p->T - t0) : NR;
                const float *rows[NR];
                for (int j = 0; j < NR; j++)
                    rows[j] = j < nt ? p->x + (t0 + j) * p->ldx + k0 : zeros;
                for (Py_ssize_t p0 = 0; p0 < mc; p0 += MR) {
                    Py_ssize_t m = mc - p0 < MR ? mc - p0 : MR;
                    __mmask16 m0 = m >= 16 ? 0xffff : (__mmask16)((1u << m) - 1);
                    __mmask16 m1 = m >= 32 ? 0xffff
                                   : m > 16 ? (__mmask16)((1u << (m - 16)) - 1) : 0;
                    tile_turned(rows, nt, wp + p0 * kc, kc, p->out + t0 * p->ldo + c + p0, p->ldo,
                                m0, m1, k0 > 0);
                }
            }
        }
    }
}

static void multiply(const product *p, float *room) {
    if (turns(p)) multiply_turned(p, room);
    else multiply_tiles(p, room);
}

/* Room for a thread's copy of x that stays with it between calls (grown when a call needs
   more). Each thread sharing a product copies x for itself: the copies run side by side,
   where one copy made by the caller first and read by all took longer (SmolLM2, 128 tokens,
   2 threads: 0.200-0.208 s a forward against 0.200-0.223). */
static __thread float *room;
static __thread size_t room_size;
static float *scratch(size_t floats) {
    if (room_size < floats) {
        free(room);
        room = malloc(sizeof(float) * floats);
        room_size = room ? floats : 0;
    }
    return room;
}

/* --- Threads sharing a product's rows: started once, spinning between products ---

   A prompt's forward makes ~200 products of 0.2-2 ms. Handing each half of its rows to a
   Python thread through a lock cost ~70 us a product on a virtual machine (the thread asleep
   in the kernel); these workers wait SPIN_NS spinning after a product (the next comes within
   microseconds: Q, K and V, gate and up; a norm or the rotary turn between two products
   takes 0.1-0.5 ms) and then sleep, or sleep at once when told to rest (rest(): before work
   of other threads, such as the attention's, that the spinning would take a core from). One
   caller at a time (a caller that finds the pool busy computes alone). */
#define MAX_WORKERS 7
#define SPIN_NS 1000000L
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;   /* held by the caller */
static pthread_mutex_t sleep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sleep_cond = PTHREAD_COND_INITIALIZER;
static int workers = 0;                     /* started */
static product jobs[MAX_WORKERS];           /* worker i's rows of the current product */
static atomic_long posted, done[MAX_WORKERS];  /* the current product's number; each one's last */
static atomic_int active;                   /* workers with rows in the current product */
static atomic_int failed;                   /* a worker could not make its room */
static atomic_int resting;                  /* rest(): sleep now, not after SPIN_NS */

static inline void relax(void) { __builtin_ia32_pause(); }

static long ns_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000000000L + (t.tv_nsec - t0->tv_nsec);
}

static long first_seen[MAX_WORKERS];  /* the product number a worker starts after */

static void *worker(void *arg) {
    int me = (int)(intptr_t)arg;
    long seen = first_seen[me];  /* (read now, posted may already have moved on) */
    for (;;) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long spins = 1; atomic_load(&posted) == seen; spins++) {
            relax();
            if (spins % 256 == 0 && (atomic_load(&resting) || ns_since(&t0) > SPIN_NS)) {
                pthread_mutex_lock(&sleep_lock);
                while (atomic_load(&posted) == seen) pthread_cond_wait(&sleep_cond, &sleep_lock);
                pthread_mutex_unlock(&sleep_lock);
            }
        }
        seen = atomic_load(&posted);
        if (me < atomic_load(&active)) {
            float *xp = scratch(room_floats(&jobs[me]));
            if (xp) multiply(&jobs[me], xp);
            else atomic_store(&failed, 1);
        }
        atomic_store(&done[me], seen);
    }
    return NULL;
}

static void pool_forget(void) {  /* in a forked child: the threads did not come along */
    pthread_mutex_init(&pool_lock, NULL);
    pthread_mutex_init(&sleep_lock, NULL);
    pthread_cond_init(&sleep_cond, NULL);
    workers = 0;
}

/* rows [a, b) of p as a product of their own */
static product rows_of(const product *p, Py_ssize_t a, Py_ssize_t b) {
    product q = *p;
    q.w = p->w + a * p->ldw;
    q.out = p->out_tokens_first ? p->out + a : p->out + a * p->ldo;
    q.rows = b - a;
    return q;
}

/* The product on `threads` threads (this one and threads - 1 workers), rows in near-equal
   parts cut at multiples of NR. Returns 0, or -1 if a worker's room could not be made. */
static int multiply_shared(const product *p, float *xp, int threads) {
    if (threads > MAX_WORKERS + 1) threads = MAX_WORKERS + 1;
    Py_ssize_t blocks = (p->rows + NR - 1) / NR;
    if (threads > blocks) threads = (int)blocks;
    if (threads <= 1 || pthread_mutex_trylock(&pool_lock) != 0) {
        multiply(p, xp);
        return 0;
    }
    while (workers < threads - 1) {
        pthread_t t;
        first_seen[workers] = atomic_load(&posted);
        atomic_store(&done[workers], first_seen[workers]);
        if (pthread_create(&t, NULL, worker, (void *)(intptr_t)workers) != 0) break;
        pthread_detach(t);
        workers++;
    }
    if (threads > workers + 1) threads = workers + 1;
    for (int i = 1; i < threads; i++) {  /* worker i - 1: rows [a, b); this thread the first */
        Py_ssize_t a = (Py_ssize_t)(blocks * i / threads) * NR;
        Py_ssize_t b = i + 1 < threads ? (Py_ssize_t)(blocks * (i + 1) / threads) * NR : p->rows;
        jobs[i - 1] = rows_of(p, a, b);
    }
    atomic_store(&active, threads - 1);
    atomic_store(&failed, 0);
    atomic_store(&resting, 0);
    long n = atomic_load(&posted) + 1;
    pthread_mutex_lock(&sleep_lock);
    atomic_store(&posted, n);
    pthread_cond_broadcast(&sleep_cond);
    pthread_mutex_unlock(&sleep_lock);
    product mine = rows_of(p, 0, threads > 1 ? (Py_ssize_t)(blocks / threads) * NR : p->rows);
    multiply(&mine, xp);
    for (int i = 0; i < workers; i++)
        while (atomic_load(&done[i]) != n) relax();
    int ok = !atomic_load(&failed);
    pthread_mutex_unlock(&pool_lock);
    return ok ? 0 : -1;
}

static int cpu_ok(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
}
#else
static int cpu_ok(void) { return 0; }
#endif

/* A 2-D float32 buffer whose rows are contiguous (any row stride). */
static int matrix(PyObject *o, Py_buffer *b, int writable, const char *what) {
    if (PyObject_GetBuffer(o, b, PyBUF_STRIDED_RO | (writable ? PyBUF_WRITABLE : 0) | PyBUF_FORMAT))
        return -1;
    if (b->ndim != 2 || b->itemsize != 4 || !b->format || strcmp(b->format, "f") != 0
        || b->strides[1] != 4 || b->strides[0] % 4 != 0 || b->strides[0] < 0) {
        PyErr_Format(PyExc_ValueError, "%s: a 2-D float32 array with contiguous rows", what);
        PyBuffer_Release(b);
        return -1;
    }
    return 0;
}

static PyObject *weights_times(PyObject *self, PyObject *args) {
    PyObject *wo, *xo, *oo;
    int x_tokens_first, out_tokens_first, threads = 1;
    if (!PyArg_ParseTuple(args, "OOOpp|i", &wo, &xo, &oo, &x_tokens_first, &out_tokens_first,
                          &threads))
        return NULL;
    if (!cpu_ok()) {
        PyErr_SetString(PyExc_RuntimeError, "weights_times needs AVX-512 (available() is False)");
        return NULL;
    }
#ifdef HAS_X86
    Py_buffer w, x, out;
    if (matrix(wo, &w, 0, "W")) return NULL;
    if (matrix(xo, &x, 0, "x")) { PyBuffer_Release(&w); return NULL; }
    if (matrix(oo, &out, 1, "out")) { PyBuffer_Release(&w); PyBuffer_Release(&x); return NULL; }
    product p = {w.buf, x.buf, out.buf, w.shape[0], w.shape[1], 0, w.strides[0] / 4,
                 x.strides[0] / 4, out.strides[0] / 4, x_tokens_first, out_tokens_first};
    p.T = x_tokens_first ? x.shape[0] : x.shape[1];
    Py_ssize_t xn = x_tokens_first ? x.shape[1] : x.shape[0];
    Py_ssize_t orows = out_tokens_first ? out.shape[1] : out.shape[0];
    Py_ssize_t oT = out_tokens_first ? out.shape[0] : out.shape[1];
    PyObject *result = NULL;
    if (xn != p.n || orows != p.rows || oT != p.T) {
        PyErr_SetString(PyExc_ValueError, "weights_times: W, x and out's shapes do not match");
    } else if (p.T > 0 && p.rows > 0) {
        float *xp = scratch(room_floats(&p));
        if (!xp) {
            PyErr_NoMemory();
        } else {
            int failed_room;
            Py_BEGIN_ALLOW_THREADS
            failed_room = multiply_shared(&p, xp, threads);
            Py_END_ALLOW_THREADS
            if (failed_room) {
                PyErr_NoMemory();
                goto release;
            }
            result = Py_NewRef(Py_None);
        }
    } else {
        result = Py_NewRef(Py_None);
    }
release:
    PyBuffer_Release(&w);
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    return result;
#else
    return NULL;
#endif
}

static PyObject *rest(PyObject *self, PyObject *unused) {
#ifdef HAS_X86
    atomic_store(&resting, 1);
#endif
    Py_RETURN_NONE;
}

static PyObject *available(PyObject *self, PyObject *unused) {
    return PyBool_FromLong(cpu_ok());
}

static PyMethodDef methods[] = {
    {"weights_times", weights_times, METH_VARARGS,
     "weights_times(w, x, out, x_tokens_first, out_tokens_first, threads=1): out = W x, W\n"
     "[rows, n]; x [T, n] (tokens first) or [n, T]; out [T, rows] (tokens first) or [rows, T];\n"
     "W's rows shared by that many threads (the same bits)."},
    {"available", available, METH_NOARGS, "available(): True where this CPU runs the loop."},
    {"rest", rest, METH_NOARGS,
     "rest(): the threads spinning after a product sleep now (until the next product)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_gemm", "W x for a prompt's tokens, float32 (AVX-512).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__gemm(void) {
#ifdef HAS_X86
    static int registered = 0;
    if (!registered && pthread_atfork(NULL, NULL, pool_forget) == 0) registered = 1;
#endif
    return PyModule_Create(&module);
}
