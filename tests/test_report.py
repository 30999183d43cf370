"""report.py's tables: matrix_lines against the format mini-language, number by number."""

import numpy as np
import pytest

from attention_workshop.report import matrix_lines


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
