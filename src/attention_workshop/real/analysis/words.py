"""A word of the learner's sentence -> the model's tokens that spell it.

The tokenizer may split a word ("fishermen" -> fisher, ##men) or glue a space to it (GPT-2's
"Ġbank"); its character offsets say which tokens cover which characters, so a word is
found by where it sits in the sentence, not by how its tokens are spelled.
"""

import re

from attention_workshop.errors import WorkshopError


def word_tokens(tokenizer, sentence, word):  # -> [[positions of one occurrence], ...]
    """Every occurrence of `word` (whole word, any case) as the token positions covering it.

    Example (MiniLM): word_tokens(tok, "the river bank", "Bank") -> [[3]] ([CLS] is 0).
    A word the sentence does not hold is a WorkshopError naming the words it does hold.
    """
    encoding = tokenizer.encode(sentence)
    special = encoding.special_tokens_mask
    found = []
    for m in re.finditer(rf"(?<!\w){re.escape(word.strip())}(?!\w)", sentence, re.IGNORECASE):
        covering = [i for i, (start, end) in enumerate(encoding.offsets)
                    if not special[i] and start < m.end() and end > m.start()]
        if covering and word.strip():
            found.append(covering)
    if not found:
        words = list(dict.fromkeys(re.findall(r"\w+", sentence.lower())))
        raise WorkshopError(f"'{word}' is not a word of the sentence \"{sentence}\"; choose one "
                            f"of: {', '.join(words)}")
    return found
