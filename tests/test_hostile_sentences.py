"""Hostile sentences for `real` and `explore`: empty, invisible, special tokens only, too long.

Each runs with `--out out` over a previous set: exit 2, one stderr line saying what is wrong
(and, for a cap, whether it counts characters, words or tokens), no traceback, nothing on
stdout, out/ as it was. The slow ones (5,100 words once took minutes) run in a subprocess
with a timeout.
"""

import pytest
from hostile import assert_one_line_refusal
from real_folder import write_folder

from attention_workshop.errors import WorkshopError
from attention_workshop.real import catalog

pytest.importorskip("tokenizers")
NO_WORD = "holds no word: only invisible, control or combining characters"

# (sentence, words the message must hold); `real` runs them on a tiny BERT
REAL = {
    "empty": ("", "the sentence is empty"),
    "spaces, a tab, a newline": ("  \t\n ", "the sentence is empty"),
    "zero-width characters": ("\u200b\u200c\u2060", NO_WORD),
    "combining marks": ("\u0301\u0302\u0303", NO_WORD),
    "control characters": ("\x07\x08\x7f", NO_WORD),
    "direction marks": ("\u200f\u202e\u2066", NO_WORD),
    "5,001 characters": ("a" * 5001, "the sentence is 5001 characters long; at most 5000 "
                         "characters are read"),
    "past the model's 6 positions": ("the river bank by the water", "the sentence is 8 tokens "
                                     "long, but the model has positions for 6"),
}
# (sentence, words the message must hold); `real` runs them on MiniLM's own tokenizer
MINILM = {
    "special tokens typed": ("[CLS] [SEP]", "gives no word token (its tokens: [CLS] [CLS] [SEP] "
                             "[SEP])"),
    "other special tokens": ("[SEP] [PAD] [MASK]", "gives no word token"),
    "an emoji only": ("\U0001f642", "gives no word token (its tokens: [CLS] [UNK] [SEP])"),
}
EXPLORE = {
    "zero-width space": ("\u200b", NO_WORD),
    "combining marks": ("\u0301 \u0302", NO_WORD),
    "51 words": ("the river bank " * 17, "the sentence has 51 words; explore reads at most 50"),
    "6,000 characters": ("bank " * 1200, "the sentence is 6000 characters long; at most 5000"),
    "1,000 words": (" ".join(["bank"] * 1000), "the sentence has 1000 words; explore reads at "
                    "most 50"),
    "an escape code as a word": ("the \x1b[2J bank", "'\\x1b[2j' is not in the built-in table"),
}


@pytest.fixture
def workspace(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "explore_weights.png").write_bytes(b"the previous figure")
    (out / "head_view.html").write_bytes(b"the previous page")
    return tmp_path


@pytest.mark.parametrize("case", REAL)
def test_real(case, workspace, capsys):
    sentence, needle = REAL[case]
    folder = write_folder(workspace / "model", "bert")
    assert_one_line_refusal(["real", sentence, "--model", folder, "--out", workspace / "out"],
                            workspace, capsys, needle)


def test_real_caps_tokens_at_512_whatever_the_model(workspace, capsys):
    folder = write_folder(workspace / "model", "gpt2", n_positions=1024)
    assert_one_line_refusal(["real", "the " * 600, "--model", folder, "--out",
                             workspace / "out"], workspace, capsys,
                            "the sentence is 600 tokens long, but real reads at most 512")


@pytest.mark.parametrize("case", MINILM)
def test_real_on_minilm(case, workspace, capsys):
    try:
        catalog.minilm_folder()
    except WorkshopError:
        pytest.skip("MiniLM's weights are not installed")
    sentence, needle = MINILM[case]
    assert_one_line_refusal(["real", sentence, "--out", workspace / "out"], workspace, capsys,
                            needle)


