"""check-lesson on huge lessons and logs: time linear in the citations and the quoted blocks.

Once 10,000 citations took 20 s and a 300-line block cited in a 99,999-line range over 60 s
(every citation recounted the lines before it; every offset of every block was compared
line by line). Each case here runs the command as a user does, under a time limit far
below those; and on small random lessons the checker gives the answers a plain reading of
its rule gives (`reference`, the quadratic algorithm written out).
"""

import random
import time
from difflib import SequenceMatcher

import pytest

from attention_workshop import cli
from attention_workshop.lesson_check import check_text, find_citations, quoted_blocks

LIMIT = 10.0  # seconds, on a busy two-core machine; the quadratic checker took over 60


def big_log(n):  # n distinct indented lines, one section head
    return "[S1] head\n" + "".join(f"  value {i} = {i * 7 % 1000}\n" for i in range(1, n))


def one_paragraph(n):  # n citations of line 3, one a line, in one paragraph (~1.3 MB at 40,000)
    return "Cited:\n" + "see (cross-check: results.log line 3)\n" * n


def each_with_a_block(n):  # n paragraphs, each a citation and its one quoted line
    return "".join(f"Now (cross-check: results.log lines 2-4):\n\n  value {i % 3 + 1} = "
                   f"{(i % 3 + 1) * 7}\n\nProse.\n\n" for i in range(n))


def block_of(log_text, first, count, edit=None):  # count log lines from `first` (1-based)
    lines = log_text.splitlines()[first - 1:first - 1 + count]
    if edit is not None:
        lines[edit] += "#"  # "#" stands in no log line
    return "See (cross-check: results.log lines 1-99999):\n\n" + "\n".join(lines) + "\n\nEnd.\n"


# name -> (lesson text, log text, the last line the command prints)
HUGE = {
    "40,000 citations in one paragraph": (one_paragraph(40_000), big_log(10),
                                          "40000 passed, 0 failed"),
    "40,000 citations, each with a block": (each_with_a_block(40_000), big_log(10),
                                            "40000 passed, 0 failed"),
    "a 300-line block in 99,999 lines": (block_of(big_log(100_000), 50_000, 300),
                                         big_log(100_000), "1 passed, 0 failed"),
    "a 300-line block, one line changed": (block_of(big_log(100_000), 50_000, 300, edit=150),
                                           big_log(100_000), "0 passed, 1 failed"),
    "a 300-line block of one repeated line": ("See (cross-check: results.log lines 1-99999):"
                                              "\n\n" + "  x\n" * 299 + "  y\n\nEnd.\n",
                                              "  x\n" * 100_000, "0 passed, 1 failed"),
}


@pytest.mark.parametrize("case", HUGE)
def test_huge_lessons_and_logs_are_checked_in_seconds(case, tmp_path, capsys):
    text, log, last = HUGE[case]
    (tmp_path / "lesson.txt").write_text(text)
    (tmp_path / "results.log").write_text(log)
    start = time.perf_counter()
    code = cli.main(["check-lesson", tmp_path / "lesson.txt", "--log", tmp_path / "results.log"])
    took = time.perf_counter() - start
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == last
    assert code == (0 if last.startswith(("1 passed", "40000")) else 1)
    assert took < LIMIT, f"{took:.1f} s"


def test_a_lesson_citing_too_many_lines_in_all_is_refused_at_once(tmp_path, capsys):
    """50,000 citations of lines 1-99999 (2 MB): 5e9 lines to lay out, and a tuple of 99,999
    numbers each (40 GB) before the limit; now one line, before any is made."""
    from hostile import assert_one_line_refusal

    (tmp_path / "lesson.txt").write_text("(cross-check: results.log lines 1-99999)\n" * 50_000)
    (tmp_path / "results.log").write_text(big_log(100_000))
    start = time.perf_counter()
    assert_one_line_refusal(["check-lesson", tmp_path / "lesson.txt", "--log",
                             tmp_path / "results.log"], tmp_path, capsys,
                            "line 11: its citations cite more than 1000000 log lines in all; "
                            "cite fewer lines, or split the lesson")
    assert time.perf_counter() - start < LIMIT


def test_a_changed_line_in_a_huge_block_is_named():
    log = big_log(100_000)
    [result] = check_text(block_of(log, 50_000, 300, edit=150), log.splitlines())
    # the block is log lines 50000-50299; its line 151 (lesson line 153) has the "#"
    assert result.detail == ("lesson line 153 expected '  value 50149 = 43#', log line 50150 "
                             "has '  value 50149 = 43'")


def reference(text, log):  # the rule, read plainly: every block, every offset, every line
    """[(label, ok, the lesson line a failure names)]: a citation holds if some block stands
    along the cited lines at some offset; else the alignment with the most equal lines, then
    the most similar ones, the first on a tie, names its first differing line."""
    lines, results = text.splitlines(), []
    for c in find_citations(text):
        alignments = [(block, [(t, c.cited[o + k] if o + k < len(c.cited) else None)
                               for k, t in enumerate(block.lines)])
                      for block in quoted_blocks(lines, c.line - 1)
                      for o in range(max(1, len(c.cited) - len(block.lines) + 1))]
        wrong = {id(pairs): [k for k, (t, n) in enumerate(pairs) if n is None or t != log[n - 1]]
                 for _, pairs in alignments}
        if not alignments or any(not wrong[id(pairs)] for _, pairs in alignments):
            results.append((c.label, True, None))
            continue
        best = max(alignments, key=lambda a: (  # max() keeps the first of equal keys
            sum(t == log[n - 1] for t, n in a[1] if n),
            sum(SequenceMatcher(None, t, log[n - 1]).ratio() for t, n in a[1] if n)))
        results.append((c.label, False, best[0].start + wrong[id(best[1])][0]))
    return results


@pytest.mark.parametrize("seed", range(40))
def test_small_random_lessons_get_the_plain_rule_s_answers(seed):
    """Logs of few distinct lines (so blocks match in several places, or nearly), lessons of
    several citations each followed by blocks that are log slices, some edited."""
    rng = random.Random(seed)
    log = [rng.choice(["  a", "  b", "  c = 1", "  c = 2", "[S1] x"]) for _ in range(30)]
    parts = []
    for _ in range(rng.randint(1, 4)):
        a = rng.randint(1, 30)
        b = rng.randint(a, 30)
        parts.append(f"Here (cross-check: results.log lines {a}-{b}):\n")
        for _ in range(rng.randint(1, 3)):
            i = rng.randint(1, 30)
            block = log[i - 1:i - 1 + rng.randint(1, 6)]
            if rng.random() < 0.5:
                block = [line + rng.choice(["#", "", "1"]) for line in block]
            parts.append("\n" + "\n".join(block) + "\n")
        parts.append("\nProse.\n\n")
    text = "".join(parts)
    got = [(r.citation.label, r.ok, None if r.ok else int(r.detail.split()[2]))
           for r in check_text(text, log)]
    assert got == reference(text, log)
