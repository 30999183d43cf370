"""A column of a slow-motion blend, worked the way a learner does it by hand: each printed
weight times each printed row value, each product rounded to three decimals, then the sum.

Every "a x b = c" and "a + b = c" a quiz prints comes from here, so it is true as printed.
Example: terms([0.18494, 0.31735, 0.49771], [0.0, 0.9, 0.3]) -> the products 0.000, 0.285
and 0.149 of 0.185 x 0.0, 0.317 x 0.9 and 0.498 x 0.3; added_up(those, 0.43497) ->
'0.000 + 0.285 + 0.149 = 0.434 with the printed shares (unrounded: 0.435)'.
"""

from attention_workshop.report import shown, shown_product


def terms(recipe, column, x_decimals=1):  # [T] weights, [T] row values -> [(w, x, w x x)]
    """Each (printed weight, printed value, their product as printed), as Decimals."""
    out = []
    for w, x in zip(recipe, column, strict=True):
        w, x = shown(w), shown(x, x_decimals)
        out.append((w, x, shown_product(w, x)))
    return out


def products_text(worked, labels=None):  # -> "0.317 x 0.9 = 0.285, ..." (optionally labelled)
    labels = labels or [""] * len(worked)
    return ", ".join(f"{label + ' ' if label else ''}{w} x {x} = {p}"
                     for label, (w, x, p) in zip(labels, worked, strict=True))


def added_up(worked, exact):  # [(w, x, p)], the unrounded sum -> "a + b = c ..."
    """The products' sum, exact at three decimals; when the unrounded blend prints otherwise,
    both are given (rounded shares drift by a unit in the last decimal)."""
    total = sum(p for _, _, p in worked)
    text = " + ".join(str(p) for _, _, p in worked) + f" = {total}"
    if total != shown(exact):
        text += f" with the printed shares (unrounded: {exact:.3f})"
    return text
