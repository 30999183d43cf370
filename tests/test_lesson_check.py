"""check-lesson: hand-made lessons and logs, the real log, the seed lessons, and bad input."""

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attention_workshop import cli
from attention_workshop.errors import WorkshopError
from attention_workshop.lesson_check import check_text, find_citations, quoted_blocks

SEEDS = Path(__file__).resolve().parents[1].parent / "shared" / "seeds"

# A hand-made log: checks below are worked out against it by eye.
LOG = ["[S1] head", "  a = 1", "  b = 2", "  c = 3", "[S2] next", "  d = 4"]


def lesson(*lines):
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "label", "cited"),
    [
        ("(cross-check: results.log line 28):", "line 28", (28,)),
        ("(cross-check: results.log lines 29-31):", "lines 29-31", (29, 30, 31)),
        ("(cross-check: results.log lines 46 and 72).", "lines 46 and 72", (46, 72)),
        ("(cross-check:\nresults.log lines 5\u20136)", "lines 5-6", (5, 6)),
    ],
)
def test_citation_forms(text, label, cited):
    [c] = find_citations("Prose first.\n" + text)
    assert (c.line, c.label, c.cited) == (2, label, cited)


def test_blocks_skip_code_listing_and_stop_at_prose():
    lines = ["Text (cross-check: results.log line 2):", "", "    code()", "", "  a = 1", "",
             "Prose again.", "", "  not quoted"]
    blocks = quoted_blocks(lines, 0)
    assert [(b.start, b.lines) for b in blocks] == [(3, ("    code()",)), (5, ("  a = 1",))]


@pytest.mark.parametrize(
    "body",
    [
        ["See (cross-check: results.log lines 2-4):", "", "  a = 1", "  b = 2", "  c = 3"],
        ["See (cross-check: results.log lines 2-4):", "", "  b = 2", "  c = 3"],  # inside range
        ["See (cross-check: results.log line 3):", "", "    code = 2", "", "  b = 2", "", "More."],
        ["See (cross-check: results.log lines 1-2):", "", "[S1] head", "  a = 1"],
        ["See (cross-check: results.log lines 4-6):", "", "```", "  c = 3", "[S2] next", "```"],
        ["See (cross-check: results.log lines 2 and 6):", "", "  a = 1", "  d = 4"],
        ["Both rows agree (cross-check: results.log lines 2 and 6). No block follows.", "", "Go."],
    ],
)
def test_block_inside_range_passes(body):
    [result] = check_text(lesson(*body), LOG)
    assert result.ok, result.detail


def test_changed_number_fails_at_that_line():
    text = lesson("Intro.", "See (cross-check: results.log lines 2-4):", "", "  a = 1", "  b = 7")
    [result] = check_text(text, LOG)
    assert not result.ok
    assert result.citation.line == 2
    assert result.detail == "lesson line 5 expected '  b = 7', log line 3 has '  b = 2'"


def test_past_end_of_log_fails():
    [result] = check_text(lesson("(cross-check: results.log lines 5-7):", "", "  d = 4"), LOG)
    assert not result.ok
    assert result.detail == "line 7 is past the end of the log (6 lines)"


def test_cited_lines_without_block_must_exist():
    [result] = check_text(lesson("(cross-check: results.log lines 2 and 9)."), LOG)
    assert not result.ok
    assert "line 9 is past the end" in result.detail


def test_block_moved_out_of_range_fails_and_says_where_it_is():
    [result] = check_text(lesson("(cross-check: results.log lines 4-5):", "", "  a = 1", "  b = 2"),
                          LOG)
    assert not result.ok
    assert result.detail.startswith("lesson line 3 expected '  a = 1', log line 4 has '  c = 3'")
    assert result.detail.endswith("(the block stands at log lines 2-3)")


def test_block_longer_than_range_fails():
    [result] = check_text(lesson("(cross-check: results.log lines 2-3):", "", "  a = 1", "  b = 2",
                                 "  c = 3"), LOG)
    assert not result.ok
    assert result.detail == "lesson line 5 '  c = 3' lies past the cited lines (the block stands" \
                            " at log lines 2-4)"


