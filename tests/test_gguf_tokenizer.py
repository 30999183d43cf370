"""The tokenizer built from a GGUF's metadata against independent ones.

The reference for SmolLM2 is transformers' GGUF tokenizer (AutoTokenizer.from_pretrained(
folder, gguf_file=...)): its ids are the ones ours must give. llama.cpp would give other ids
for some texts: the file names its pre-tokenizer "smollm", for which llama.cpp splits digits
apart, while transformers (and so ours) splits as GPT-2 does; "  7 days" is one such text.
The tiny file's ids are worked by hand from its merges (tests/tiny_gguf.py)."""

import pytest
from smollm2_reference import reference_tokenizer, smollm2_path
from tiny_gguf import TOKENS, TYPES, write_llama

from attention_workshop.errors import WorkshopError
from attention_workshop.real.formats.gguf_file import open_gguf
from attention_workshop.real.formats.gguf_tokenizer import gguf_tokenizer

TEXTS = [
    "the river bank", "the money bank", "The River Bank.", "bank", " bank", "  bank",
    "   leading spaces", "trailing spaces   ", "a  b   c    d", "\tone tab", "two\t\ttabs",
    "line one\nline two", "\n\nblank lines\n\n", "crlf\r\nline", " \n \t mixed \r\n",
    "  7 days", "7 days", " 7", "   42", "3.14159", "1234567890", "x = 12 + 345 * 6789",
    "1,000,000 and 2 000 000", "2026-12-01 14:59:50", "version 0.19.0", "$5.99 / 10%",
    "naïve café résumé", "Zürich Straße", "日本語のテキスト", "中文分词测试", "한국어",
    "Привет, мир", "مرحبا بالعالم", "עברית", "ελληνικά", "emoji 🤗🚀 end", "👩‍👩‍👧‍👦 family",
    "flags 🇫🇷🇩🇪", "math ∑ ∫ √ ≠ ∞", "zero\u200bwidth", "combining e\u0301",
    "def f(x):\n    return x ** 2\n", "for (int i = 0; i < n; ++i) { s += a[i]; }",
    "import numpy as np", "<div class=\"x\">hi</div>", "SELECT * FROM t WHERE id = 7;",
    "https://example.com/a?b=c&d=e", "user@example.com", "don't won't it's we're",
    "ALL CAPS SHOUTING", "CamelCaseName snake_case_name", "!!!???...", "((nested))",
    "<|im_start|>user\nhi<|im_end|>",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>"
    "\n<|im_start|>assistant\n",
    "<|endoftext|>after", "text<|im_end|>", "<|im_start|><|im_end|>", "<repo_name>x<file_sep>",
    "<|im_start", "im_start|>", "<|IM_START|>", "", " ", "\n",
]


@pytest.fixture(scope="module")
def ours():
    path = smollm2_path()
    return gguf_tokenizer(open_gguf(path).metadata, path)


def test_ids_equal_transformers_gguf_tokenizer(ours):
    theirs = reference_tokenizer()
    assert len(TEXTS) >= 50
    mismatched = [text for text in TEXTS
                  if ours.encode(text).ids != theirs(text, add_special_tokens=True)["input_ids"]]
    assert mismatched == []


def test_decode_round_trips(ours):
    theirs = reference_tokenizer()
    for text in TEXTS:
        ids = ours.encode(text).ids
        assert ours.decode(ids, skip_special_tokens=False) == text
        assert ours.decode(ids, skip_special_tokens=False) == theirs.decode(ids)


def test_chat_tokens_are_single_special_ids_and_no_bos_is_added(ours):
    assert ours.encode("<|im_start|>user\nhi<|im_end|>").ids[0] == 1
    assert ours.encode("<|im_start|>user\nhi<|im_end|>").ids[-1] == 2
    assert ours.encode("hello").ids == reference_tokenizer()("hello")["input_ids"]
    assert 1 not in ours.encode("hello").ids and len(ours.encode("hello").ids) == 1
    assert ours.decode(ours.encode("<|im_start|>hi").ids, skip_special_tokens=True) == "hi"
    assert ours.get_vocab_size() == 49152


