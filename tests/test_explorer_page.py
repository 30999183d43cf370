"""explorer.html without a browser: one self-contained file, data that cannot break out of its
script element, the engine's own numbers embedded, and the `explorer` command's errors."""

import base64
import hashlib
import json
import re

import numpy as np
import pytest
from explore_cli import own_files

from attention_workshop import cli
from attention_workshop.figures.explorer import explorer_data, explorer_html
from attention_workshop.figures.explorer.data import EXTRA_DIMS, EXTRA_SEED
from attention_workshop.modules.module2 import scaling_experiment

HOSTILE = ["</script><svg/onload=window.pwned=1>", "<!--<script>", "__DATA__", "__JS__",
           "__SCRIPT__", "&lt;b&gt;", "\u2028", '"]}</script><script>window.pwned=2</script>']


def embedded(page):  # the page's data, as the browser's JSON.parse will read it
    found = re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S)
    return json.loads(found.group(1))


@pytest.fixture(scope="module")
def scaling():
    return scaling_experiment()


def test_one_file_that_fetches_nothing(scaling):
    page = explorer_html(explorer_data(scaling)).replace('"http://www.w3.org/2000/svg"', "SVG")
    assert not re.search(r"https?://|@import|\bfetch\(|XMLHttpRequest", page)
    markup = re.sub(r"<script>.*?</script>", "", page, flags=re.S)  # the page's own script apart
    assert not re.search(r"<(link|img|iframe)\b|\bsrc\s*=", markup)
    assert page.count("<script") == 2 and page.count("</script>") == 2
    # The policy forbids every fetch, even by mistake; images only from blobs the page itself
    # makes ("save as PNG" draws its own SVG).
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    assert policy.startswith("default-src 'none';") and policy.endswith("; img-src blob:")


def test_the_policy_allows_exactly_the_page_own_script_and_style(scaling):
    page = explorer_html(explorer_data(scaling))
    for tag, key in (("script", "script-src"), ("style", "style-src")):
        body = re.search(rf"<{tag}>(.*?)</{tag}>", page, re.S).group(1)
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"{key} 'sha256-{digest}'" in page


def test_hostile_strings_stay_data(scaling):
    data = explorer_data(scaling)
    data["table"]["words"].append([HOSTILE[0], [0.1, 0.2, 0.3, 0.4]])
    data["title"] = "<b>title & __DATA__</b>"
    data["real"] = {"model": HOSTILE[1], "layers": 1, "heads": 1, "d_head": 1, "source": "x",
                    "runs": [{"sentence": " ".join(HOSTILE), "tokens": HOSTILE,
                              "special": [False] * len(HOSTILE),
                              "attentions": np.eye(len(HOSTILE))[None, None].tolist()}]}
    page = explorer_html(data)
    assert page.count("</script>") == 2 and "<!--" not in page
    assert "<title>&lt;b&gt;title &amp; __DATA__&lt;/b&gt;</title>" in page
    assert embedded(page) == data  # nothing was substituted inside the data


def test_size_without_the_real_model_is_under_300_kb(scaling):
    assert len(explorer_html(explorer_data(scaling)).encode()) < 300_000


def test_s5_rows_are_the_log_lines(scaling, tmp_path):
    """The page's [S5] table, formatted as the log does, is results.log's lines 77-80."""
    assert cli.main(["run", "--no-figures", "--no-real", "--out", str(tmp_path)]) == 0
    log = (tmp_path / "results.log").read_text().splitlines()[76:80]
    s5 = explorer_data(scaling)["s5"]
    for line, (d, std, unscaled, scaled) in zip(log, s5["lesson"], strict=True):
        assert line == (f"  d = {d:3d}: dot-product std = {std:6.2f}  (sqrt(d) = "
                        f"{np.sqrt(d):5.2f}) | avg top weight: unscaled = {unscaled:.3f}, "
                        f"scaled = {scaled:.3f}")
    curve = {row[0]: row[1:] for row in s5["curve"]}
    assert sorted(curve) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    for s in (scaling, scaling_experiment(dims=EXTRA_DIMS, seed=EXTRA_SEED)):
        for d, *measured in zip(s.dims, s.std, s.unscaled, s.scaled, strict=True):
            assert curve[d] == measured
    for d, scores in s5["examples"]:  # 8 dot products of N(0, 1) vectors of length d
        assert len(scores) == s5["rows"] and np.std(scores) < 6 * np.sqrt(d)


