"""Faster float32 formulas for the accelerator: layer norm in float32 after centring, and gelu
through a shorter erfc (Abramowitz & Stegun). real/layers.py keeps one formula each; these
give the same numbers to float32's resolution (tests/test_fast_ops.py, test_real_layers.py).
"""

import math

import numpy as np

# Abramowitz & Stegun, Handbook of Mathematical Functions, 7.1.26: for z >= 0,
# erfc(z) ~ t (a1 + a2 t + ... + a5 t^4) exp(-z^2) with t = 1 / (1 + p z), |error| <= 1.5e-7:
# half the passes of the formula above, enough for float32. Highest power first (horner).
_AS_P = 0.3275911
_AS_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)



def layer_norm(x, weight, bias, eps):  # float32 [T, d_model], [d_model], [d_model] -> [T, d]
    """layers.layer_norm in float32: two passes, centre first, then average the squares of
    small numbers, so no large mean^2 cancels (float64 statistics gave the same to 1e-7,
    slower). Example: layer_norm([[1, 3]], [1, 1], [0, 0], 0) -> [[-1, 1]]."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        from attention_workshop.real.layers import layer_norm as readable
        return readable(x, weight, bias, eps)
    centered = x - x.mean(axis=-1, keepdims=True)  # [T, d_model]
    var = np.mean(np.square(centered), axis=-1, keepdims=True)  # [T, 1], biased
    centered *= 1.0 / np.sqrt(var + eps)  # one division per row, not per element
    centered *= weight
    centered += bias
    return centered


def horner(t, coefficients):  # [...], (c_n, ..., c_1, c_0) -> [...]
    """c_n t^n + ... + c_1 t + c_0 as (((c_n t + c_n-1) t + ...) t + c_0), in place on one array.

    Example: horner(2, (1, 0, 3)) = 1 * 2^2 + 0 * 2 + 3 = 7.
    """
    p = t * coefficients[0]  # the one new array: this runs on [T, d_mlp] arrays
    for c in coefficients[1:-1]:
        p += c
        p *= t
    p += coefficients[-1]
    return p


def erfc_positive(z):  # [...] with z >= 0 -> [...]
    """erfc(z) for z >= 0 by Abramowitz & Stegun 7.1.26, in z's precision (meant for float32).

    Small for large z, with small absolute error. Example: erfc_positive(1) = 0.157299.
    """
    t = 1.0 / (1.0 + z * _AS_P)
    y = horner(t, _AS_A)
    y *= t
    y *= np.exp(-np.square(z))
    return y


def gelu(x):  # float32 [...] -> [...]
    """layers.gelu in float32: x Phi(x) = max(x, 0) - |x| Phi(-|x|), one formula for both
    signs, the tail Phi(-|x|) = erfc(|x| / sqrt(2)) / 2 computed small, nothing cancelling.
    Example: gelu(np.float32(1)) = 0.841345."""
    x = np.asarray(x)
    abs_x = np.abs(x)
    tail = erfc_positive(abs_x * math.sqrt(0.5))  # python floats keep float32 float32
    tail *= abs_x
    tail *= 0.5  # |x| Phi(-|x|)
    y = np.maximum(x, 0.0)
    y -= tail
    return y
