"""What `ablate`, `real --ablate` and `generate --ablate` share: a list of heads as the user
writes it (L18H6,L17H4), and the checks that a loss can be measured (a decoder, a text of two
tokens or more). Its own module: ablate.py reads real.py's helpers, so real.py taking these
from ablate.py would be an import circle.
"""

import re

_HEAD = re.compile(r"L(-?\d+)H(-?\d+)", re.IGNORECASE)


def parse_heads(text, option="--heads"):  # "L18H6,L17H4" -> [(18, 6), (17, 4)]
    """Example: parse_heads("L18H6, l17h4") -> [(18, 6), (17, 4)]; "18:6" -> WorkshopError
    "'18:6' is not a head; write L<layer>H<head>, e.g. L18H6". `option` names the option in
    the messages (generate's is --ablate)."""
    from attention_workshop.errors import WorkshopError
    from attention_workshop.reading import printable

    parts = [part.strip() for part in text.split(",")]
    if not any(parts):
        raise WorkshopError(f"{option} names no head; give one or more, e.g. {option} "
                            "L18H6,L17H4")
    heads = []
    for part in parts:
        m = _HEAD.fullmatch(part)
        if m is None:
            raise WorkshopError(f"{option}: {printable(part, 40)!r} is not a head; write "
                                "L<layer>H<head>, layers and heads from 0, e.g. L18H6")
        layer, head = int(m[1]), int(m[2])
        if layer < 0 or head < 0:
            raise WorkshopError(f"{option}: {part} has a negative number; layers and heads "
                                "count from 0")
        if (layer, head) in heads:
            raise WorkshopError(f"{option}: L{layer}H{head} is listed twice; list each head once")
        heads.append((layer, head))
    return heads


def text_ids(model, text):  # Model, --text -> its ids (at least two: a loss needs a next one)
    from attention_workshop.errors import WorkshopError

    ids = model.encode(text)
    if len(ids) < 2:
        raise WorkshopError("--text gives one token: a loss needs a next token; give a few words")
    return ids


def check_decoder(model):  # -> None, or WorkshopError: an encoder forecasts no next token
    from attention_workshop.errors import WorkshopError

    if not model.config.causal:
        raise WorkshopError(f"{model.name} is an encoder: its outputs are no next-token "
                            "forecast, so there is no loss to compare; give a decoder, e.g. "
                            "--model smollm2")
