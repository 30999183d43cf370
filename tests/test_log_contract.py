"""results.log keeps the lessons' contract: every quoted line at the line number they cite.

EXPECTED holds the log lines as the lessons print them (program output, quoted in
the lessons), keyed by the line number the lessons cite. It is the independent
reference: none of it was copied from our own run.
"""


import pytest

from attention_workshop.report import Log
from attention_workshop.workshop import compute

EXPECTED = {
    28: "  input check: 'bank' row identical in both sentences -> True",
    29: '  score matrix S = X @ X.T for "the river bank":',
    30: "                the   river    bank",
    31: "    the       1.000   0.000   0.000",
    32: "    river     0.000   0.900   0.540",
    33: "    bank      0.000   0.540   0.990",
    34: "  symmetric? True (S[i,j] always equals S[j,i] here)",
    35: '  attention weights (each row softmaxed) for "the river bank":',
    36: "                the   river    bank",
    37: "    the       0.576   0.212   0.212",
    38: "    river     0.193   0.475   0.332",
    39: "    bank      0.185   0.317   0.498",
    40: '  attention weights for "the money bank":',
    41: "                the   money    bank",
    42: "    the       0.576   0.212   0.212",
    43: "    money     0.213   0.483   0.305",
    44: "    bank      0.195   0.280   0.525",
    45: "  bank's output vector (water, money, place, filler):",
    46: '    in "the river bank": water=0.435  money=0.149  place=0.543  filler=0.185',
    47: '    in "the money bank": water=0.158  money=0.409  place=0.501  filler=0.195',
    48: "  water vs money, river sentence: 0.435 vs 0.149",
    49: "  water vs money, money sentence: 0.158 vs 0.409",
    54: "  queries and keys for \"the river bank\" (2 channels: topic, place):",
    55: "    the     q = [ 0.00,  1.50]   k = [ 0.00,  0.00]",
    56: "    river   q = [ 0.60,  0.00]   k = [ 0.90,  0.30]",
    57: "    bank    q = [ 1.80,  0.00]   k = [ 0.60,  0.90]",
    58: "  score matrix Q @ K.T:",
    59: "                the   river    bank",
    60: "    the       0.000   0.450   1.350",
    61: "    river     0.000   0.540   0.360",
    62: "    bank      0.000   1.620   1.080",
    63: "  symmetric? False  (bank->river = 1.620, river->bank = 0.360)",
    75: "[S5] why scores are divided by sqrt(d_k)",
    76: "  random q, k entries drawn from N(0,1); 8 keys per row; 2000 rows per size",
    77: "  d =   4: dot-product std =   1.97  (sqrt(d) =  2.00) | avg top weight: "
        "unscaled = 0.522, scaled = 0.338",
    78: "  d =  16: dot-product std =   4.02  (sqrt(d) =  4.00) | avg top weight: "
        "unscaled = 0.750, scaled = 0.356",
    79: "  d =  64: dot-product std =   8.01  (sqrt(d) =  8.00) | avg top weight: "
        "unscaled = 0.879, scaled = 0.362",
    80: "  d = 256: dot-product std =  16.03  (sqrt(d) = 16.00) | avg top weight: "
        "unscaled = 0.941, scaled = 0.366",
}

# Lines 64-71 hold these seven lines, contiguous, somewhere inside the range.
WIRED_WEIGHTS = [
    "  weights after dividing by sqrt(2) and softmaxing each row:",
    "                the   river    bank",
    "    the       0.201   0.276   0.522",
    "    river     0.266   0.390   0.344",
    "    bank      0.159   0.500   0.341",
    "  bank's row,  raw vs wired: [0.185, 0.317, 0.498] -> [0.159, 0.500, 0.341]",
    "  'the's row,  raw vs wired: [0.576, 0.212, 0.212] -> [0.201, 0.276, 0.522]",
]


@pytest.fixture(scope="module")
def lines():
    log = Log()
    compute(log)
    return log.lines


@pytest.mark.parametrize("number", sorted(EXPECTED))
def test_cited_line(lines, number):
    assert lines[number - 1] == EXPECTED[number]


def test_wired_weights_block_inside_64_71(lines):
    window = lines[63:71]
    starts = [i for i in range(len(window) - 6) if window[i:i + 7] == WIRED_WEIGHTS]
    assert starts, "the seven wired-weight lines are not contiguous inside lines 64-71"


def test_line_72_is_banks_wired_output_in_line_46_style(lines):
    # 0.552 / 0.102 / 0.457 / 0.159: SPEC's "better than 5 to 1" numbers
    assert lines[71].endswith("water=0.552  money=0.102  place=0.457  filler=0.159")


def test_module0_lines_hold_the_facts_modules_1_and_2_lean_on(lines):
    module0 = "\n".join(lines[:27])
    for fact in ("0.000", "0.540", "0.990", "[0.185, 0.317, 0.498]", "0.899"):
        assert fact in module0
    assert lines[26].startswith("[S3]")
    assert sum(line.startswith("[S") for line in lines[:27]) == 3


def test_sections_are_headed_at_column_0_and_content_is_indented(lines):
    for line in lines[:80]:
        assert line.startswith("[S") or line.startswith("  ")


def test_log_is_byte_identical_across_runs_and_thread_counts(threaded_run_log):
    # the first two runs are those test_module3.py compares too (conftest.py, once a session)
    one, two, again = threaded_run_log(1), threaded_run_log(2), threaded_run_log(2, nth=2)
    assert one == two == again
