"""The tokenizer a GGUF file describes, built with the `tokenizers` package: byte-level BPE.

A GGUF holds no tokenizer.json, only its parts as metadata: tokenizer.ggml.tokens (id ->
token, spelled in GPT-2's byte alphabet: "Ġbank" is " bank"), tokenizer.ggml.merges ("Ġ b",
best first), tokenizer.ggml.token_type (1 normal, 3 control, 4 user-defined, ...). Built here:
a BPE model on those, GPT-2's byte-level pre-tokenizer and decoder, the control tokens
(<|im_start|>, <|im_end|>, ...) as special tokens matched whole in the text, the user-defined
ones as plain added tokens. No BOS is added to a plain text (SmolLM2's add_bos_token is false;
its chat template writes <|im_start|> itself).

transformers' GGUF tokenizer is the reference the tests compare ids with. The metadata names
SmolLM2's pre-tokenizer "smollm", for which llama.cpp splits digits apart; transformers (and
so this) splits as GPT-2 does. The two give different ids for a run of spaces before a digit:
"  7 days" is here [216, 216, 39, 2009], as in transformers.

Example: gguf_tokenizer(metadata, "m.gguf").encode("the river bank").ids -> [1195, 4626, 5461].
"""

import functools

from attention_workshop.reading import printable, refuse

# tokenizer.ggml.pre -> split as GPT-2 (the names transformers also splits that way); another
# name (llama-bpe, qwen2, ...) means another split, which this does not build: refused
PRE_TOKENIZERS = ("gpt2", "smollm")
CONTROL, USER_DEFINED = 3, 4
TODO = "give a GGUF with a byte-level BPE tokenizer (tokenizer.ggml.model gpt2)"


def gguf_tokenizer(metadata, path):  # GGUF metadata, path (for messages) -> tokenizers.Tokenizer
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    tokens = _strings(metadata, "tokenizer.ggml.tokens", path)
    merges = _strings(metadata, "tokenizer.ggml.merges", path)
    kinds = metadata.get("tokenizer.ggml.token_type")
    model = metadata.get("tokenizer.ggml.model")
    pre = metadata.get("tokenizer.ggml.pre", "gpt2")
    if not isinstance(model, str) or model != "gpt2":
        raise refuse("GGUF file", path, f"its tokenizer is {_shown(model)}; only byte-level BPE "
                     "(gpt2) is read", TODO)
    if not isinstance(pre, str) or pre not in PRE_TOKENIZERS:
        raise refuse("GGUF file", path, f"its pre-tokenizer is {_shown(pre)}; only "
                     f"{', '.join(PRE_TOKENIZERS)} are read", TODO)
    if kinds is None or getattr(kinds, "dtype", None) is None or len(kinds) != len(tokens) \
            or kinds.dtype.kind not in "iu":
        raise refuse("GGUF file", path, "tokenizer.ggml.token_type is not one whole number per "
                     "token", TODO)
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if set("".join(tokens)) <= _alphabet():  # every token already byte-spelled: one pass
        vocab = {token: i for i, token in enumerate(tokens)}  # (49,152: 0.11 -> 0.02 s)
    else:
        vocab = {_spelled(token): i for i, token in enumerate(tokens)}
    if len(vocab) != len(tokens):
        raise refuse("GGUF file", path, f"its {len(tokens)} tokens hold only {len(vocab)} "
                     "different ones", TODO)
    pairs = [tuple(merge.split(" ")) for merge in merges]
    # BPE checks that each merge's two tokens and the one they make are in the vocabulary
    # (48,900 merges: checking them here first took 0.04 s more); the merge it refuses is
    # named by the same check, run only then
    failed = next((m for m, pair in zip(merges, pairs, strict=True) if len(pair) != 2), None)
    try:
        bpe = None if failed else models.BPE(vocab, pairs, fuse_unk=False, byte_fallback=False)
    except Exception as exc:  # tokenizers raises a bare Exception
        failed = next((m for m, pair in zip(merges, pairs, strict=True) if pair[0] not in vocab
                       or pair[1] not in vocab or "".join(pair) not in vocab), None)
        if failed is None:
            raise refuse("GGUF file", path, f"its merges make no BPE model ({exc})",
                         TODO) from None
    if failed is not None:
        raise refuse("GGUF file", path, f"the merge {_shown(failed)} is not two tokens of the "
                     "vocabulary making a third", TODO)
    tokenizer = Tokenizer(bpe)
    tokenizer.pre_tokenizer = byte_level
    tokenizer.decoder = decoders.ByteLevel()
    # a control token spelled outside the byte alphabet is not a text llama.cpp can match
    # whole (and transformers skips it too): only those the vocabulary holds as spelled
    kinds = kinds.tolist()
    tokenizer.add_special_tokens([AddedToken(t, normalized=False, special=True)
                                  for t, kind in zip(tokens, kinds, strict=True)
                                  if kind == CONTROL and t in vocab])
    tokenizer.add_tokens([AddedToken(t, normalized=False, special=False)
                          for t, kind in zip(tokens, kinds, strict=True)
                          if kind == USER_DEFINED and t in vocab])
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _spelled(token):  # a token as the byte-level vocabulary spells it
    """A token the file stores in plain text ("a b" with a real space) spelled in GPT-2's
    byte alphabet ("aĠb"), as transformers does; a token already spelled so is kept."""
    from tokenizers import pre_tokenizers

    if set(token) <= _alphabet():
        return token
    pieces = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False) \
        .pre_tokenize_str(token)
    return "".join(piece for piece, _ in pieces)


@functools.cache
def _alphabet():  # -> the 256 characters of GPT-2's byte alphabet
    from tokenizers import pre_tokenizers

    return frozenset(pre_tokenizers.ByteLevel.alphabet())


def _strings(metadata, key, path):  # -> the list of strings under key, or refused
    value = metadata.get(key)
    if not isinstance(value, list) or key.endswith("tokens") and not value:
        problem = "missing" if value is None else "not a list of strings" if value else "empty"
        raise refuse("GGUF file", path, f"{key} is {problem}", TODO)
    return value


def _shown(value):  # a metadata value on one line, cut
    return printable(repr(value), 60)
