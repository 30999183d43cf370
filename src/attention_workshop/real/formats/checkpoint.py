"""A model folder -> its config, weights and tokenizer, each checked before use.

config.json becomes a ModelConfig (config.py). The weight loader only copies: every tensor
keeps its checkpoint name, and a missing or wrongly shaped one is an error that names it.
The weights are one model.safetensors or shards listed by model.safetensors.index.json
(shards.py). Every config value, the file's layer count and dtypes, and the tokenizer's ids
are checked first (folder_checks.py), before anything is allocated.
"""

from dataclasses import replace

import numpy as np

from attention_workshop.errors import WorkshopError
from attention_workshop.real.catalog import check_folder
from attention_workshop.real.config import read_config
from attention_workshop.real.families import family
from attention_workshop.real.formats import folder_checks as checks
from attention_workshop.real.formats.finite import all_finite


def read_weights(path, cfg, dtype="float32"):  # Path, ModelConfig -> ({name: array}, check)
    """Read exactly the tensors the family's forward pass needs, by their checkpoint names.

    Example: MiniLM's file names 'encoder.layer.0.attention.self.query.weight' [384, 384];
    a BertForMaskedLM file calls it 'bert.encoder.layer.0...': the 'bert.' prefix is dropped.
    Extra tensors (a language-model head, GPT-2's stored causal-mask buffers) are ignored.
    The file is memory-mapped (safetensors_file.py): tensors already in `dtype` are read-only
    views of it, used in place; others (float64 for Module 3, bfloat16) are converted copies,
    but for the word embedding table, which a forward pass only reads rows of (LookupTable).
    `check()` looks for NaN and infinity in every tensor but that table, whose rows are
    checked as they are read: a cold run sums 43 MB of MiniLM's numbers, not 90.
    """
    from attention_workshop.real.formats.safetensors_file import as_one_array, numbers
    from attention_workshop.real.formats.shards import stored_tensors

    fam = family(cfg.family)
    stored = stored_tensors(path)  # the headers read and checked; nothing loaded yet
    prefix = fam.prefix if any(n.startswith(fam.prefix) for n in stored) else ""
    # names listed for the layers the header can hold, not for num_hidden_layers 1e9
    outside = len(fam.tensor_shapes(replace(cfg, n_layer=0)))
    most = checks.most_layers(len(fam.tensor_shapes(replace(cfg, n_layer=1))) - outside,
                              outside, len(stored))
    asked = f" (config.json asks for {cfg.n_layer} layers)" if cfg.n_layer > most else ""
    expected = fam.tensor_shapes(replace(cfg, n_layer=min(cfg.n_layer, most + 1)))
    # a head beside the nested model (Llama's lm_head) keeps its own name
    key = {name: name if prefix + name not in stored and name in stored else prefix + name
           for name in expected}
    for name, shape in expected.items():
        if key[name] not in stored:
            raise WorkshopError(f"tensor '{key[name]}' is missing from {path}{asked}; "
                                f"is this a {cfg.family} checkpoint matching config.json?")
        checks.check_dtype(path, key[name], stored[key[name]].dtype)
        actual = stored[key[name]].shape
        if actual != shape:
            raise WorkshopError(f"tensor '{key[name]}' in {path} has shape "
                                f"{list(actual)}, but config.json implies {list(shape)}")
    weights = {name: working(numbers(stored[key[name]]), dtype,
                             f"'{key[name]}' in {path}" if shape[0] == cfg.n_vocab else None)
               for name, shape in expected.items()}
    tables = [w.stored for w in weights.values() if isinstance(w, LookupTable)]

    def check():  # a NaN or inf weight would poison every output: WorkshopError naming it
        pieces = None if stored.data is None else as_one_array(stored, leave_out=tables)
        # a sum or two, each one call without the GIL (load_folder runs this beside the
        # tokenizer, which holds the GIL, so the longest goes first)
        if pieces is not None and all(all_finite(piece) for piece in
                                      sorted(pieces, key=lambda piece: -piece.size)):
            return
        for name, tensor in weights.items():
            if not isinstance(tensor, LookupTable) and not all_finite(tensor):
                raise WorkshopError(damaged(f"'{key[name]}' in {path}"))
    return weights, check


