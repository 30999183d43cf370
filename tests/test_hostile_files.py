"""Hostile files handed to every command that reads one: exit 2, one stderr line in the one
wording (`cannot read WHAT 'PATH': REASON; WHAT TO DO`), no traceback, no hang, nothing written.

Commands: explore --table / --wq / --wk, quiz --answers, check-lesson FILE (text and .ipynb),
check-lesson --log.
Most cases run `cli.main` in-process; a FIFO (whose open would block) and a chmod 000 file
(which root reads anyway: there the command runs without CAP_DAC_OVERRIDE) run the command in
a subprocess with a timeout.
"""

import os
import subprocess
import sys

import pytest
from folders import tree
from hostile import TIMEOUT, run_command, without_dac_override

from attention_workshop.reading import MAX_BYTES

# command -> (what the message calls the file, file suffix, argv given the file and tmp_path)
COMMANDS = {
    "explore --table": ("table file", ".toml",
                        lambda f, d: ["explore", "the bank", "--table", f, "--out", d / "out"]),
    "explore --wq": ("W_Q file", ".json",
                     lambda f, d: ["explore", "the bank", "--wq", f, "--out", d / "out"]),
    "explore --wk": ("W_K file", ".toml",
                     lambda f, d: ["explore", "the bank", "--wk", f, "--out", d / "out"]),
    "quiz --answers": ("answers file", ".txt", lambda f, d: ["quiz", "1", "--answers", f]),
    "check-lesson FILE": ("lesson", ".txt",
                          lambda f, d: ["check-lesson", f, "--log", d / "good.log"]),
    "check-lesson NOTEBOOK": ("lesson", ".ipynb",
                              lambda f, d: ["check-lesson", f, "--log", d / "good.log"]),
    "check-lesson --log": ("log", ".log",
                           lambda f, d: ["check-lesson", d / "good.txt", "--log", f]),
}


def _write(path, data):
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def _fifo(path):
    os.mkfifo(path)
    return path


def _through_a_file(path):
    _write(path.with_name("plain.txt"), "x\n")
    return path.with_name("plain.txt") / "inside"


