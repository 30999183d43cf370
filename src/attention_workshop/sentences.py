"""The checks every sentence a user types goes through (`explore`, `real`), before any work.

A sentence is refused, in one line that says why, when it is
- not text: bytes the command line could not decode (a Latin-1 "caf\\xe9", or any non-ASCII
  sentence where the locale is not UTF-8), which Python keeps as lone surrogates;
- empty, or only spaces;
- longer than MAX_CHARS characters (explore then also counts words, real counts tokens);
- without a single visible character: only control characters, zero-width (format)
  characters such as U+200B, or combining marks such as U+0301 hold no word.
"""

import os
import unicodedata

from attention_workshop.errors import WorkshopError
from attention_workshop.reading import printable

MAX_CHARS = 5000  # far above what a model's 512 tokens or explore's words need
VISIBLE = "LNPS"  # Unicode categories that make a word: letters, numbers, punctuation, symbols


def check_sentence(sentence):  # str -> None, or WorkshopError
    """Example: check_sentence("\\u200b\\u0301") -> WorkshopError("the sentence '\\u200b\\u0301'
    holds no word: only invisible, control or combining characters; ...")."""
    undecoded = "".join(c for c in sentence if "\ud800" <= c <= "\udfff")
    if undecoded:  # argv bytes Python could not decode, kept as lone surrogates (U+DC80-DCFF)
        raise WorkshopError(f"the sentence '{printable(sentence, 60)}' holds bytes that are "
                            f"not text here ({printable(undecoded, 20)}); {_decode_todo(sentence)}")
    if not sentence.strip():
        raise WorkshopError('the sentence is empty; give a few words, e.g. "the river bank"')
    if len(sentence) > MAX_CHARS:
        raise WorkshopError(f"the sentence is {len(sentence)} characters long; at most "
                            f"{MAX_CHARS} characters are read: shorten it")
    if not any(unicodedata.category(c)[0] in VISIBLE for c in sentence):
        shown = sentence.encode("unicode_escape").decode("ascii")
        raise WorkshopError(f"the sentence '{printable(shown, 60)}' holds no word: only "
                            "invisible, control or combining characters; give a few words, "
                            'e.g. "the river bank"')


def _decode_todo(sentence):  # what to do about undecodable bytes: a locale, or an encoding
    try:
        os.fsencode(sentence).decode("utf-8")
    except (UnicodeError, ValueError):
        return "type it as UTF-8 text"
    return "they are UTF-8, but the locale is not: run with PYTHONUTF8=1 or a UTF-8 LANG"
