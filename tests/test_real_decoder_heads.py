"""`real` and `generate` on SmolLM2 as a Module 4 learner meets them: the heads `real` shows
"by content" are the ones transformers' own attentions on random tokens call content (not
previous-token heads), each labelled by that same rule; `generate --help` names one default."""

import re

import numpy as np
import pytest
from head_reference import reference_scores, torch_run
from smollm2_reference import smollm2_path

from attention_workshop import cli
from attention_workshop.real.analysis import head_patterns

torch = pytest.importorskip("torch")


def test_real_leaves_out_the_previous_token_heads_and_labels_them_by_the_same_rule(
        smollm2_model, capsys):
    smollm2_path()
    assert cli.main(["real", "the river bank", "--model", "smollm2"]) == 0
    out = capsys.readouterr().out
    from attention_workshop.real import load_model

    ids, _ = head_patterns.sequence_for(load_model("smollm2"))
    theirs = reference_scores(torch_run(smollm2_model, ids)[0], ids, "previous", 0)  # [30, 9]
    shown = [(int(lay), int(h), label) for lay, h, label in
             re.findall(r"^layer (\d+), head (\d+): row = .*?\(rows sum to 1\)(.*)$", out, re.M)]
    assert len(shown) == 3
    for lay, h, label in shown:
        assert theirs[lay, h] <= head_patterns.PREVIOUS_HEAD  # content, by the random tokens
        assert label == f"; it looks by content (previous score {theirs[lay, h]:.2f} on " \
                        "random tokens)"
    assert "a previous-token head" not in out
    prose = " ".join(out.split())
    named = re.search(r"left out (\d+) position heads \(on random tokens each looks at the "
                      r"token just before: (.*?)\)", prose)
    previous = np.argwhere(theirs > head_patterns.PREVIOUS_HEAD)  # layer then head order
    assert int(named.group(1)) == len(previous) == 8
    assert named.group(2) == ", ".join(f"L{lay} H{h}" for lay, h in previous[:4]) + ", ..."
    assert (shown[0][0], shown[0][1]) == (4, 2)  # results.log [S12]'s strongest content head


def test_real_labels_a_chosen_previous_token_head_so(smollm2_model, capsys):
    assert cli.main(["real", "the river bank", "--model", "smollm2", "--layer", "16",
                     "--head", "0"]) == 0
    out = capsys.readouterr().out
    assert "layer 16, head 0: row = looking token, column = looked at (rows sum to 1); a " \
           "previous-token head (0.91 on random tokens)" in out


def test_generate_help_names_one_default_and_only_decoders(capsys):
    assert cli.main(["generate", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    model = text[text.index("--model NAME_OR_PATH a decoder:"):text.index("--tokens N write")]
    assert model.count("default") == 1 and "smollm2 (default, installed with pip)" in model
    assert "minilm" not in model