@pytest.mark.parametrize(("text", "why"), [
    ("(cross-check: results.log lines 9-3)", "is an impossible range"),
    ("(cross-check: results.log line 0)", "cites line 0"),
    ("(cross-check: results.log lines 1 and 0)", "cites line 0"),
    ("(cross-check: results.log lines 1-99999999999)", "cites a line past 99999"),
    ("(cross-check: results.log line " + "9" * 5000 + ")", "cites a line past 99999"),
])
def test_impossible_citation_raises(text, why):
    with pytest.raises(WorkshopError, match="^cannot read lesson 'notes.txt': line 2: ") as e:
        find_citations("Intro.\n" + text, "notes.txt")
    assert why in str(e.value) and len(str(e.value)) < 300


def test_and_citation_past_the_end_fails_rather_than_wrapping():
    """Line numbers are never used as Python indexes from the end: line 7 of 6 fails."""
    [result] = check_text(lesson("(cross-check: results.log lines 2 and 7):", "", "  d = 4"), LOG)
    assert (result.ok, result.detail) == (False, "line 7 is past the end of the log (6 lines)")


# --- citations counted in a section ("[S2] line 1" is the line "[S2] next") ----------------

@pytest.mark.parametrize(
    ("text", "label", "section", "cited"),
    [
        ("(cross-check: results.log [S11] line 3):", "[S11] line 3", 11, (3,)),
        ("(cross-check: results.log [S11] lines 2-4):", "[S11] lines 2-4", 11, (2, 3, 4)),
        ("(cross-check: results.log [S11] lines 2 and 5).", "[S11] lines 2 and 5", 11, (2, 5)),
        ("(cross-check: results.log\n[S7]  lines 1\u20132)", "[S7] lines 1-2", 7, (1, 2)),
        ("(cross-check: results.log [S007] line 02)", "[S7] line 2", 7, (2,)),
        ("(cross-check: results.log line 28)", "line 28", None, (28,)),
    ],
)
def test_section_citation_forms(text, label, section, cited):
    [c] = find_citations("Prose first.\n" + text)
    assert (c.line, c.label, c.section, c.cited) == (2, label, section, cited)


@pytest.mark.parametrize(
    "body",
    [
        ["See (cross-check: results.log [S2] lines 1-2):", "", "[S2] next", "  d = 4"],
        ["See (cross-check: results.log [S1] line 3):", "", "  b = 2"],  # log line 3
        ["See (cross-check: results.log [S1] lines 2-4):", "", "  b = 2", "  c = 3"],
        ["See (cross-check: results.log [S1] lines 2 and 4):", "", "  a = 1", "  c = 3"],
        ["See (cross-check: results.log [S2] line 2). No block follows.", "", "Go."],
    ],
)
def test_section_block_inside_range_passes(body):
    [result] = check_text(lesson(*body), LOG)
    assert result.ok, result.detail


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (["See (cross-check: results.log [S2] line 2):", "", "  a = 1"],  # log line 6 is d
         "lesson line 3 expected '  a = 1', log line 6 ([S2] line 2) has '  d = 4' (the block "
         "stands at log lines 2-2)"),
        (["See (cross-check: results.log [S1] lines 3-4):", "", "  a = 1", "  b = 2"],
         "lesson line 3 expected '  a = 1', log line 3 ([S1] line 3) has '  b = 2' (the block "
         "stands at log lines 2-3: [S1] lines 2-3)"),
        (["See (cross-check: results.log [S2] lines 2-3):", "", "  d = 4"],  # [S2] is lines 5-6
         "[S2] line 3 is past the section's end ([S2] is log lines 5-6, 2 lines)"),
        (["See (cross-check: results.log [S1] lines 1 and 5)."],  # [S1] is lines 1-4
         "[S1] line 5 is past the section's end ([S1] is log lines 1-4, 4 lines)"),
        (["See (cross-check: results.log [S3] line 1):", "", "  a = 1"],
         "the log has no section [S3] (no line starts with '[S3]')"),
        (["See (cross-check: results.log [S21] line 1)."],  # not [S2], not [S1]
         "the log has no section [S21] (no line starts with '[S21]')"),
    ],
)
def test_section_citation_failures_name_the_section(body, detail):
    [result] = check_text(lesson(*body), LOG)
    assert (result.ok, result.detail) == (False, detail)


