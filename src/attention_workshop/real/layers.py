"""The pieces the families' transformer blocks are made of: norms, activations, rotary
positions, heads split, merged and shared.

One formula each, in the input's precision (float32 like the checkpoints' weights, or
float64, which Module 3's logged numbers come from). The accelerator's faster float32
formulas are real/fast/float32.py's.
"""

import math

import numpy as np

# Constants of the erfc approximation of Press et al., Numerical Recipes (2nd ed.), section 6.2:
# relative error below 1.2e-7 everywhere, which is float32's own resolution.
_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
         0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277)

def layer_norm(x, weight, bias, eps):  # [T, d_model], [d_model], [d_model] -> [T, d_model]
    """Give every row mean 0 and variance 1, then scale and shift it per channel.

    The statistics in float64 whatever x's dtype (Module 3's log depends on these bits), the
    result in x's; real/fast/float32.py has the accelerator's float32 formula.
    Example: layer_norm([[1, 3]], weight=[1, 1], bias=[0, 0], eps=0) -> [[-1, 1]].
    """
    x64 = np.asarray(x, dtype=np.float64)
    mean = x64.mean(axis=-1, keepdims=True)
    var = x64.var(axis=-1, keepdims=True)  # biased, as in torch.nn.LayerNorm
    normed = ((x64 - mean) / np.sqrt(var + eps)).astype(np.asarray(x).dtype)
    return normed * weight + bias


def erfc(x):  # [...] -> [...]
    """The complementary error function 1 - erf(x), vectorised (numpy has no erf of its own).

    In x's precision (float32 or float64). Example: erfc(1) = 0.157299, erfc(-1) = 1.842701.
    """
    x = np.asarray(x)
    x = x if x.dtype in (np.float32, np.float64) else x.astype(np.float64)
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = np.full_like(t, _ERFC[-1])
    for c in reversed(_ERFC[:-1]):  # Horner's rule, in place: this runs on [T, d_mlp] arrays
        poly *= t
        poly += c
    poly -= z * z
    y = t * np.exp(poly, out=poly)
    return np.where(x >= 0, y, 2.0 - y)


def gelu(x):  # [...] -> [...]
    """The exact gelu x * Phi(x) (Phi = standard normal CDF), as BERT uses it, in x's
    precision (real/fast/float32.py has the accelerator's float32 formula).

    Phi(x) = erfc(-x / sqrt(2)) / 2. Example: gelu(1) = 0.841345, gelu(-1) = -0.158655.
    """
    x = np.asarray(x)
    return x * (0.5 * erfc(-x * math.sqrt(0.5)))


def gelu_new(x):  # [...] -> [...]
    """GPT-2's gelu: the tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).

    Example: gelu_new(1) = 0.841192 (exact gelu: 0.841345).
    """
    x = np.asarray(x)
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
    return 0.5 * x * (1.0 + np.tanh(inner))


def silu(x):  # [...] -> [...]
    """x * sigmoid(x), Llama's activation (its gated MLP: down(silu(gate x) * up x)).

    Example: silu(1) = 0.731059, silu(-1) = -0.268941.
    """
    x = np.asarray(x)
    return x * (0.5 * (1.0 + np.tanh(0.5 * x)))  # sigmoid(x) = (1 + tanh(x / 2)) / 2: no exp
    # to overflow for very negative x (which 1 / (1 + e^-x) would, on the way to 0)


ACTIVATION = {"gelu": gelu, "gelu_new": gelu_new, "silu": silu}


def rms_norm(x, weight, eps):  # [T, d_model], [d_model] -> [T, d_model]
    """Scale every row to root-mean-square 1 (no centring, no bias), then per channel.

    Example: rms_norm([[3, 4]], weight=[1, 1], eps=0) -> [[0.849, 1.131]] (rms 3.536).
    """
    x = np.asarray(x)
    ms = np.mean(np.square(x), axis=-1, keepdims=True)  # [T, 1]
    return x * (1.0 / np.sqrt(ms + eps)) * weight


def rotary_angles(positions, d_head, theta):  # [T] ints, int, float -> (cos, sin) [T, d_head]
    """The angle of pair i at position p is p / theta^(2i / d_head): slow turns for the
    last pairs, fast for the first. Halves convention (transformers'): feature j and
    j + d_head/2 form pair j. Example: d_head 2, theta 10000: position 1 turns by 1 radian."""
    inv_freq = rotary_frequencies(d_head, theta)  # [d/2]
    angles = np.outer(np.asarray(positions, dtype=np.float64), inv_freq)  # [T, d/2]
    angles = np.concatenate([angles, angles], axis=-1)  # [T, d_head]
    return np.cos(angles), np.sin(angles)


def rotary_frequencies(d_head, theta):  # -> [d_head / 2] float64: pair i's radians a position
    """Example: d_head 4, theta 10000 -> [1.0, 0.01]."""
    return 1.0 / theta ** (np.arange(0, d_head, 2, dtype=np.float64) / d_head)


def rotate(x, cos, sin):  # [n_head, T, d_head], [T, d_head] x 2 -> [n_head, T, d_head]
    """Rotary positions: turn each (x_j, x_j+d/2) pair by its position's angle. A query at
    position m and a key at n then score q R(m)^T R(n) k = q R(n - m) k: only the distance
    counts. Example: x = [1, 0] at angle pi/2 -> [0, 1]."""
    half = x.shape[-1] // 2
    turned = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)  # [.., -x2, x1]
    return (x * cos + turned * sin).astype(x.dtype, copy=False)


def split_heads(x, n_head):  # [T, n_head * d_head] -> [n_head, T, d_head]
    """Example: a [5, 384] matrix with 12 heads -> [12, 5, 32]: head h owns columns 32h..32h+31."""
    T, width = x.shape
    return x.reshape(T, n_head, width // n_head).transpose(1, 0, 2)  # [n_head, T, d_head]


def share_heads(x, n_head):  # [n_kv_head, T, d_head] -> [n_head, T, d_head]
    """Grouped-query attention: each key/value head serves n_head / n_kv_head query heads,
    consecutive ones. Example: 3 KV heads for 9 query heads -> query heads 0-2 read KV head 0,
    3-5 KV head 1, 6-8 KV head 2."""
    return np.repeat(x, n_head // len(x), axis=0)


def merge_heads(x):  # [n_head, T, d_head] -> [T, d_model]
    """The inverse of split_heads: heads side by side again. Example: [12, 5, 32] -> [5, 384]."""
    n_head, T, d_head = x.shape
    return x.transpose(1, 0, 2).reshape(T, n_head * d_head)  # [T, d_model]


def whole(table):  # an embedding table (array or checkpoint.LookupTable) -> [n_vocab, d_model]
    """Every row at once, as stored: a tied output head multiplies by all of them (a
    LookupTable converts only the rows a sentence reads)."""
    return getattr(table, "stored", table)
