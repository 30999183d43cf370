"""The README a newcomer reads: short, its Python lines working as written, its links and
commands real; the benchmarks' tables and method in docs/benchmarks.md."""

import math
import re
from pathlib import Path

import pytest

from attention_workshop import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def shares(*scores):  # softmax by hand
    e = [math.exp(s) for s in scores]
    return [v / sum(e) for v in e]


def test_the_readme_is_short():
    assert len(README.encode()) <= 16 * 1024


def test_its_python_runs_as_written_and_gives_the_numbers_it_shows():
    (code,) = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    names = {}
    exec(compile(code, "README.md", "exec"), names)  # noqa: S102 - the README's own lines
    assert [round(w, 3) for w in names["weights"][2]] == [round(v, 3) for v in shares(
        0, 1.62 / math.sqrt(2), 1.08 / math.sqrt(2))] == [0.159, 0.5, 0.341]
    assert names["ex"].raw["weights"][2] == pytest.approx(shares(0, 0.54, 0.99), abs=1e-12)
    assert re.findall(r"\[(\d\.\d+(?:, \d\.\d+)+)\]", code) == ["0.185, 0.317, 0.498",
                                                       "0.159, 0.500, 0.341"]
    attentions = names["result"].attentions
    assert attentions.shape[:2] == (6, 12) and attentions.shape[2] == len(names["result"].tokens)


@pytest.mark.parametrize("page", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))],
                         ids=lambda p: p.name)
def test_every_relative_link_leads_somewhere(page):
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if not target.startswith(("http://", "https://")):
            assert (page.parent / target).exists(), f"{page.name}: {target}"


def test_every_command_is_in_the_readme():
    usage = re.search(r"## The commands\n\n```\n(.*?)```", README, flags=re.S).group(1)
    assert {line.split()[1] for line in usage.splitlines() if line.startswith("attention-")} \
        == set(cli.COMMANDS)


def test_it_says_what_test_sh_costs_and_where_the_lessons_are():
    two = README[README.index("## Two commands"):README.index("## Where the lessons")]
    assert "torch" in two and "minutes" in two and "editable" in two
    lessons = README[README.index("## Where the lessons"):README.index("## The modules")]
    assert "not in this repository" in lessons and "../shared/seeds/" in lessons
    assert "skipped" in lessons and "check-lesson docs/modules.md notebooks/*.ipynb" in lessons


def test_the_benchmarks_moved_whole_to_their_page():
    bench = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    for script in sorted((ROOT / "bench").glob("bench_*.py")):
        if script.name in README or script.name in bench:
            assert script.name in bench
    # MiniLM's two forward tables and SmolLM2's
    assert bench.count("| threads | tokens |") == 3 and "| command | median |" in bench
    assert "GFLOP" in bench and "GFLOP" not in README