def test_a_section_headed_twice_is_ambiguous():
    log = [*LOG, "[S1] again", "  b = 2"]
    [result] = check_text(lesson("See (cross-check: results.log [S1] line 2)."), log)
    assert (result.ok, result.detail) == (False, "[S1] heads more than one section of the log "
                                                 "(lines 1 and 7): its lines are ambiguous")


def test_a_section_citation_follows_its_section_when_lines_are_inserted_before_it():
    """The same lesson passes against a log with three lines (and a section) inserted before
    [S2]; the absolute citation of line 6 ("  d = 4") does not."""
    text = lesson("See (cross-check: results.log [S2] lines 1-2):", "", "[S2] next", "  d = 4",
                  "", "And (cross-check: results.log line 6):", "", "  d = 4")
    moved = [*LOG[:4], "[S90] inserted", "  x", "  y", *LOG[4:]]
    assert [r.ok for r in check_text(text, LOG)] == [True, True]
    assert [r.ok for r in check_text(text, moved)] == [True, False]


def test_section_citations_in_a_log_with_headers_too_long_for_a_number():
    """A header of 5,000 digits ends the section before it and heads none a lesson can cite
    (int() refuses strings over 4,300 digits: it would be a traceback)."""
    log = ["[S1] a", "  x", "[S" + "9" * 5000 + "] long", "  y"]
    [result] = check_text(lesson("See (cross-check: results.log [S1] lines 2-3)."), log)
    assert (result.ok, result.detail) == (False, "[S1] line 3 is past the section's end ([S1] "
                                                 "is log lines 1-2, 2 lines)")


@pytest.mark.parametrize(("text", "why"), [
    ("(cross-check: results.log [S1] line 0)", "cites line 0"),
    ("(cross-check: results.log [S1] lines 3-2)", "is an impossible range"),
    ("(cross-check: results.log [S100000] line 2)", "names a section past [S99999]"),
    ("(cross-check: results.log [S" + "9" * 5000 + "] line 2)", "names a section past [S99999]"),
    ("(cross-check: results.log [S1] line 100000)", "cites a line past 99999"),
])
def test_impossible_section_citation_raises(text, why):
    with pytest.raises(WorkshopError, match="^cannot read lesson 'notes.txt': line 2: ") as e:
        find_citations("Intro.\n" + text, "notes.txt")
    assert why in str(e.value) and len(str(e.value)) < 300


def test_numbers_with_thousands_of_leading_zeros_are_read_not_a_traceback():
    [c, d] = find_citations("(cross-check: results.log line " + "0" * 5000 + "2)\n"
                            "(cross-check: results.log [S" + "0" * 5000 + "1] line 2)\n")
    assert (c.cited, d.section, d.cited) == ((2,), 1, (2,))


def test_many_section_citations_find_the_sections_once(monkeypatch):
    """40,000 citations of [S2] in a 100,000-line log: the log's sections are found once."""
    from attention_workshop import lesson_check

    calls = []
    real = lesson_check.section_spans
    monkeypatch.setattr(lesson_check, "section_spans", lambda log: calls.append(1) or real(log))
    log = ["[S1] head", *(f"  v {i}" for i in range(99_997)), "[S2] last", "  end"]
    text = "Cited:\n" + "see (cross-check: results.log [S2] lines 1-2)\n" * 40_000
    results = check_text(text, log)
    assert len(results) == 40_000 and all(r.ok for r in results) and calls == [1]


