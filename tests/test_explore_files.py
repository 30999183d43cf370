"""explore with a learner's own table and wiring files, and every bad input it refuses."""

import json
import math
import shlex
import subprocess
from pathlib import Path

import numpy as np
import pytest
from explore_reference import assert_close, ref_heads

from attention_workshop import cli

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def run_json(argv, capsys):
    assert cli.main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", ["bat.toml", "bat.json"])
def test_example_table_files(name, capsys):
    rows = {"the": [0, 0, 0, 1.0], "cave": [0.8, 0, 0.3, 0], "bat": [0.3, 0.3, 0.9, 0]}
    doc = run_json(["explore", "the cave bat", "--table", str(EXAMPLES / name),
                    "--replace-table"], capsys)
    assert_close(doc, ref_heads([rows[w] for w in ("the", "cave", "bat")]))


def test_example_wiring_files(capsys):
    doc = run_json(["explore", "the money bank", "--wq", str(EXAMPLES / "water_wq.toml"),
                    "--wk", str(EXAMPLES / "water_wk.toml")], capsys)
    rows = [[0, 0, 0, 1.0], [0, 0.9, 0.1, 0], [0.3, 0.3, 0.9, 0]]
    assert_close(doc, ref_heads(rows, [[0.0], [0.0], [2.0], [0.0]], [[1.0], [0.0], [0.0], [0.0]]))


def test_three_axis_table_with_json_wiring(tmp_path, capsys):
    (tmp_path / "t.toml").write_text('axes = ["x", "y", "z"]\n[words]\nup = [1, 0, 0.5]\n'
                                     "Down = [0, 1, 0.5]\n")
    wq, wk = [[1, 0], [0, 2], [0.5, 0.5]], [[0, 1], [1, 0], [1, 1]]
    (tmp_path / "q.json").write_text(json.dumps({"matrix": wq, "channels": ["a", "b"]}))
    (tmp_path / "k.json").write_text(json.dumps({"matrix": wk}))
    argv = ["explore", "up down up", "--table", str(tmp_path / "t.toml"), "--replace-table",
            "--wq", str(tmp_path / "q.json"), "--wk", str(tmp_path / "k.json")]
    doc = run_json(argv, capsys)
    rows = {"up": [1, 0, 0.5], "down": [0, 1, 0.5]}
    assert_close(doc, ref_heads([rows[w] for w in ("up", "down", "up")], wq, wk))
    assert cli.main(argv) == 0
    assert "(channels: a, b; d_k = 2)" in capsys.readouterr().out


