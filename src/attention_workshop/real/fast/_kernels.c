/* The float32 element-wise steps of a transformer layer, each in one pass over memory.

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

/* exp(x) = 2^k p(r), k = round(x / ln 2), r = x - k ln 2 in [-ln 2 / 2, ln 2 / 2] (ln 2 in two
   parts, so r is exact), p Cephes' degree-6 fit (relative error < 2e-7). Above 88.72: +inf;
   below -87.34: 0 (a float32 exp's smallest normal result); NaN stays NaN. No branches, so the
   loops calling it vectorise. */
static inline float exp_f(float x) {
    float xc = x == x ? x : 0.0f;                             /* NaN: any number, answered below */
    xc = xc > 88.0f ? 88.0f : (xc < -87.0f ? -87.0f : xc);  /* 2^k stays a normal float */
    float kf = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  /* round(x / ln 2) */
    float r = xc - kf * 0.693359375f;
    r = r - kf * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = ((int32_t)kf + 127) << 23;  /* 2^k */
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    float e = p * scale;
    e = x > 88.72283f ? INFINITY : e;
    e = x < -87.33654f ? 0.0f : e;
    return x == x ? e : x;
}

/* x Phi(x) = max(x, 0) - |x| Phi(-|x|), Phi(-|x|) = erfc(z) / 2 with z = |x| / sqrt(2), and
   erfc(z) = t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-z^2), t = 1 / (1 + p z). */
VECTOR_WIDTHS static void gelu_f32(float *x, Py_ssize_t n) {  /* x [n], in place */
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

static PyObject *layer_norm_columns(PyObject *self, PyObject *args) {
    PyObject *xo, *oo, *wo, *bo;
    Py_ssize_t T;
    float eps;
    Py_buffer x, out, w, b;
    if (!PyArg_ParseTuple(args, "OOOOfn", &xo, &oo, &wo, &bo, &eps, &T)) return NULL;
    if (float32_buffer(xo, &x, 0, "x") < 0) return NULL;
    if (float32_buffer(oo, &out, 1, "out") < 0) goto x_only;
    if (float32_buffer(wo, &w, 0, "weight") < 0) goto out_too;
    if (float32_buffer(bo, &b, 0, "bias") < 0) goto w_too;
    Py_ssize_t d = w.len / 4;
    float *scratch = NULL;
    int overflowed = 0;
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

static PyMethodDef methods[] = {
    {"gelu", gelu, METH_O, "gelu(x): x float32, C-contiguous, becomes x Phi(x) in place."},
    {"softmax_rows", softmax_rows, METH_VARARGS,
     "softmax_rows(s, n, scale=1): each row of n of s becomes softmax(scale row), in place."},
    {"layer_norm_columns", layer_norm_columns, METH_VARARGS,
     "layer_norm_columns(x, out, weight, bias, eps, T): each column of x [d, T] normed into out;\n"
     "True if a column's sum of squares overflowed."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernels", "Float32 gelu, softmax and layer norm, each one pass.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&module); }
