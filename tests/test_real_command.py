"""`attention-workshop real` as a user runs it: text tables, JSON, figures, and one-line errors."""

import io
import json
import subprocess
import sys

import numpy as np
import pytest
from fresh import fresh_python

from attention_workshop import cli
from attention_workshop.real import catalog
from attention_workshop.real.families import FAMILIES
from attention_workshop.report import matrix_lines

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def reference(minilm_reference):  # sentence -> (tokens, ids, transformers' attentions [L, H, T, T])
    return lambda sentence: minilm_reference(sentence)[:3]


def test_json_has_every_weight(reference, capsys):
    assert cli.main(["real", "the river bank", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(data) == sorted(["model", "tokens", "ids", "layers", "heads", "d_head",
                                   "attentions"])
    tokens, ids, attentions = reference("the river bank")
    assert (data["model"], data["tokens"], data["ids"]) == ("minilm", tokens, ids)
    assert (data["layers"], data["heads"], data["d_head"]) == (6, 12, 32)
    np.testing.assert_allclose(np.array(data["attentions"]), attentions, rtol=0, atol=1e-5)


def test_text_table_for_a_chosen_head(reference, capsys):
    assert cli.main(["real", "the money bank", "--layer", "2", "--head", "11"]) == 0
    out = capsys.readouterr().out.splitlines()
    tokens, _, attentions = reference("the money bank")
    assert out[1] == "tokens (5): [CLS] the money bank [SEP]"
    table = matrix_lines(tokens, tokens, attentions[2, 11], indent=2)
    start = out.index(table[0])
    assert out[start:start + len(table)] == table


def test_text_without_a_head_shows_three(reference, capsys):
    assert cli.main(["real", "the river bank"]) == 0
    out = capsys.readouterr()
    assert sum(line.startswith("layer ") for line in out.out.splitlines()) == 3
    assert out.err == ""  # stderr is not a terminal here: no progress lines


class Terminal(io.StringIO):  # a stderr that says it is a terminal
    def isatty(self):
        return True


def test_progress_goes_to_stderr_on_a_terminal(reference, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert cli.main(["real", "the river bank", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["tokens"][3] == "bank"  # stdout stays pure JSON
    assert sys.stderr.getvalue().splitlines() == [
        f"loading model 'minilm' from {catalog.minilm_folder()} ...",
        "running bert forward pass (6 layers x 12 heads) ..."]


def test_out_writes_png_figures(reference, tmp_path, capsys):
    assert cli.main(["real", "the river bank", "--layer", "1", "--out", str(tmp_path)]) == 0
    png = tmp_path / "real_layer1.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(png) in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["real", "x", "--model", "gpt3"], "unknown model 'gpt3'; known models: minilm"),
    (["real", ""], "the sentence is empty"),
    (["real", "bank " * 511], "513 tokens long, but the model has positions for 512"),
    (["real", "the river bank", "--layer", "6"], "--layer 6 is out of range: the model has "
                                                  "layers 0-5"),
    (["real", "the river bank", "--head", "-1"], "--head -1 is out of range"),
])
def test_bad_input_is_one_line_and_exit_2(reference, capsys, argv, message):
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1  # no progress line, no report first
    assert err.startswith("attention-workshop: error: ") and message in err


def test_bad_folders(reference, tmp_path, capsys):
    assert cli.main(["real", "x", "--model", str(tmp_path)]) == 2
    assert "lacks config.json, model.safetensors, tokenizer.json" in capsys.readouterr().err
    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).write_bytes((catalog.minilm_folder() / name).read_bytes())
    (tmp_path / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}")
    assert cli.main(["real", "x", "--model", str(tmp_path)]) == 2
    assert "as safetensors" in capsys.readouterr().err.splitlines()[-1]


def test_installed_script(reference):
    done = subprocess.run(["attention-workshop", "real", "the river bank", "--layer", "0",
                           "--head", "4"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    tokens, _, attentions = reference("the river bank")
    table = matrix_lines(tokens, tokens, attentions[0, 4], indent=2)  # transformers' weights
    assert "bank" in table[4] and set(table) <= set(done.stdout.splitlines())
    bad = subprocess.run(["attention-workshop", "real", ""], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


@pytest.mark.parametrize("argv", [["real", "  "], ["real", "x", "--model", "gpt3"],
                                  ["real", "x", "--model", "/no/such/folder"]])
def test_refused_before_loading_so_stderr_is_exactly_one_line(argv, capsys):
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1


def test_model_help_lists_every_known_name_and_family(capsys):
    assert cli.main(["real", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the lines
    assert "--model NAME_OR_PATH minilm (default, installed with pip), gpt2 (Hugging Face " \
        "cache), smollm2 (installed with pip), a folder with config.json, model.safetensors, " \
        "tokenizer.json (model_type bert, gpt2, llama or qwen2; the weights may be sharded), " \
        "or a .gguf file" in text
    for name, known in catalog.KNOWN.items():
        assert f"{name} (" in text and known.source in text
    *first, last = FAMILIES  # the help reads the registry: a new family is listed by itself
    assert f"(model_type {', '.join(first)} or {last};" in text


@pytest.mark.parametrize("argv", [["real", "the river bank", "--layer", "2", "--head", "4"],
                                  ["explore", "a loan at the bank", "--format", "json"],
                                  ["quiz", "2", "--reveal"], ["check-lesson", "a.txt"]])
def test_a_commands_own_parser_reads_its_line_as_the_full_one(argv):
    full = vars(cli.build_parser().parse_args(argv))
    alone = vars(cli.build_parser(cli.command_named(argv)).parse_args(argv))
    assert alone == full and alone["command"] == argv[0]


def test_a_real_run_imports_no_other_commands_module():
    """Only real's own module of the subcommands' (the shared option helper is no command)."""
    code = ("import sys; from attention_workshop import cli; cli.build_parser('real'); "
            "print(sorted(m for m in sys.modules if m.startswith('attention_workshop.commands.')"
            " and m.rpartition('.')[2] in cli.COMMANDS.values()))")
    assert fresh_python(code) == "['attention_workshop.commands.real']"


def test_out_draws_the_heads_the_report_shows_in_the_format_asked(tmp_path, capsys):
    """The figures of `real --out` are of the layers whose heads the text lists (one choice,
    printout.chosen_heads), in --figure-format's format."""
    from attention_workshop.commands.real_report import chosen_heads
    from attention_workshop.real import load_model

    sentence = "we sat on the bank of the river"
    assert cli.main(["real", sentence, "--out", str(tmp_path), "--figure-format", "svg"]) == 0
    shown = [int(line.split()[1].rstrip(",")) for line in capsys.readouterr().out.splitlines()
             if line.startswith("layer ")]
    model = load_model("minilm")
    chosen, _ = chosen_heads(model, model.run(sentence))
    assert shown == [lay for lay, _ in chosen]
    assert sorted(p.name for p in tmp_path.glob("real_layer*")) == sorted(
        {f"real_layer{lay}.svg" for lay in shown})
