"""Tiny Llama GGUF files written with gguf.GGUFWriter (llama.cpp's own writer), for the
tests of real/gguf_*.py: 2 layers, d_model 32, 4 query heads over 2 key/value heads of 8,
an MLP of 64, random weights from a seed, and a 26-token byte-level vocabulary whose merges
are worked by hand in tests/test_gguf_tokenizer.py. Then bytes of it can be changed
(`patched`, with `layout` saying where each field lies, read by gguf.GGUFReader).

Q and K are written as llama.cpp's converter writes them: each head's rows permuted for its
rotary convention (`llama_cpp_permute`, the converter's formula), so a reader that does not
put them back returns other numbers than `write_llama` returns.
"""

import numpy as np

SIZES = {"layers": 2, "d": 32, "heads": 4, "kv": 2, "d_mlp": 64}
CONTROL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
LETTERS = ["Ġ", "Ċ", "a", "b", "e", "h", "i", "k", "n", "r", "t", "v", "!", "<", ">"]
MERGES = ["t h", "th e", "Ġ b", "a n", "Ġb an", "Ġban k", "r i"]
USER = ["<think>"]  # a user-defined token: matched whole, but not special
TOKENS = CONTROL + LETTERS + ["".join(m.split(" ")) for m in MERGES] + USER
TYPES = [3] * len(CONTROL) + [1] * (len(TOKENS) - len(CONTROL) - len(USER)) + [4] * len(USER)
TEMPLATE = "{% for m in messages %}<|im_start|>{{ m['content'] }}<|im_end|>{% endfor %}"


def llama_cpp_permute(w, n_head):  # [rows, cols] transformers' order -> llama.cpp's
    # convert_hf_to_gguf.py's LlamaModel.permute, as written there
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def weights_of(seed=0, tied=True):  # -> {transformers' name: float32 array}
    rng = np.random.default_rng(seed)
    s = SIZES
    d, hd = s["d"], s["d"] // s["heads"]
    shapes = {"self_attn.q_proj.weight": (s["heads"] * hd, d),
              "self_attn.k_proj.weight": (s["kv"] * hd, d),
              "self_attn.v_proj.weight": (s["kv"] * hd, d),
              "self_attn.o_proj.weight": (d, s["heads"] * hd),
              "mlp.gate_proj.weight": (s["d_mlp"], d), "mlp.up_proj.weight": (s["d_mlp"], d),
              "mlp.down_proj.weight": (d, s["d_mlp"]),
              "input_layernorm.weight": (d,), "post_attention_layernorm.weight": (d,)}
    out = {"model.embed_tokens.weight": rng.normal(0, 0.5, (len(TOKENS), d))}
    for i in range(s["layers"]):
        for part, shape in shapes.items():
            scale = 0.1 if len(shape) == 1 else 0.3
            out[f"model.layers.{i}.{part}"] = (1 if len(shape) == 1 else 0) + \
                rng.normal(0, scale, shape)
    out["model.norm.weight"] = 1 + rng.normal(0, 0.1, (d,))
    if not tied:
        out["lm_head.weight"] = rng.normal(0, 0.5, (len(TOKENS), d))
    return {name: w.astype(np.float32) for name, w in out.items()}


GGUF_PARTS = {"self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight":
              "attn_k.weight", "self_attn.v_proj.weight": "attn_v.weight",
              "self_attn.o_proj.weight": "attn_output.weight", "mlp.gate_proj.weight":
              "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight":
              "ffn_down.weight", "input_layernorm.weight": "attn_norm.weight",
              "post_attention_layernorm.weight": "ffn_norm.weight"}


def gguf_name(name):  # transformers' name -> llama.cpp's, as its converter names them
    outside = {"model.embed_tokens.weight": "token_embd.weight",
               "model.norm.weight": "output_norm.weight", "lm_head.weight": "output.weight"}
    if name in outside:
        return outside[name]
    layer, part = name.removeprefix("model.layers.").split(".", 1)
    return f"blk.{layer}.{GGUF_PARTS[part]}"


def write_llama(path, arch="llama", qtype=None, weights=None, meta=(), leave_out=(),
                extra=None, tokens=None):
    # -> {transformers' name: float32}, what a correct reader returns (the quantized numbers,
    # when qtype quantizes the 2-D weights: gguf.quants' own round trip)
    """meta: (writer method or key, value) pairs added after the usual ones (a key given as
    text is written as a string or uint32 by the value's type); extra: {gguf name: array}
    written as well; leave_out: gguf names not written."""
    import gguf
    from gguf.quants import dequantize, quantize

    s = SIZES
    weights = weights_of() if weights is None else weights
    tokens = TOKENS if tokens is None else tokens
    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(s["layers"])
    w.add_context_length(128)
    w.add_embedding_length(s["d"])
    w.add_feed_forward_length(s["d_mlp"])
    w.add_head_count(s["heads"])
    w.add_head_count_kv(s["kv"])
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_rope_dimension_count(s["d"] // s["heads"])
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_types(TYPES[:len(tokens)] + [1] * (len(tokens) - len(TYPES)))
    w.add_token_merges(MERGES)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_chat_template(TEMPLATE)
    for key, value in meta:
        if callable(key):
            key(w, value)
        elif isinstance(value, str):
            w.add_string(key, value)
        else:
            w.add_uint32(key, value)
    expected = {}
    for name, array in weights.items():
        stored, heads = array, None
        if name.endswith(("q_proj.weight", "k_proj.weight")):
            heads = s["heads"] if "q_proj" in name else s["kv"]
            stored = llama_cpp_permute(array, heads)
        if gguf_name(name) in leave_out:
            continue
        if qtype is not None and array.ndim == 2:
            packed = quantize(stored, qtype)
            w.add_tensor(gguf_name(name), packed, raw_shape=packed.shape, raw_dtype=qtype)
            back = dequantize(packed, qtype)
            if heads is not None:  # stored row j is row source[j] of the original
                source = llama_cpp_permute(np.arange(len(array)).reshape(-1, 1), heads)[:, 0]
                back = back[np.argsort(source)]
            expected[name] = back
        else:
            w.add_tensor(gguf_name(name), stored)
            expected[name] = array
    for name, array in (extra or {}).items():
        w.add_tensor(name, array)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return expected


def layout(path):  # -> {"key NAME": offset, "tensor NAME": offset, "data": offset}
    """Offsets of each key's and each tensor info's first byte, from gguf.GGUFReader."""
    import gguf

    reader = gguf.GGUFReader(str(path))
    places = {f"key {name}": field.offset for name, field in reader.fields.items()
              if not name.startswith("GGUF.")}
    places.update({f"tensor {t.name}": t.field.offset for t in reader.tensors})
    places["data"] = reader.data_offset
    return places


def patched(source, target, at, new):  # write source's bytes with `new` at offset `at`
    data = bytearray(source.read_bytes())
    data[at:at + len(new)] = new
    target.write_bytes(bytes(data))
    return target
