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


def metadata(arch="llama", tokens=TOKENS):  # -> {key: value}, the keys a converter writes
    s = SIZES
    return {f"{arch}.block_count": s["layers"], f"{arch}.context_length": 128,
            f"{arch}.embedding_length": s["d"], f"{arch}.feed_forward_length": s["d_mlp"],
            f"{arch}.attention.head_count": s["heads"], f"{arch}.attention.head_count_kv": s["kv"],
            f"{arch}.attention.layer_norm_rms_epsilon": 1e-5, f"{arch}.rope.freq_base": 10000.0,
            f"{arch}.rope.dimension_count": s["d"] // s["heads"],
            "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "smollm",
            "tokenizer.ggml.tokens": list(tokens),
            "tokenizer.ggml.token_type": TYPES[:len(tokens)] + [1] * (len(tokens) - len(TYPES)),
            "tokenizer.ggml.merges": MERGES, "tokenizer.ggml.bos_token_id": 1,
            "tokenizer.ggml.eos_token_id": 2, "tokenizer.chat_template": TEMPLATE}


def write_llama(path, arch="llama", qtype=None, weights=None, meta=None, leave_out=(),
                extra=None, tokens=TOKENS):
    # -> {transformers' name: float32}, what a correct reader returns (the quantized numbers,
    # when qtype quantizes the 2-D weights: gguf.quants' own round trip)
    """meta: {key: value} written over metadata()'s (None: the key left out; a value's GGUF
    type follows its Python type: str, bool, int as uint32, float as float32, list as an
    array); extra: {gguf name: array} written as well; leave_out: gguf names not written."""
    import gguf
    from gguf.quants import dequantize, quantize

    s = SIZES
    weights = weights_of() if weights is None else weights
    w = gguf.GGUFWriter(str(path), arch)
    kinds = {str: gguf.GGUFValueType.STRING, bool: gguf.GGUFValueType.BOOL,
             int: gguf.GGUFValueType.UINT32, float: gguf.GGUFValueType.FLOAT32,
             list: gguf.GGUFValueType.ARRAY}
    for key, value in {**metadata(arch, tokens), **(meta or {})}.items():
        if value is not None:
            w.add_key_value(key, value, kinds[type(value)])
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
    for name, array in (extra or {}).items():  # an array, or (bytes, ggml type) to write raw
        if isinstance(array, tuple):
            w.add_tensor(name, array[0], raw_shape=array[0].shape, raw_dtype=array[1])
        else:
            w.add_tensor(name, array)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return expected


def layout(path):  # -> {"key NAME": offset, "tensor NAME": offset, "data": .., "end": ..}
    """Offsets of each key's and each tensor info's first byte, where the data starts and
    where the last tensor's bytes end, from gguf.GGUFReader."""
    import gguf

    reader = gguf.GGUFReader(str(path))
    places = {f"key {name}": field.offset for name, field in reader.fields.items()
              if not name.startswith("GGUF.")}
    places.update({f"tensor {t.name}": t.field.offset for t in reader.tensors})
    places["data"] = reader.data_offset
    places["end"] = max(t.data_offset + t.n_bytes for t in reader.tensors)
    return places


def patched(source, target, at, new):  # write source's bytes with `new` at offset `at`
    data = bytearray(source.read_bytes())
    data[at:at + len(new)] = new
    target.write_bytes(bytes(data))
    return target