# kind -> (make the file at a path with the command's suffix, words the message must hold)
KINDS = {
    "folder": (lambda p: p.mkdir() or p, "it is a folder, not a regular file"),
    "/dev/zero": (lambda p: "/dev/zero", "it is a character device, not a regular file"),
    "symlink to /dev/zero": (lambda p: p.symlink_to("/dev/zero") or p, "a character device"),
    "FIFO": (_fifo, "it is a FIFO (a named pipe), not a regular file"),
    "missing": (lambda p: p, "it does not exist; check the path"),
    "path through a file": (_through_a_file, "a part of the path is not a folder"),
    "unreadable": (lambda p: _write(p, "1: 0.4\n").chmod(0) or p,
                   "permission denied; check the file's permissions"),
    "binary": (lambda p: _write(p, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
               "not a UTF-8 text file (a NUL byte at byte 8)"),
    "invalid UTF-8": (lambda p: _write(p, b"# caf\xe9\n"),
                      "not a UTF-8 text file (byte 0xe9 at byte 5)"),
    "over the cap": (lambda p: _write(p, b"#" * 99 + b"\n" * (MAX_BYTES - 98)),
                     "it is 4.0 MB, over the 4 MB cap; give a smaller file"),
}
SUBPROCESS = {"FIFO", "unreadable"}  # an open that could block; DAC rules root would bypass


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """tmp_path as the working folder, with a good lesson and log, and an --out folder that
    already holds a previous figure (it must survive every refusal byte for byte)."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "good.txt", "No citations here.\n")
    _write(tmp_path / "good.log", "[S1] head\n  a = 1\n")
    (tmp_path / "out").mkdir()
    _write(tmp_path / "out" / "explore_weights.png", b"the previous figure")
    return tmp_path


def assert_refused(workspace, capsys, argv, what, path, needle, subprocess_run=False):
    before = tree(workspace)
    code, out, err = run_command(argv, workspace, capsys, subprocess_run)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"attention-workshop: error: cannot read {what} '{path}': "), err
    assert needle in err, err
    assert tree(workspace) == before  # nothing written, nothing left behind


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", COMMANDS)
def test_file_that_is_not_a_readable_text_file(command, kind, workspace, capsys):
    what, suffix, argv = COMMANDS[command]
    make, needle = KINDS[kind]
    path = make(workspace / f"hostile{suffix}")
    if kind == "unreadable":
        _skip_if_readable_anyway(path)
    assert_refused(workspace, capsys, argv(path, workspace), what, path, needle,
                   subprocess_run=kind in SUBPROCESS)


def _skip_if_readable_anyway(path):
    """As root, the command runs without CAP_DAC_OVERRIDE; skip only where even that reads it."""
    probe = [sys.executable, "-c", f"open({str(path)!r}).read()"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=TIMEOUT,
                              preexec_fn=without_dac_override if os.geteuid() == 0 else None)
    except subprocess.SubprocessError:  # the capability could not be dropped here
        pytest.skip("cannot run the command without root's DAC override here")
    if done.returncode == 0:
        pytest.skip("this user reads a chmod 000 file anyway")


DEEP = 3000
# (command, suffix, content, words the message must hold)
DATA = {
    "JSON nested 3,000 deep": ("explore --table", ".json",
                               '{"words": ' + "[" * DEEP + "]" * DEEP + "}",
                               "it nests more than 32 levels deep"),
    "TOML nested 3,000 deep": ("explore --wq", ".toml", "matrix = " + "[" * DEEP + "]" * DEEP,
                               "it nests more than 32 levels deep"),
    "TOML dotted key 3,000 deep": ("explore --table", ".toml", "a" + ".a" * DEEP + " = 1\n",
                                   "it nests more than 32 levels deep"),
    "300-digit integer": ("explore --table", ".json",
                          '{"words": {"bank": [1' + "0" * 299 + ", 0, 0, 0]}}",
                          "it holds 300 digits in a row (numbers of at most 100 digits are read)"),
    "5,000-digit integer in TOML": ("explore --wk", ".toml", "matrix = [[" + "9" * 5000 + "]]",
                                    "5000 digits in a row"),
    "5,000-digit decimal in JSON": ("explore --wq", ".json",
                                    '{"matrix": [[0.' + "3" * 5000 + "]]}",
                                    "5000 digits in a row"),
    "TOML underscores 1_000_...": ("explore --table", ".toml",
                                   "[words]\nbank = [" + "1_000" * 60 + ", 0, 0, 0]\n",
                                   "240 digits in a row"),
    "duplicate JSON key": ("explore --table", ".json",
                           '{"words": {"bank": [1, 0, 0, 0], "bank": [0, 1, 0, 0]}}',
                           'key "bank" appears twice in one object; keep one'),
    "duplicate top-level JSON key": ("explore --wq", ".json",
                                     '{"matrix": [[1, 0]], "matrix": [[0, 1]]}',
                                     'key "matrix" appears twice'),
    "duplicate TOML key": ("explore --table", ".toml", "[words]\nbank = [1]\nbank = [2]\n",
                           "not valid TOML"),
    "NaN in JSON": ("explore --table", ".json", '{"words": {"bank": [0.3, NaN, 0.9, 0]}}',
                    "words.bank[1] is nan; every number must be finite"),
    "-Infinity in JSON": ("explore --wk", ".json", '{"matrix": [[1], [-Infinity]]}',
                          "matrix[1][0] is -inf; every number must be finite"),
    "1e999 in JSON": ("explore --wq", ".json", '{"matrix": [[1e999]]}',
                      "matrix[0][0] is inf"),
    "inf in TOML": ("explore --table", ".toml", "[words]\nbank = [0.3, inf, 0.9, 0]\n",
                    "words.bank[1] is inf"),
    "NaN under a key with a newline": ("explore --table", ".json",
                                       '{"words": {"ba\\nnk": [NaN]}}',
                                       'words."ba\\nnk"[0] is nan'),
    "a list at the top": ("explore --table", ".json", "[1, 2]",
                          "expected a table of keys at the top"),
    "empty TOML": ("explore --table", ".toml", "", "it needs a [words] section"),
    "empty JSON": ("explore --wk", ".json", "", "it is not valid JSON"),
    "words as a list": ("explore --table", ".toml", "words = [1, 2]\n",
                        "it needs a [words] section"),
    "text in a matrix": ("explore --wq", ".toml", 'matrix = [["a"], ["b"]]\n',
                         "matrix row 1 holds 'a', which is not a number"),
    "true in a row": ("explore --table", ".json", '{"words": {"bank": [true, 0, 0, 0]}}',
                      "holds True, which is not a number"),
    "ragged matrix": ("explore --wk", ".toml", "matrix = [[1, 0], [1]]\n",
                      "row '2' has 1 numbers but '1' has 2"),
    "YAML": ("explore --table", ".yaml", "words: {}\n", "its name must end in .toml or .json"),
    "5,000-digit answer": ("quiz --answers", ".txt", "1: " + "9" * 5000 + "\n",
                           "line 1: the answer is 5000 characters long"),
    "5,000-digit question number": ("quiz --answers", ".txt", "9" * 5000 + ": 0.4\n",
                                    "line 1: Module 1 has questions 1-7, not 999999999…"),
    "5,000-digit module number": ("quiz --answers", ".txt", "# mine\n" + "9" * 5000 + ".1: b\n",
                                  "line 2: module 999999999… is not being graded"),
    "lines 1-99999999999": ("check-lesson FILE", ".txt",
                            "See (cross-check: results.log lines 1-99999999999).\n",
                            "line 1: 'results.log lines 1-99999999999' cites a line past 99999"),
    "lines 1 and 0": ("check-lesson FILE", ".txt",
                      "Intro.\n\nSee (cross-check: results.log lines 1 and 0).\n",
                      "line 3: 'results.log lines 1 and 0' cites line 0"),
    "notebook nested 3,000 deep": ("check-lesson NOTEBOOK", ".ipynb",
                                   '{"cells": ' + "[" * DEEP + "]" * DEEP + "}",
                                   "it nests more than 32 levels deep"),
    "notebook with a NaN": ("check-lesson NOTEBOOK", ".ipynb", '{"cells": [], "x": NaN}',
                            "x is nan; every number must be finite"),
    "notebook as a list": ("check-lesson NOTEBOOK", ".ipynb", "[1, 2]",
                           "it is not a Jupyter notebook"),
    "notebook cell without a type": ("check-lesson NOTEBOOK", ".ipynb",
                                     '{"cells": [{"source": "x"}]}',
                                     "it is not a Jupyter notebook"),
    "a lone surrogate as a word": ("explore --table", ".json",
                                   '{"words": {"ba\\ud800nk": [0.3, 0.3, 0.9, 0]}}',
                                   'words."ba\\ud800nk" (a key) holds a lone surrogate'),
    "a lone surrogate in an axis name": ("explore --table", ".json",
                                         '{"axes": ["x", "\\udfff"], "words": {"up": [1, 0]}}',
                                         "axes[1] holds a lone surrogate"),
    "a lone surrogate in W_Q": ("explore --wq", ".json", '{"matrix": [["\\udc80"]]}',
                                "matrix[0][0] holds a lone surrogate"),
    "5,000-digit line number": ("check-lesson FILE", ".txt",
                                "(cross-check: results.log line " + "7" * 5000 + ")\n",
                                "cites a line past 99999"),
}


@pytest.mark.parametrize("case", DATA)
def test_file_whose_content_is_hostile(case, workspace, capsys):
    command, suffix, content, needle = DATA[case]
    what, _, argv = COMMANDS[command]
    path = _write(workspace / f"hostile{suffix}", content)
    assert_refused(workspace, capsys, argv(path, workspace), what, path, needle)


def test_installed_command_refuses_dev_zero_and_a_fifo_at_once(workspace, capsys):
    """The installed script, not just main(): /dev/zero as the lesson, a FIFO as the log."""
    fifo = _fifo(workspace / "fifo.log")
    assert_refused(workspace, capsys, ["check-lesson", "/dev/zero", "--log", fifo], "lesson",
                   "/dev/zero", "character device", subprocess_run=True)
    assert_refused(workspace, capsys, ["check-lesson", "good.txt", "--log", fifo], "log", fifo,
                   "FIFO", subprocess_run=True)
