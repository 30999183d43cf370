"""Text -> tokens and ids with the model's own tokenizer.json, exactly as it ships.

tokenizer.json files often switch on padding or truncation (MiniLM's pads every
sentence to 128 tokens); both are switched off, so the tokens that come out are the
sentence's tokens, plus the special tokens the model itself adds ([CLS], [SEP]).
"""

from attention_workshop.errors import WorkshopError


def load_tokenizer(path):  # Path -> tokenizers.Tokenizer
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


def check_sentence(sentence):  # str -> None, or WorkshopError
    """Refuse an empty sentence before any model is loaded for it."""
    if not sentence.strip():
        raise WorkshopError('the sentence is empty; give a few words, e.g. "the river bank"')


def encode(tokenizer, sentence, n_ctx):  # Tokenizer, str, int -> (tokens, ids, special)
    """Example (MiniLM): "the river bank" -> ['[CLS]', 'the', 'river', 'bank', '[SEP]'],
    [101, 1996, 2314, 2924, 102], [True, False, False, False, True] (the special tokens).
    A sentence longer than the model's n_ctx positions is an error, never silently cut."""
    check_sentence(sentence)
    encoding = tokenizer.encode(sentence)
    tokens, ids = list(encoding.tokens), list(encoding.ids)
    special = [bool(flag) for flag in encoding.special_tokens_mask]
    if not ids:
        raise WorkshopError(f"the sentence {sentence!r} gives no tokens; try ordinary words")
    if len(ids) > n_ctx:
        raise WorkshopError(f"the sentence is {len(ids)} tokens long, but the model has "
                            f"positions for {n_ctx}; shorten it")
    return tokens, ids, special
