"""report.py's tables: matrix_lines against the format mini-language, number by number."""

import numpy as np
import pytest

from attention_workshop.report import Log, matrix_lines, section_spans


@pytest.mark.parametrize("dtype", [np.float32, np.float64, "list"])
@pytest.mark.parametrize(("width", "decimals"), [(8, 3), (9, 6), (5, 1)])
def test_each_number_is_formatted_as_the_format_spec_says(dtype, width, decimals):
    rng = np.random.default_rng(width * decimals)
    m = rng.normal(size=(7, 9)) * 10.0 ** rng.integers(-6, 7, size=(7, 9))
    m[0, :6] = [0.0, -0.0, 0.0005, -0.0005, 0.0015, 2.5e-4]  # ties and signed zeros
    m[1, :3] = [np.nan, np.inf, -np.inf]
    m = m.tolist() if dtype == "list" else m.astype(dtype)
    rows, cols = [f"r{i}" for i in range(7)], [f"c{j}" for j in range(9)]
    lines = matrix_lines(rows, cols, m, indent=2, width=width, decimals=decimals)
    assert lines[0] == "  " + " " * 7 + "".join(f"{c:>{width}}" for c in cols)
    for label, row, line in zip(rows, m, lines[1:], strict=True):
        assert line == "  " + f"{label:<7}" + "".join(f"{v:>{width}.{decimals}f}" for v in row)


def test_by_hand():
    assert matrix_lines(["the"], ["the", "bank"], [[1.0, 0.0005]]) == [
        "                the    bank", "    the       1.000   0.001"]


# --- the log's sections: numbered once, pinned in their own count -----------------------------


def written(*steps):  # a Log after steps: ("section", n) or ("line",), worked by hand below
    log = Log()
    for step in steps:
        if step[0] == "section":
            log.section(step[1], f"title {step[1]}")
        else:
            log("  content")
    return log


def test_a_section_number_heads_one_section_only():
    log = written(("section", 6), ("line",), ("section", 7))
    assert log.starts == {6: 1, 7: 3}
    with pytest.raises(AssertionError, match=r"^log layout: \[S6\] already heads line 1;"):
        log.section(6, "again")
    assert len(log.lines) == 3  # nothing written


def test_expect_line_in_a_section_counts_its_header_as_line_1():
    log = written(("line",), ("line",), ("section", 7), ("line",))  # [S7] is line 3
    log.expect_line(3, section=7)  # the next line is log line 5, [S7]'s third
    log.expect_line(5)
    with pytest.raises(AssertionError, match=r"next line is line 3 of \[S7\], expected 2$"):
        log.expect_line(2, section=7)
    with pytest.raises(AssertionError, match=r"the section being written is not \[S6\]$"):
        log.expect_line(3, section=6)


def test_expect_line_in_an_earlier_section_fails():
    log = written(("section", 1), ("line",), ("section", 2))
    with pytest.raises(AssertionError, match=r"the section being written is not \[S1\]$"):
        log.expect_line(3, section=1)


def test_expect_section_holds_until_the_number_is_used():
    log = written(("line",), ("section", 90), ("line",))  # a module inserted with [S90]
    log.expect_section(6)  # wherever [S6] lands, it is not taken
    with pytest.raises(AssertionError, match=r"\[S90\] already heads line 2, expected it next "
                                             r"\(line 4\)$"):
        log.expect_section(90)


@pytest.mark.parametrize(
    ("lines", "spans"),
    [
        (["[S1] a", "  x", "[S2] b"], {1: [(1, 2)], 2: [(3, 3)]}),
        (["  before", "[S3] a", "  x", "  y"], {3: [(2, 4)]}),  # lines before any section
        (["[S1] a", "  [S2] indented", "[S1] again"], {1: [(1, 2), (3, 3)]}),  # column 0 only
        (["[S01] a", "[S0] b", "[S" + "0" * 5000 + "7] c"], {1: [(1, 1)], 0: [(2, 2)],
                                                             7: [(3, 3)]}),
        (["[S1] a", "[S" + "9" * 5000 + "] b", "  y"], {1: [(1, 1)]}),  # a bound, no section
        (["[S] a", "[Sx] b", "S1 c"], {}),
        ([], {}),
    ],
)
def test_section_spans(lines, spans):
    assert section_spans(lines) == spans
