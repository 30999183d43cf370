"""The line-numbered results log and the one table style every module prints with.

Lessons cite the log by line number: "results.log lines 64-71" (Modules 0-2, lines 1-80,
which never move) or, relative to a section, "results.log [S11] lines 2-4" (line 1 is the
section's header line). `Log.expect_line` pins a cited block to its line, absolute or in
its section, so a change that shifts a citation fails loudly instead of silently; a module
inserted between two others moves only absolute line numbers after it, never a section's.
"""

import re
from decimal import ROUND_HALF_UP, Decimal

SECTION_HEAD = re.compile(r"\[S(\d+)\]")  # a section's header line starts so, at column 0
SECTION_DIGITS = 9  # a longer number heads no section a citation can name (int() stays cheap)


class Log:
    """An in-memory list of lines; `text()` is what gets written to results.log."""

    def __init__(self):
        self.lines = []
        self.starts = {}  # section number -> the 1-based line of its header

    def __call__(self, text=""):
        self.lines.append(text)

    def extend(self, lines):
        self.lines.extend(lines)

    def section(self, number, title):
        """A section header at column 0, e.g. `[S5] why scores are divided by sqrt(d_k)`.
        A number heads one section only: "[S7] line 2" must name one line."""
        if number in self.starts:
            raise AssertionError(f"log layout: [S{number}] already heads line "
                                 f"{self.starts[number]}; give the new section its own number")
        self.starts[number] = len(self.lines) + 1
        self(f"[S{number}] {title}")

    def expect_line(self, number, section=None):
        """Assert the next line written will be line `number` (1-based) of the log or, given
        `section`, line `number` of section [S`section`], the one being written (its header
        is line 1). Example: after log.section(7, "heads") and log("  a"), the next line is
        line 3 of [S7]: log.expect_line(3, section=7) holds, log.expect_line(2, section=7)
        raises."""
        actual = len(self.lines) + 1
        if section is None:
            if actual != number:
                raise AssertionError(f"log layout drifted: next line is {actual}, "
                                     f"expected {number}")
            return
        start = self.starts.get(section)
        if start is None or start != max(self.starts.values()):
            raise AssertionError(f"log layout drifted: the section being written is not "
                                 f"[S{section}]")
        if actual - start + 1 != number:
            raise AssertionError(f"log layout drifted: next line is line {actual - start + 1} "
                                 f"of [S{section}], expected {number}")

    def expect_section(self, number):
        """Assert the next line written may head section [S`number`]: no line heads it yet.
        A module pins its first line so, not by its absolute number, so that a module
        inserted before it moves none of its section-relative citations.
        Example: log.expect_section(6) holds on a new Log; after log.section(6, "x") it raises."""
        if number in self.starts:
            raise AssertionError(f"log layout drifted: [S{number}] already heads line "
                                 f"{self.starts[number]}, expected it next (line "
                                 f"{len(self.lines) + 1})")

    def text(self):
        return "\n".join(self.lines) + "\n"


def section_spans(lines):  # [str] -> {number: [(first, last), ...]}: 1-based, inclusive
    """Where each section of a log stands: from its header line to the line before the next
    header (or the log's end). A number heading two sections lists both, so that a citation
    of it can say so. One pass, whatever the log's length.
    Example: section_spans(["[S1] a", "  x", "[S2] b"]) -> {1: [(1, 2)], 2: [(3, 3)]}."""
    heads = [(i + 1, m[1]) for i, line in enumerate(lines)
             if line.startswith("[S") and (m := SECTION_HEAD.match(line))]
    spans = {}
    for k, (first, digits) in enumerate(heads):
        last = heads[k + 1][0] - 1 if k + 1 < len(heads) else len(lines)
        digits = digits.lstrip("0") or "0"
        if len(digits) <= SECTION_DIGITS:
            spans.setdefault(int(digits), []).append((first, last))
    return spans


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