@st.composite
def log_and_citation(draw):
    """A log of distinct indented lines, a cited range A-B, and a block [i, j] inside it."""
    words = st.text(alphabet="abcxyz0123456789=.", min_size=1, max_size=12)
    log = ["  " + w for w in draw(st.lists(words, min_size=1, max_size=30, unique=True))]
    a = draw(st.integers(1, len(log)))
    b = draw(st.integers(a, len(log)))
    i = draw(st.integers(a, b))
    j = draw(st.integers(i, b))
    return log, a, b, log[i - 1 : j]


@given(log_and_citation(), st.data())
def test_any_block_inside_range_passes_and_any_edit_fails(case, data):
    log, a, b, block = case
    text = lesson(f"See (cross-check: results.log lines {a}-{b}):", "", *block, "", "Prose.")
    assert [r.ok for r in check_text(text, log)] == [True]
    k = data.draw(st.integers(0, len(block) - 1))
    # "#" stands in no log line, so the edited line can match nowhere
    edited = [line + "#" if n == k else line for n, line in enumerate(block)]
    text = lesson(f"See (cross-check: results.log lines {a}-{b}):", "", *edited, "", "Prose.")
    [result] = check_text(text, log)
    assert not result.ok
    assert result.detail.startswith(f"lesson line {3 + k} expected {edited[k]!r}")


# --- the command, as a user runs it ---------------------------------------------------------


@pytest.fixture(scope="module")
def real_log(tmp_path_factory, shared_modules):
    """The log `run` writes for Modules 0-2 (lines 1-80), which the seed lessons cite: the
    lines after them (Module 6 runs without a model too) are left out, so line 81 is past
    the end."""
    out = tmp_path_factory.mktemp("run")
    with shared_modules.replaying():
        assert cli.main(["run", "--no-figures", "--no-real", "--out", str(out)]) == 0
    log = out / "results.log"
    lines = log.read_text().splitlines(keepends=True)
    assert lines[80].startswith("[S")  # a later module's first section follows line 80
    log.write_text("".join(lines[:80]))
    return log