def bad(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


TABLE_OK = "[words]\nthe = [0, 0, 0, 1]\nbank = [0.3, 0.3, 0.9, 0]\n"
WIRE_OK = "matrix = [[1], [0], [0], [0]]\n"

# (argv builder, words the error line must contain)
CASES = {
    "unknown word": (lambda p: ["explore", "the rivr bank"], ["'rivr'", "closest: river"]),
    "two unknown words": (lambda p: ["explore", "the zzq bnak"], ["'zzq'", "'bnak'", "bank"]),
    "empty sentence": (lambda p: ["explore", "   "], ["sentence is empty"]),
    "word not in sentence": (lambda p: ["explore", "the river bank", "--word", "money"],
                             ["--word 'money'", "the, river, bank"]),
    "missing table": (lambda p: ["explore", "bank", "--table", str(p / "no.toml")],
                      ["does not exist"]),
    "table is a folder": (lambda p: ["explore", "bank", "--table", str(p / "dir.toml")],
                          ["is a folder, not a regular file"]),
    "not toml or json": (lambda p: ["explore", "bank", "--table", bad(p, "t.yaml", "a: 1")],
                         ["must end in .toml or .json"]),
    "malformed toml": (lambda p: ["explore", "bank", "--table", bad(p, "t.toml", "[words\n")],
                       ["not valid TOML"]),
    "malformed json": (lambda p: ["explore", "bank", "--table", bad(p, "t.json", '{"words": ')],
                       ["not valid JSON"]),
    "no words section": (lambda p: ["explore", "bank", "--table", bad(p, "t.toml", "x = 1\n")],
                         ["[words]"]),
    "ragged rows": (lambda p: ["explore", "bank", "--table", bad(
        p, "t.toml", "[words]\nthe = [0, 1]\nbank = [1, 2, 3]\n")], ["'bank' has 3 numbers"]),
    "text in a row": (lambda p: ["explore", "bank", "--table", bad(
        p, "t.toml", '[words]\nbank = [1, "x", 3, 4]\n')], ["'x'", "not a number"]),
    "nan in toml": (lambda p: ["explore", "bank", "--table", bad(
        p, "t.toml", "[words]\nbank = [0.3, nan, 0.9, 0]\n")], ["nan", "finite"]),
    "infinity in json": (lambda p: ["explore", "bank", "--table", bad(
        p, "t.json", '{"words": {"bank": [0.3, Infinity, 0.9, 0]}}')], ["inf", "finite"]),
    "axes count": (lambda p: ["explore", "bank", "--table", bad(
        p, "t.toml", 'axes = ["a"]\n' + TABLE_OK)], ["axes must list 4 names"]),
    "3-axis table, built-in wiring": (lambda p: ["explore", "up", "--replace-table", "--table",
                                                 bad(p, "t.toml", "[words]\nup = [1, 0, 0]\n")],
                                      ["W_Q (built-in) has 4 rows", "--wq"]),
    "3-axis table added to the built-in": (lambda p: ["explore", "up", "--table", bad(
        p, "t.toml", "[words]\nup = [1, 0, 0]\n")], ["3 columns", "--replace-table"]),
    "other axes added to the built-in": (lambda p: ["explore", "up", "--table", bad(
        p, "t.toml", 'axes = ["a", "b", "c", "d"]\n[words]\nup = [1, 0, 0, 0]\n')],
        ["axes a, b, c, d", "water, money, place, filler", "--replace-table"]),
    "replace without a table": (lambda p: ["explore", "bank", "--replace-table"],
                                ["--replace-table needs --table FILE"]),
    "wiring rows": (lambda p: ["explore", "bank", "--wq", bad(p, "q.toml", "matrix = [[1]]\n")],
                    ["has 1 rows but the table has 4 axes"]),
    "wiring widths differ": (lambda p: ["explore", "bank", "--wq", bad(p, "q.toml", WIRE_OK)],
                             ["W_Q has 1 channels but W_K has 2"]),
    "nan in wiring": (lambda p: ["explore", "bank", "--wk", bad(
        p, "k.json", '{"matrix": [[1, 0], [0, NaN], [0, 1], [0, 0]]}')], ["W_K file", "finite"]),
    "missing wiring": (lambda p: ["explore", "bank", "--wk", str(p / "k.toml")],
                       ["W_K file", "does not exist"]),
    "overflow": (lambda p: ["explore", "bank", "--table", bad(
        p, "t.toml", "[words]\nbank = [1e300, 0, 0, 0]\n")], ["too large"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_line_and_exit_2(case, tmp_path, capsys):
    (tmp_path / "dir.toml").mkdir()
    argv, needles = CASES[case]
    assert cli.main(argv(tmp_path)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("attention-workshop: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)


def test_installed_script_json_and_error():
    done = subprocess.run(["attention-workshop", "explore", "the river bank", "--format", "json"],
                          capture_output=True, text=True, check=True)
    weights = json.loads(done.stdout)["wired"]["weights"][2]
    e = [math.exp(s / math.sqrt(2)) for s in (0.0, 1.8 * 0.9, 1.8 * 0.6)]  # bank's q . each k
    np.testing.assert_allclose(weights, [v / sum(e) for v in e], rtol=0, atol=1e-12)
    fail = subprocess.run(["attention-workshop", "explore", "the lake bnk"],
                          capture_output=True, text=True)
    assert (fail.returncode, fail.stdout) == (2, "")
    assert fail.stderr.splitlines() == [fail.stderr.strip()] and "'bnk'" in fail.stderr


def doc_commands(name):
    """Every `attention-workshop explore ...` line in a docs page (continuations joined)."""
    text = (EXAMPLES.parent / name).read_text().replace("\\\n", " ")
    return [shlex.split(line)[1:] for line in text.splitlines()
            if line.startswith("attention-workshop explore ") and "SENTENCE" not in line]


@pytest.mark.parametrize("argv", doc_commands("explore.md"), ids=" ".join)
def test_docs_commands_run(argv, capsys, monkeypatch):
    monkeypatch.chdir(EXAMPLES.parents[1])
    assert cli.main(argv) == 0
    assert capsys.readouterr().out


def test_docs_full_outputs_are_real_runs(capsys, monkeypatch):
    """A docs block that shows a whole output (it starts 'explore "...' and leaves nothing out
    as '  ...') is what the command in the block before it prints today."""
    monkeypatch.chdir(EXAMPLES.parents[1])
    blocks = (EXAMPLES.parent / "explore.md").read_text().split("```")[1::2]
    checked = 0
    for command, shown in zip(blocks, blocks[1:], strict=False):
        if command.strip().startswith("attention-workshop explore") and \
                shown.strip("\n").startswith('explore "') and "\n  ...\n" not in shown:
            assert cli.main(shlex.split(command.strip())[1:]) == 0
            assert capsys.readouterr().out == shown.lstrip("\n")
            checked += 1
    assert checked >= 1
