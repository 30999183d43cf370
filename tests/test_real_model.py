"""Model.run on a tiny random model (tests/real_folder.py), and the package's public names."""

from dataclasses import fields

import pytest
from real_folder import write_folder

from attention_workshop.errors import WorkshopError
from attention_workshop.real import load_model

safetensors_numpy = pytest.importorskip("safetensors.numpy")
tokenizers = pytest.importorskip("tokenizers")


def test_sentence_too_long_and_empty(tmp_path):
    model = load_model(write_folder(tmp_path, "gpt2"))  # 6 positions
    assert len(model.run("the river bank by the water").ids) == 6
    with pytest.raises(WorkshopError, match="7 tokens long, but the model has positions for 6"):
        model.run("the river bank by the water bank")
    with pytest.raises(WorkshopError, match="sentence is empty"):
        model.run("  ")


def test_public_api_keeps_its_names_and_fields():
    from attention_workshop.real import DEFAULT, KNOWN, Model, RunResult  # noqa: F401

    assert DEFAULT == "minilm" and DEFAULT in KNOWN
    assert [f.name for f in fields(RunResult)] == [
        "tokens", "ids", "special", "attentions", "hidden", "hidden_states", "queries", "keys",
        "values"]
    assert [f.name for f in fields(Model)] == ["name", "config", "weights", "tokenizer"]