def check(capsys, *argv):
    code = cli.main(["check-lesson", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


# Log lines 28 and 75-80 as the lessons print them (see SPEC.md: [S5] is verbatim).
REAL_LESSON = lesson(
    "First the input check (cross-check: results.log line 28):",
    "",
    "  input check: 'bank' row identical in both sentences -> True",
    "",
    "Then the scaling table (cross-check: results.log lines 75-80):",
    "",
    "[S5] why scores are divided by sqrt(d_k)",
    "  random q, k entries drawn from N(0,1); 8 keys per row; 2000 rows per size",
    "  d =   4: dot-product std =   1.97  (sqrt(d) =  2.00) | avg top weight: unscaled = 0.522,"
    " scaled = 0.338",
    "  d =  16: dot-product std =   4.02  (sqrt(d) =  4.00) | avg top weight: unscaled = 0.750,"
    " scaled = 0.356",
    "  d =  64: dot-product std =   8.01  (sqrt(d) =  8.00) | avg top weight: unscaled = 0.879,"
    " scaled = 0.362",
    "  d = 256: dot-product std =  16.03  (sqrt(d) = 16.00) | avg top weight: unscaled = 0.941,"
    " scaled = 0.366",
    "",
    "The end.",
)


def test_command_passes_on_real_log(tmp_path, capsys, real_log):
    path = tmp_path / "lesson.txt"
    path.write_text(REAL_LESSON)
    code, out, err = check(capsys, path, "--log", real_log)
    assert (code, err) == (0, "")
    assert out == [f"{path}:1: results.log line 28: ok", f"{path}:5: results.log lines 75-80: ok",
                   "2 passed, 0 failed"]


@pytest.mark.parametrize(
    ("old", "new", "failing"),
    [
        ("unscaled = 0.879", "unscaled = 0.897", "results.log lines 75-80: FAIL: lesson line 11"),
        ("lines 75-80", "lines 76-81", "results.log lines 76-81: FAIL: line 81 is past the end"),
        ("line 28", "line 27", "results.log line 27: FAIL: lesson line 3"),
    ],
)
def test_command_fails_naming_the_citation(tmp_path, capsys, real_log, old, new, failing):
    path = tmp_path / "lesson.txt"
    path.write_text(REAL_LESSON.replace(old, new))
    code, out, _ = check(capsys, path, "--log", real_log)
    assert code == 1
    assert sum(line.startswith(f"{path}:") and failing in line for line in out) == 1
    assert out[-1] == "1 passed, 1 failed"


def test_default_log_is_written_when_missing(tmp_path, capsys, monkeypatch, replayed_modules):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lesson.txt").write_text(REAL_LESSON)
    code, out, _ = check(capsys, "lesson.txt")
    assert (tmp_path / "workshop-output" / "results.log").is_file()
    assert (code, out[-1]) == (0, "2 passed, 0 failed")


# The workshop author's lessons are not in the repository: they sit beside it, in ../shared/seeds/.
SEEDS_MISSING = (f"the workshop author's lesson files are not here ({SEEDS} is missing;"
                 " they are not part of the repository), so their citations of results.log"
                 " are not checked; nothing is wrong with this copy")


@pytest.mark.skipif(not SEEDS.is_dir(), reason=SEEDS_MISSING)
def test_seed_lessons_pass(capsys, real_log):
    seeds = sorted(SEEDS.glob("*.txt"))
    assert seeds
    code, out, _ = check(capsys, *seeds, "--log", real_log)
    assert code == 0, "\n".join(out)
    passed = int(out[-1].split()[0])
    assert passed >= 9
    assert out[-1] == f"{passed} passed, 0 failed"


def test_docs_pass(tmp_path, capsys, replayed_modules):
    """docs/modules.md cites Modules 0-4 (3 and 4 by section), so it is checked against a full
    run (with MiniLM and SmolLM2)."""
    assert cli.main(["run", "--no-figures", "--out", str(tmp_path)]) == 0
    docs = Path(__file__).resolve().parents[1] / "docs" / "modules.md"
    code, out, _ = check(capsys, docs, "--log", tmp_path / "results.log")
    assert code == 0, "\n".join(out)
    assert out[-1].endswith(" passed, 0 failed") and int(out[-1].split()[0]) >= 19


@pytest.mark.parametrize(
    ("name", "content", "log", "message"),
    [
        ("missing.txt", None, "good.log", "cannot read lesson"),
        ("binary.bin", b"\x89PNG\r\n\x1a\n\0\0", "good.log", "not a UTF-8 text file"),
        ("range.txt", b"(cross-check: results.log lines 9-3)\n", "good.log",
         "line 1: 'results.log lines 9-3' is an impossible range"),
        ("ok.txt", b"no citations\n", "missing.log", "cannot read log"),
        ("ok.txt", b"no citations\n", "binary.log", "not a UTF-8 text file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, name, content, log, message):
    if content is not None:
        (tmp_path / name).write_bytes(content)
    (tmp_path / "good.log").write_text(lesson(*LOG))
    (tmp_path / "binary.log").write_bytes(b"\xff\xfe\0\0")
    code, out, err = check(capsys, tmp_path / name, "--log", tmp_path / log)
    assert code == 2
    assert out == []
    assert len(err.splitlines()) == 1
    assert err.startswith("attention-workshop: error: ") and message in err


def test_installed_entry_point_reports_bad_input_in_one_line(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "attention_workshop", "check-lesson", str(tmp_path / "nope.txt")],
        capture_output=True, text=True, check=False,
    )
    assert run.returncode == 2
    assert run.stdout == ""
    missing = tmp_path / "nope.txt"
    assert run.stderr == (f"attention-workshop: error: cannot read lesson '{missing}': "
                          "it does not exist; check the path\n")