@pytest.mark.parametrize("case", EXPLORE)
def test_explore(case, workspace, capsys):
    sentence, needle = EXPLORE[case]
    assert_one_line_refusal(["explore", sentence, "--out", workspace / "out"], workspace,
                            capsys, needle)


def test_explore_5100_words_is_refused_at_once(workspace, capsys):
    """Once over 120 s: now refused before any table is built (a timeout would fail it)."""
    words = " ".join(["a"] * 5100)
    assert_one_line_refusal(["explore", words, "--out", workspace / "out"], workspace, capsys,
                            "the sentence is 10199 characters long; at most 5000 characters "
                            "are read", subprocess_run=True)


def test_explore_a_300_character_word_not_in_the_sentence(workspace, capsys):
    err = assert_one_line_refusal(["explore", "the bank", "--word", "w" * 300, "--out",
                                   workspace / "out"], workspace, capsys,
                                  "is not in the sentence; choose one of: the, bank")
    assert len(err) < 200  # the word is shown cut, not 300 characters of it


@pytest.mark.parametrize(("argv", "needle"), [
    (["--layer", "9"], "--layer 9 is out of range: the model has layers 0-1"),
    (["--head", "-1"], "--head -1 is out of range: the model has heads 0-1"),
    (["--colour", "red"], "unrecognized arguments: --colour red"),
])
def test_real_bad_options(argv, needle, workspace, capsys):
    folder = write_folder(workspace / "model", "bert")
    assert_one_line_refusal(["real", "the river bank", "--model", folder, "--out",
                             workspace / "out", *argv], workspace, capsys, needle)


# bytes that are not UTF-8 on the command line: Python keeps them as U+DC80-U+DCFF
NOT_UTF8 = "holds bytes that are not text here"
UNDECODED = {  # (command, argv after the command, words the message must hold)
    "real, a Latin-1 byte": ("real", ["the caf\udce9 bank"], "(\\xe9); type it as UTF-8 text"),
    "real, a UTF-8 word under an ASCII locale": ("real", ["the caf\udcc3\udca9 bank"],
                                                 "they are UTF-8, but the locale is not"),
    "real --vs": ("real", ["the river bank", "--vs", "\udcff", "--word", "bank"], NOT_UTF8),
    "explore": ("explore", ["the caf\udce9 bank"], "(\\xe9); type it as UTF-8 text"),
    "explorer": ("explorer", ["the \udce9", "--no-real"], NOT_UTF8),
}


@pytest.mark.parametrize("case", UNDECODED)
def test_bytes_that_are_not_utf8(case, workspace, capsys):
    command, argv, needle = UNDECODED[case]
    model = ["--model", write_folder(workspace / "model", "bert")] if command == "real" else []
    assert_one_line_refusal([command, *argv, *model, "--out", workspace / "out"], workspace,
                            capsys, needle)


@pytest.mark.parametrize(("sentence", "environment", "needle"), [
    (b"the caf\xe9 bank", {}, "(\\xe9); type it as UTF-8 text"),
    ("the café bank".encode(), {"LC_ALL": "C", "PYTHONUTF8": "0"},
     "(\\xc3\\xa9); they are UTF-8, but the locale is not: run with PYTHONUTF8=1"),
], ids=["Latin-1", "UTF-8 under LC_ALL=C"])
def test_the_installed_command_given_raw_bytes(sentence, environment, needle, workspace):
    """As a shell passes them: argv bytes, decoded by Python with its locale."""
    import os
    import subprocess
    import sys

    folder = write_folder(workspace / "model", "bert")
    done = subprocess.run([sys.executable, "-m", "attention_workshop", "real", sentence,
                           "--model", str(folder), "--out", "out"], cwd=workspace,
                          capture_output=True, timeout=120, env={**os.environ, **environment})
    err = done.stderr.decode("ascii", "backslashreplace")
    assert (done.returncode, done.stdout) == (2, b""), err
    assert err.count("\n") == 1 and "Traceback" not in err and needle in err, err
