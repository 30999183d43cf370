"""A module inserted between Module 2 and Module 3 moves no citation (issue 27, item 7).

A throwaway module, three lines under its own section [S90], is put into modules.MODULES
right after module2 (monkeypatched, as tests/test_modules.py adds a module), and `run`
writes the log once for this file, Modules 3 and 4 included (they pin their first line by
section, so they must run after it). Against that log:
- the throwaway lines stand right after line 80, and Module 3's lines after them;
- every citation in docs/*.md and notebooks/*.ipynb passes: those of lines 1-80 by number,
  those of [S6] onward by section (a citation of a moved line by its number would fail);
- the lessons' 9 citations (all by number, lines 28-80) pass;
- the figure captions' section citations name lines inside their module's sections;
- and the check can fail: Module 3's first line cited by its old number, 81, fails.
"""

import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from attention_workshop import cli, modules
from attention_workshop.lesson_check import check_text
from attention_workshop.modules import module1
from attention_workshop.report import section_spans

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"
INSERTED = 90  # a section number no module uses
TITLE = "Module 90: a throwaway module between Module 2 and Module 3"


@dataclass(frozen=True)
class Result:
    share: float  # bank's raw weight on river, read from Module 1


def run_inserted(log, earlier):  # writes lines 81-84 of the new log
    share = float(earlier[module1.Result].weights_river[2, 1])
    log.section(INSERTED, TITLE)
    log(f"  bank -> river, raw: {share:.3f}")
    log("  (it reads Module 1 and writes three lines: every later line moves down by four)")
    log("  nothing below it is cited by its number")
    return Result(share=share)


@pytest.fixture(scope="module")
def inserted_log(tmp_path_factory):  # the log `run` writes with the throwaway module inserted
    from smollm2_reference import smollm2_path

    from attention_workshop.errors import WorkshopError
    from attention_workshop.real import catalog

    smollm2_path()
    try:
        catalog.minilm_folder()
    except WorkshopError:
        pytest.skip("MiniLM's weights are not installed")
    file = types.ModuleType("attention_workshop.modules.module90")
    file.__dict__.update(TITLE=TITLE, Result=Result, run=run_inserted, NEEDS_REAL=False)
    order = list(modules.MODULES)
    order.insert(order.index("module2") + 1, "module90")
    out = tmp_path_factory.mktemp("inserted")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, file.__name__, file)
        patch.setattr(modules, "MODULES", tuple(order))
        assert cli.main(["run", "--no-figures", "--out", str(out)]) == 0
    return out / "results.log"


def check(capsys, log, *files):  # check-lesson as a user runs it -> (exit code, its lines)
    code = cli.main(["check-lesson", *map(str, files), "--log", str(log)])
    return code, capsys.readouterr().out.splitlines()


def test_the_inserted_lines_stand_after_line_80_and_module_3_after_them(inserted_log):
    lines = inserted_log.read_text().splitlines()
    spans = section_spans(lines)
    assert spans[5] == [(75, 80)]  # [S5], Module 2's last section, where the lessons cite it
    assert spans[INSERTED] == [(81, 84)] and lines[80] == f"[S{INSERTED}] {TITLE}"
    assert spans[6][0][0] == 85 and lines[84].startswith("[S6] Module 3")
    heads = [line.split()[0] for line in lines if line.startswith("[S")]
    assert heads[:7] == ["[S1]", "[S2]", "[S3]", "[S4]", "[S5]", f"[S{INSERTED}]", "[S6]"]
    assert heads[heads.index("[S10]") - 1] == "[S9]"  # Module 4 follows Module 3


def test_every_citation_in_the_docs_and_notebooks_still_passes(inserted_log, capsys):
    files = [*sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "notebooks").glob("*.ipynb"))]
    code, out = check(capsys, inserted_log, *files)
    assert code == 0, "\n".join(line for line in out if "FAIL" in line)
    assert out[-1].endswith(" passed, 0 failed")
    by_section = [line for line in out if ": results.log [S" in line]
    assert all(line.endswith(": ok") for line in by_section)
    cited = {line.split("results.log [S")[1].split("]")[0] for line in by_section}
    assert {str(n) for n in range(6, 16)} <= cited  # Modules 3 and 4: [S6]-[S15], every one
    spans = section_spans(inserted_log.read_text().splitlines())
    # and the later modules' (5, 6): each a section of the log, none the inserted one
    assert cited <= {str(n) for n in spans if n >= 6 and n != INSERTED}
    for line in out[:-1]:  # and nothing at 81 or later is cited by its number
        if ": results.log line" in line:
            numbers = line.split(": results.log ")[1].split(":")[0].split()[1::2]
            assert all(int(n) <= 80 for part in numbers for n in part.split("-")), line


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the workshop author's lessons are not here")
def test_the_lessons_nine_citations_still_pass(inserted_log, capsys):
    code, out = check(capsys, inserted_log, *sorted(SEEDS.glob("*.txt")))
    assert (code, out[-1]) == (0, "9 passed, 0 failed")


def test_the_captions_section_citations_lie_in_their_modules_sections(inserted_log):
    """'Module 3 (log [S7] lines 6-19): ...': [S7] follows [S6] 'Module 3: ...', the lines
    exist in [S7]; checked as a citation with no quoted block."""
    from attention_workshop.figures import registry

    lines = inserted_log.read_text().splitlines()
    captions = {name: d.about for name, d in registry().items() if "(log [S" in d.about}
    # Module 3's real_heads_layer and real_bank_heads, Module 4's decoder_heads and _writing,
    # and those of the modules after them
    assert {"real_heads_layer.png", "real_bank_heads.png", "decoder_heads.png",
            "decoder_writing.png"} <= set(captions)
    spans = section_spans(lines)
    for name, about in captions.items():
        module, cited = about.split(" (log ", 1)[0], about.split(" (log ", 1)[1].split(")")[0]
        if " line" in cited:  # "[S7] lines 6-19": a citation check-lesson reads
            [result] = check_text(f"(cross-check: results.log {cited}).\n", lines)
            assert result.ok, (name, result.detail)
            sections = [result.citation.section]
        else:  # "[S20]-[S22]", "[S23]": whole sections, each in the log
            sections = [int(n) for n in re.findall(r"\[S(\d+)\]", cited)]
            assert sections and all(n in spans for n in sections), (name, cited)
        for section in sections:
            first = spans[section][0][0]
            header = next(line for line in reversed(lines[:first]) if "Module " in line
                          and line.startswith("[S"))
            assert header.split(": ")[0].endswith(module), (name, header)


def test_a_citation_of_a_moved_line_by_its_number_fails(inserted_log):
    """The same block cited both ways: by section it holds, by its old number it does not."""
    lines = inserted_log.read_text().splitlines()
    block = "\n\n" + lines[84] + "\n\nProse.\n"  # [S6]'s header, line 81 before the insertion
    by_number = check_text("(cross-check: results.log line 81):" + block, lines)
    by_section = check_text("(cross-check: results.log [S6] line 1):" + block, lines)
    assert [r.ok for r in by_number + by_section] == [False, True]
    assert by_number[0].detail.startswith(f"lesson line 3 expected {lines[84]!r}, log line 81 "
                                          f"has {lines[80]!r}")