def test_command_writes_the_page_and_says_how_to_open_it(tmp_path, capsys):
    assert cli.main(["explorer", "the money bank", "--out", str(tmp_path), "--no-real"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'explorer.html'}" in out and "browser" in out
    data = embedded((tmp_path / "explorer.html").read_text())
    assert data["start"] == {"sentence": "the money bank", "word": "bank"}
    assert data["real"] is None


@pytest.mark.parametrize(("argv", "message"), [
    (["explorer", "the lak bank"], "'lak' (closest: lake)"),
    (["explorer", "   "], "the sentence is empty"),
])
def test_command_bad_sentence_is_one_line_exit_2_and_writes_nothing(argv, message, tmp_path,
                                                                      capsys):
    assert cli.main([*argv, "--out", str(tmp_path / "out"), "--no-real"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("own", "message"), [
    ({"replace": True}, "--replace-table needs --table FILE"),
    ({"table": {"heron": [0.8, 0.0, 0.4]}}, "its 3 columns are not the built-in table's"),
    ({"table": {"heron": [0.8, 0.0, 0.4, 0.1]}, "w_q": [[1.0, 0.0]] * 3}, "W_Q"),  # 3 rows, 4 axes
    ({"table": {"heron": [0.8, 0.0, 0.4, 0.1]}, "replace": True},
     "'the', 'bank' are not in the table"),
])
def test_command_bad_own_files_are_one_line_exit_2_and_write_nothing(own, message, tmp_path,
                                                                      capsys):
    argv = ["explorer", "the heron bank", "--out", str(tmp_path / "out"), "--no-real"]
    if "replace" in own and "table" not in own:
        argv.append("--replace-table")
    argv += own_files(tmp_path, own.get("table"), own.get("replace", False), own.get("w_q"))
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()


def test_command_embeds_the_learners_table_and_wiring(tmp_path, capsys):
    table = {"heron": [0.8, 0.0, 0.4], "the": [0.0, 0.0, 1.0], "pond": [1.0, 0.2, 0.0]}
    w_q, w_k = [[1.0], [0.0], [0.5]], [[0.0], [1.0], [0.2]]  # 3 axes, 1 channel
    argv = ["explorer", "the heron pond", "--word", "heron", "--out", str(tmp_path / "out"),
            "--no-real", *own_files(tmp_path, table, True, w_q, w_k)]
    assert cli.main(argv) == 0
    data = embedded((tmp_path / "out" / "explorer.html").read_text())
    assert data["table"] == {"axes": ["axis1", "axis2", "axis3"],
                             "words": [[w, row] for w, row in table.items()]}
    assert data["wiring"] == {"channels": ["channel1"], "w_q": w_q, "w_k": w_k, "w_v": None,
                              "name": "your wiring", "lesson": False}
    assert data["start"] == {"sentence": "the heron pond", "word": "heron"}
    default = embedded(explorer_html(explorer_data(scaling_experiment())))
    assert default["wiring"]["name"] == "the lesson's wiring" and default["wiring"]["lesson"]


def test_command_unwritable_folder_is_one_line_exit_2(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert cli.main(["explorer", "--out", str(blocker / "sub"), "--no-real"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err


def test_module3_numbers_are_the_float64_run(tmp_path, capsys):
    """The page's MiniLM weights are Module 3's float64 forward pass, digit for digit."""
    pytest.importorskip("tokenizers")
    from attention_workshop.real import load_model

    assert cli.main(["explorer", "the bank by the river", "--out", str(tmp_path)]) == 0
    real = embedded((tmp_path / "explorer.html").read_text())["real"]
    model = load_model("minilm", dtype=np.float64)
    sentences = [run["sentence"] for run in real["runs"]]
    assert sentences == ["the bank by the river", "the river bank", "the money bank"]
    for run in real["runs"]:
        result = model.run(run["sentence"])
        assert run["tokens"] == result.tokens and run["special"] == result.special
        assert np.array_equal(np.array(run["attentions"]), result.attentions)
    assert real["runs"][1]["pair"] == [3, 2] and real["runs"][2]["pair"] == [3, 2]
    assert "pair" not in real["runs"][0]
    assert (real["layers"], real["heads"], real["d_head"]) == (6, 12, 32)


@pytest.mark.parametrize("real", [False, True])
def test_run_registers_the_page_with_module3s_own_numbers(real, tmp_path, replayed_modules):
    """`run` writes explorer.html through the figures registry, from the modules' results."""
    if real:
        pytest.importorskip("tokenizers")
    from attention_workshop import figures
    from attention_workshop.modules import module2, module3
    from attention_workshop.report import Log
    from attention_workshop.workshop import compute

    results = compute(Log(), real=real)
    drawing = figures.registry()["explorer.html"]
    data = embedded(drawing(results, tmp_path / "explorer.html").read_text())
    assert data["s5"]["lesson"][0][1] == results[module2.Result].scaling.std[0]
    if not real:
        assert data["real"] is None
        return
    m3 = results[module3.Result]
    for run, result in zip(data["real"]["runs"], (m3.river, m3.money), strict=True):
        assert run["tokens"] == result.tokens
        assert np.array_equal(np.array(run["attentions"]), result.attentions)


def test_real_out_writes_the_page_with_the_runs_real_computed(tmp_path, capsys):
    """`real SENTENCE --out DIR`: explorer.html holds that run (float32, as `real` computes)
    first, then the lesson sentences through the same model, every weight as computed."""
    pytest.importorskip("tokenizers")
    from attention_workshop.real import load_model

    sentence = "the fish swam to the bank"
    assert cli.main(["real", sentence, "--out", str(tmp_path), "--format", "json"]) == 0
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    assert f"wrote {tmp_path / 'explorer.html'}" in captured.err
    data = embedded((tmp_path / "explorer.html").read_text())
    assert data["start"]["sentence"] == "the river bank"  # swam, to: not in the table
    runs = data["real"]["runs"]
    assert [r["sentence"] for r in runs] == [sentence, "the river bank", "the money bank"]
    assert runs[0]["tokens"] == printed["tokens"]
    assert np.array_equal(np.array(runs[0]["attentions"]), np.array(printed["attentions"]))
    model = load_model("minilm")
    for run in runs[1:]:
        assert np.array_equal(np.array(run["attentions"]), model.run(run["sentence"]).attentions)
    assert "float32" in data["real"]["source"]


@pytest.mark.parametrize("needed", ["chromium", "axe-core"])
def test_browser_tests_fail_under_ci_when_chromium_or_axe_is_missing(needed, monkeypatch,
                                                                     tmp_path):
    import browser

    if needed == "chromium":
        monkeypatch.setattr(browser.shutil, "which", lambda name: None)
    else:
        monkeypatch.setattr(browser, "AXE", tmp_path / "no-axe.min.js")
    require = {"chromium": browser.require_browser, "axe-core": browser.require_axe}[needed]
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=needed):
        require()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match=needed):
        require()


def test_run_says_where_the_page_is(tmp_path, capsys):
    assert cli.main(["run", "--no-real", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'explorer.html'}" in out
    assert f"open {tmp_path / 'explorer.html'} in a browser" in out
    assert embedded((tmp_path / "explorer.html").read_text())["real"] is None


def test_the_docs_class_example_runs_as_printed(tmp_path, monkeypatch, capsys):
    """docs/explorer.md's "hosting it for a class" command, with the files it names."""
    import shlex
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    text = " ".join((root / "docs" / "explorer.md").read_text().split())
    command = re.search(r'`(attention-workshop explorer "the heron pond bank"[^`]*)`', text)
    argv = shlex.split(command.group(1))[1:]
    monkeypatch.chdir(root)
    argv[argv.index("--out") + 1] = str(tmp_path / "class")
    assert cli.main([*argv, "--no-real"]) == 0
    data = embedded((tmp_path / "class" / "explorer.html").read_text())
    assert data["start"] == {"sentence": "the heron pond bank", "word": "heron"}
    assert data["table"]["axes"] == ["bird", "water", "ground", "filler"]
    assert data["wiring"]["channels"] == ["wet", "dry"] and not data["wiring"]["lesson"]
