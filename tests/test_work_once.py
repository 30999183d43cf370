"""Each piece of work is done once per command, counted: the prompt is encoded once by
`generate`, a sentence is tokenized once and run once by `real`; and the two API edges of a
cache: a cached run past the model's positions is refused, numpy's whole numbers are taken
as a number of tokens."""

import numpy as np
import pytest
from test_real_llama import SHAPES, build_llama

from attention_workshop import cli
from attention_workshop.errors import WorkshopError
from attention_workshop.real import load_model
from attention_workshop.real import model as model_module

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def llama_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("llama")
    build_llama(folder, *SHAPES["grouped"], seed=2)
    return folder


def counting(monkeypatch, owner, name):  # -> the list of calls' first arguments, as they come
    calls, original = [], getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(args[1] if len(args) > 1 else args[0])
        return original(*args, **kwargs)
    monkeypatch.setattr(owner, name, counted)
    return calls


def test_generate_encodes_its_prompt_once(llama_folder, monkeypatch, capsys):
    encoded = counting(monkeypatch, model_module, "encode")
    assert cli.main(["generate", "the river bank", "--model", str(llama_folder),
                     "--tokens", "3"]) == 0
    assert len(encoded) == 1  # the prompt, encoded once (it was twice: command and generate)
    capsys.readouterr()


@pytest.mark.parametrize("model", ["minilm", "llama"])
def test_real_tokenizes_and_runs_its_sentence_once(model, llama_folder, monkeypatch, capsys):
    encoded = counting(monkeypatch, model_module, "encode")
    runs = counting(monkeypatch, model_module.Model, "run")
    name = "minilm" if model == "minilm" else str(llama_folder)
    assert cli.main(["real", "the river bank", "--model", name]) == 0
    assert len(encoded) == 1
    assert [r for r in runs if r == "the river bank"] == ["the river bank"]  # the sentence once
    assert all(not isinstance(r, str) for r in runs if r != "the river bank")  # others: ids
    capsys.readouterr()


def test_a_cached_run_past_the_positions_is_refused(llama_folder):
    model = load_model(llama_folder)  # 256 positions
    past = model.run([5] * 255)
    model.run([6], past=past)  # 256: fits
    with pytest.raises(WorkshopError, match="257 tokens long"):
        model.run([6, 7], past=past)


def test_numpy_whole_numbers_are_a_number_of_tokens(llama_folder):
    model = load_model(llama_folder)
    plain = model.generate("the river bank", tokens=2)
    assert model.generate("the river bank", tokens=np.int64(2)).new_ids == plain.new_ids
    with pytest.raises(WorkshopError, match="whole number"):
        model.generate("the river bank", tokens=np.float64(2))
