"""One word's blend in slow motion, as text: every product computed from the numbers shown.

Each ingredient's row of X (or, for the wired head with --wv, of V: as its table prints
it, three decimals) times the word's
weight for it (as its recipe prints it, three decimals), each product rounded to three
decimals, then the column sums. So every line is true as printed: 0.317 x 0.9 = 0.285. The
weights behind the printed recipe carry more digits, so a column sum can differ from the
word's full-precision output by a unit or two in the last decimal; the table then says so.
"""

import textwrap

from attention_workshop.explore.compute import ingredients, slow_motion
from attention_workshop.report import fmt_list, matrix_lines, named_vector, shown, shown_product


def blend_lines(ex, head, i):  # Exploration, "raw" | "wired", position -> lines
    """Example (raw head, bank in "the river bank"): '    0.317 x river      0.285   0.000 ...'
    and a last line '    = column sums      0.434 ...' followed by bank's full-precision output."""
    recipe = getattr(ex, head)["weights"][i]  # [T]
    rows = ingredients(ex, head)  # [T, d_model]: X, or the wired head's V = X @ W_V
    _, output = slow_motion(recipe, rows)  # [d_model]: the blend at full precision
    weights = [shown(w) for w in recipe]
    cells = [[shown_product(w, shown(x)) for x in row] for w, row in zip(weights, rows,
                                                                         strict=True)]
    sums = [sum(column) for column in zip(*cells, strict=True)]  # exact: 3-decimal numbers
    word = ex.tokens[i]
    where = f" (position {i})" if ex.tokens.count(word) > 1 else ""
    agree = all(s == shown(v) for s, v in zip(sums, output, strict=True))
    labels = [f"{w} x {t}" for w, t in zip(weights, ex.tokens, strict=True)]
    last = f"= {word}'s output" if agree else "= column sums"
    width = max(8, *(len(a) + 2 for a in ex.axes))
    lines = [f"  slow motion, {head} head: {word}{where}'s recipe {fmt_list(recipe)} "
             f"over {', '.join(ex.tokens)}",
             f"  each row of {'X' if rows is ex.X else 'V'} times its weight, as printed; the last "
             "line adds each column:",
             *matrix_lines([*labels, last], ex.axes, [*cells, sums],
                           label_width=max(len(label) for label in [*labels, last]) + 2,
                           width=width)]
    if not agree:
        lines += textwrap.wrap(f"{word}'s output at full precision: "
                               f"{named_vector(ex.axes, output)} (the weights behind the printed "
                               "ones carry more digits)", 100, initial_indent="    ",
                               subsequent_indent="      ")
    return lines
