"""GPT-2's block, accelerated: gpt2.transformer_block as loop.py's stages (fast/__init__.py).

Feature-major ([features, T]). Conv1D's W [in, out] is passed as W.T, the [out, in] that
ops.linear_rows and io.heads expect (a view).
"""

from attention_workshop.real.fast.float32 import layer_norm
from attention_workshop.real.fast.loop import WHOLE, run_layers_fast
from attention_workshop.real.fast.ops import activate_in_place, layer_norm_columns, linear_rows
from attention_workshop.real.fast.team import Stage


def stages(block, cfg, io):  # {short name: array}, ModelConfig, loop.LayerIO -> [Stage]
    """-> [Stage]: layer norm; the heads (their Q|K|V rows, attention, share of W_O plus the
    input); layer norm; the MLP (rows of its activation, their share of W_proj plus a)."""
    D, F, T, eps = cfg.d_model, cfg.d_mlp, io.T, cfg.eps
    x, y = io.x, io.y
    n, a, h = io.temp("n", D), io.temp("a", D), io.temp("h", F)  # normed, x + attention, MLP

    def w(name):  # Conv1D's [in, out] as [out, in]
        return block[name + ".weight"].T

    def mlp(r):  # rows r of activation(W_fc n + b_fc), and their share of W_proj h + b + a
        activate_in_place(linear_rows(w("mlp.c_fc"), n, block["mlp.c_fc.bias"], h, r),
                          cfg.activation)
        io.linear_share(r, w("mlp.c_proj"), h, r, y, block["mlp.c_proj.bias"], a)

    def norm(src, name):  # the shares of src added, then its layer norm into n
        return Stage(T, lambda c: layer_norm_columns(io.gather(src), block[name + ".weight"],
                                                     block[name + ".bias"], eps, c, out=n), WHOLE)

    qkv = [(w("attn.c_attn"), block["attn.c_attn.bias"])]  # Q|K|V as one piece
    heads = Stage(cfg.n_head, lambda part: io.heads(part, qkv, n, w("attn.c_proj"),
                                                    block["attn.c_proj.bias"], a))
    return [norm(x, "ln_1"), heads, norm(a, "ln_2"), Stage(F, mlp),
            Stage(T, lambda c: io.gather(y), WHOLE)]


def forward(w, cfg, ids):  # float32 weights, ModelConfig, [T] ints -> as gpt2.forward
    x = w["wte.weight"][ids] + w["wpe.weight"][: len(ids)]  # [T, d_model]
    out = run_layers_fast(stages, w, cfg, x, "h.")
    last = out["hidden_states"][-1]  # the last block's output, which GPT-2 reports after ln_f
    out["hidden_states"][-1] = layer_norm(last, w["ln_f.weight"], w["ln_f.bias"], cfg.eps)
    return out