def damaged(tensor):  # "'name' in path" -> the message for its NaN or infinity
    return (f"tensor {tensor} holds NaN or infinity; the checkpoint is damaged: download or "
            "install it again")


def working(array, dtype, table=None):
    # array, dtype, "'name' in path" if it is an embedding table (a row per token id) -> array-like
    """`array` in the working dtype: an embedding table (`table`) as a LookupTable (read
    by rows, widened exactly if float32 -> float64); any other, itself if already in the
    dtype, else a converted copy."""
    if table is not None and np.can_cast(array.dtype, dtype, "safe"):
        return LookupTable(array, np.dtype(dtype), table)
    with np.errstate(over="ignore"):  # float64 past float32's range: inf, refused by the
        return array.astype(dtype, copy=False)  # forward's overflow check, no numpy warning


class LookupTable:
    """An embedding table whose rows come out in the working dtype, checked for NaN and
    infinity, when indexed by token ids.

    A forward pass reads only its sentence's rows: converting MiniLM's whole [30522, 384] table
    to float64 for Module 3 wrote 94 MB (0.03-0.3 s), and checking all of it at load summed
    47 MB; a widening conversion is exact, so each row is the same numbers either way, and a
    damaged row is refused when a sentence reads it (one that no sentence reads harms none).
    np.asarray(table) converts it all.
    Example: LookupTable(np.ones((3, 2), np.float32), np.dtype("float64"))[[0, 2]]
    -> float64 [[1., 1.], [1., 1.]].
    """

    def __init__(self, stored, dtype, where="the embedding table"):
        # [n_vocab, d_model] array, the working dtype, "'name' in path" for error messages
        self.stored, self.dtype, self.where = stored, dtype, where
        self.shape, self.ndim, self.size = stored.shape, stored.ndim, stored.size

    def __getitem__(self, index):  # ids [T] -> [T, d_model]; an id -> [d_model]
        rows = self.stored[index].astype(self.dtype, copy=False)
        if not all_finite(rows):
            raise WorkshopError(damaged(self.where))
        return rows

    def __len__(self):
        return len(self.stored)

    def __array__(self, dtype=None, copy=None):  # np.asarray(table): every row converted
        if copy is False:
            raise ValueError("a LookupTable's rows are converted: they cannot come uncopied")
        return self.stored.astype(dtype or self.dtype)


def load_tokenizer(path):  # Path -> tokenizers.Tokenizer
    """The model's own tokenizer.json, exactly as it ships, but with padding and truncation
    switched off (MiniLM's pads every sentence to 128 tokens): model.encode then gives the
    sentence's tokens plus the special tokens the model itself adds ([CLS], [SEP])."""
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises plain Exception on a malformed file
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise WorkshopError(f"cannot read {path} ({reason}); the tokenizer file is corrupt") \
            from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def load_folder(folder, dtype="float32"):  # path -> (ModelConfig, weights, Tokenizer)
    """Check the folder, then read its config, weights and tokenizer.

    The weights' header is read and their pages mapped here; their check for NaN and
    infinity (a sum over every tensor but the word table, without the GIL) runs on a second
    thread while this one reads the tokenizer (holding the GIL): docs/benchmarks.md. A
    tokenizer's error still comes first, as when the two were read one after the other.
    """
    import threading

    from attention_workshop.real.formats.shards import weights_file

    folder = check_folder(folder)
    cfg = read_config(folder / "config.json")
    try:
        weights, check = read_weights(weights_file(folder), cfg, dtype)
        late = None
    except WorkshopError as exc:
        weights, check, late = None, (lambda: None), exc  # raised after the tokenizer's
    failed = []  # the check's exception, if it raised one

    def check_weights():
        try:
            check()
        except BaseException as exc:  # handed to this thread, raised below
            failed.append(exc)
    reader = threading.Thread(target=check_weights, name="weights check", daemon=True)
    reader.start()
    try:
        tokenizer = load_tokenizer(folder / "tokenizer.json")
        checks.check_token_ids(folder / "tokenizer.json", tokenizer, cfg.n_vocab)
    finally:
        reader.join()
    if late is not None:
        raise late
    if failed:
        raise failed[0]
    return cfg, weights, tokenizer
