"""The line-numbered results log and the one table style every module prints with.

Lessons cite the log by line number, so `Log.expect_line` pins each cited block
to its line: a change that shifts a citation fails loudly instead of silently.
"""

from decimal import ROUND_HALF_UP, Decimal


class Log:
    """An in-memory list of lines; `text()` is what gets written to results.log."""

    def __init__(self):
        self.lines = []

    def __call__(self, text=""):
        self.lines.append(text)

    def extend(self, lines):
        self.lines.extend(lines)

    def section(self, number, title):
        """A section header at column 0, e.g. `[S5] why scores are divided by sqrt(d_k)`."""
        self(f"[S{number}] {title}")

    def expect_line(self, number):
        """Assert the next line written will be line `number` (1-based)."""
        actual = len(self.lines) + 1
        if actual != number:
            raise AssertionError(f"log layout drifted: next line is {actual}, expected {number}")

    def text(self):
        return "\n".join(self.lines) + "\n"


def fmt_list(values, decimals=3):
    """Example: fmt_list([0.1849, 0.3168]) -> '[0.185, 0.317]'."""
    return "[" + ", ".join(f"{v:.{decimals}f}" for v in values) + "]"


def matrix_lines(row_labels, col_labels, matrix, indent=4, label_width=7, width=8, decimals=3):
    """A labelled table, one line per row, numbers right-aligned.

    Example (indent 4):
                    the   river    bank
        the       1.000   0.000   0.000
    """
    pad = " " * indent
    head = pad + " " * label_width + "".join(f"{c:>{width}}" for c in col_labels)
    cell = f"%{width}.{decimals}f"  # printf's form of f"{v:>{width}.{decimals}f}": the same
    rows = [  # digits, one formatting call a row (faster: docs/benchmarks.md)
        pad + f"{label:<{label_width}}" + cell * len(row) % tuple(map(float, row))
        for label, row in zip(row_labels, matrix, strict=True)
    ]
    return [head, *rows]


def named_vector(axes, vector, decimals=3):
    """Example: named_vector(("water", "money"), [0.435, 0.149]) -> 'water=0.435  money=0.149'."""
    return "  ".join(f"{a}={v:.{decimals}f}" for a, v in zip(axes, vector, strict=True))


def shown(value, decimals=3):  # float -> Decimal, exactly the number printed
    """Example: shown(0.31735) -> Decimal('0.317'), what f"{0.31735:.3f}" prints."""
    return Decimal(f"{value:.{decimals}f}")


def shown_product(a, b, decimals=3):  # two printed numbers (Decimal) -> their product, printed
    """A product computed from the factors as printed, so "a x b = c" holds as printed.
    Example: shown_product(shown(0.31735), shown(0.9, 1)) -> Decimal('0.285') (0.317 x 0.9 =
    0.2853), where the unrounded 0.31735 x 0.9 would print 0.286."""
    return (Decimal(a) * Decimal(b)).quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