def test_tiny_vocabulary_by_hand(tmp_path):
    """Merges in order: t h -> th, th e -> the, Ġ b -> Ġb, a n -> an, Ġb an -> Ġban,
    Ġban k -> Ġbank, r i -> ri. "the bank river!" splits (GPT-2's pattern) into "the",
    " bank", " river", "!"; " river" merges only r i: Ġ, ri, v, e, r."""
    write_llama(tmp_path / "t.gguf")
    tokenizer = gguf_tokenizer(open_gguf(tmp_path / "t.gguf").metadata, tmp_path / "t.gguf")
    encoded = tokenizer.encode("the bank river!")
    assert encoded.tokens == ["the", "Ġbank", "Ġ", "ri", "v", "e", "r", "!"]
    assert encoded.ids == [TOKENS.index(t) for t in encoded.tokens]
    chat = tokenizer.encode("<|im_start|>the<think>ban<|im_end|>")
    assert chat.tokens == ["<|im_start|>", "the", "<think>", "b", "an", "<|im_end|>"]
    # <think> is user-defined: matched whole, but kept when special tokens are skipped
    assert tokenizer.decode(chat.ids, skip_special_tokens=True) == "the<think>ban"
    assert tokenizer.decode(encoded.ids) == "the bank river!"


@pytest.mark.parametrize("meta, message", [
    ({"tokenizer.ggml.model": "llama"}, "its tokenizer is 'llama'; only byte-level BPE"),
    ({"tokenizer.ggml.pre": "llama-bpe"}, "its pre-tokenizer is 'llama-bpe'; only gpt2"),
    ({"tokenizer.ggml.model": [1, 2]}, "its tokenizer is array([1, 2]"),
    ({"tokenizer.ggml.pre": [1, 2]}, "its pre-tokenizer is array([1, 2]"),
    ({"tokenizer.ggml.token_type": None}, "token_type is not one whole number per token"),
    ({"tokenizer.ggml.token_type": [1, 1]}, "token_type is not one whole number per token"),
    ({"tokenizer.ggml.tokens": TOKENS + ["the"], "tokenizer.ggml.token_type": TYPES + [1]},
     "27 tokens hold only 26 different ones"),
    ({"tokenizer.ggml.merges": None}, "tokenizer.ggml.merges is missing"),
    ({"tokenizer.ggml.merges": ["t h e"]}, "the merge 't h e' is not two tokens"),
])
def test_tokenizers_we_do_not_build_are_refused(tmp_path, meta, message):
    write_llama(tmp_path / "t.gguf", meta=meta)
    with pytest.raises(WorkshopError) as caught:
        gguf_tokenizer(open_gguf(tmp_path / "t.gguf").metadata, tmp_path / "t.gguf")
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert str(caught.value).startswith("cannot read GGUF file ")


def test_a_merge_outside_the_vocabulary_is_refused(tmp_path):
    write_llama(tmp_path / "t.gguf", tokens=[t for t in TOKENS if t != "ri"])
    with pytest.raises(WorkshopError, match="the merge 'r i' is not two tokens"):
        gguf_tokenizer(open_gguf(tmp_path / "t.gguf").metadata, tmp_path / "t.gguf")


def test_tiny_vocabulary_as_transformers_builds_it(tmp_path):
    """A token stored as plain text ("x y", a real space) is spelled in the byte alphabet
    ("xĠy") in the vocabulary, as transformers' GGUF loader spells it; ids of texts and the
    decoded token agree with transformers' tokenizer of the same tiny file."""
    transformers = pytest.importorskip("transformers")
    tokens = TOKENS + ["x y"]
    write_llama(tmp_path / "t.gguf", tokens=tokens,
                meta={"tokenizer.ggml.token_type": TYPES + [1]})
    ours = gguf_tokenizer(open_gguf(tmp_path / "t.gguf").metadata, tmp_path / "t.gguf")
    theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path), gguf_file="t.gguf")
    assert ours.token_to_id("xĠy") == theirs.convert_tokens_to_ids("xĠy") == len(TOKENS)
    assert ours.decode([len(TOKENS)]) == theirs.decode([len(TOKENS)]) == "x y"
    for text in ["the bank river!", "<|im_start|>the<|im_end|>", "a<think>b", "  the\n"]:
        assert ours.encode(text).ids == theirs(text)["input_ids"], text
