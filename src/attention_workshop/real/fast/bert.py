"""BERT's encoder layer, accelerated: bert.encoder_layer as loop.py's stages (fast/__init__.py).

Feature-major ([features, T]); the heads' stage makes their Q|K|V rows, attention and share of
W_O, the MLP's its rows of gelu(W_1 a + b_1) and their share of W_2 (loop.LayerIO).
"""

from attention_workshop.real.families.bert import embed
from attention_workshop.real.fast.float32 import layer_norm
from attention_workshop.real.fast.loop import WHOLE, run_layers_fast
from attention_workshop.real.fast.ops import activate_in_place, layer_norm_columns, linear_rows
from attention_workshop.real.fast.team import Stage


def stages(layer, cfg, io):  # {short name: array}, ModelConfig, loop.LayerIO -> [Stage]
    """-> [Stage]: the heads (their Q|K|V rows, attention, share of W_O plus the input);
    layer norm; the MLP (rows of gelu(W_1 a + b_1), their share of W_2 plus a); layer norm."""
    D, F, T, eps = cfg.d_model, cfg.d_mlp, io.T, cfg.eps
    x, y = io.x, io.y
    a, h = io.temp("a", D), io.temp("h", F)  # [D, T] after attention, [F, T] the MLP's
    names = [f"attention.self.{name}" for name in ("query", "key", "value")]
    pieces = [(layer[f"{name}.weight"], layer[f"{name}.bias"]) for name in names]  # [D, D], [D]
    ln1, ln2 = "attention.output.LayerNorm.", "output.LayerNorm."

    def mlp(r):  # rows r of gelu(W_1 a + b_1), and their share of W_2 h + b_2 + a
        activate_in_place(linear_rows(layer["intermediate.dense.weight"], a,
                                      layer["intermediate.dense.bias"], h, r), cfg.activation)
        io.linear_share(r, layer["output.dense.weight"], h, r, y, layer["output.dense.bias"], a)

    def norm(out, name):  # the shares of `out` added, then its layer norm, in place
        return Stage(T, lambda c: layer_norm_columns(io.gather(out), layer[name + "weight"],
                                                     layer[name + "bias"], eps, c), WHOLE)

    heads = Stage(cfg.n_head, lambda part: io.heads(
        part, pieces, x, layer["attention.output.dense.weight"],
        layer["attention.output.dense.bias"], a))
    return [heads, norm(a, ln1), Stage(F, mlp), norm(y, ln2)]


def forward(w, cfg, ids):  # float32 weights, ModelConfig, [T] ints -> as bert.forward
    return run_layers_fast(stages, w, cfg, embed(w, cfg, ids, layer_norm), "encoder.layer.")
