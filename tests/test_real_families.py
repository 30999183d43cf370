"""Every family in families.FAMILIES meets the contract written in families.py.

Each runs on a tiny random model of its own (tests/real_folder.py, no torch): the
outputs have the promised shapes and dtype, attention rows sum to 1, CAUSAL says
what the weights do, every tensor in tensor_shapes changes the outputs, and
config.json's keys and required options are read as the family declares them.
Equality with transformers is each family's own test (test_real_bert.py, ...).
"""

import importlib
import json
from dataclasses import MISSING, fields

import numpy as np
import pytest
from real_folder import CONFIGS, write_folder

from attention_workshop.errors import WorkshopError
from attention_workshop.real import load_model
from attention_workshop.real.config import MISSING as MISSING_KEY
from attention_workshop.real.config import ModelConfig, config_from_dict, lookup
from attention_workshop.real.families import FAMILIES, Family, family

safetensors_numpy = pytest.importorskip("safetensors.numpy")
tokenizers = pytest.importorskip("tokenizers")

MISSING_VALUE = object()
SENTENCE = "the river bank by"  # 4 words: BERT adds [CLS] and [SEP], 6 positions


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def model(request, tmp_path_factory):  # a tiny random model of each family
    return load_model(write_folder(tmp_path_factory.mktemp(request.param), request.param))


@pytest.mark.parametrize("model_type", sorted(FAMILIES))
def test_family_file_defines_the_contract(model_type):
    fam = family(model_type)
    assert isinstance(fam, Family) and fam.model_type == model_type
    assert importlib.import_module(FAMILIES[model_type]).FAMILY is fam  # one record, one file
    for name in ("config_keys", "defaults", "required"):
        assert isinstance(getattr(fam, name), dict), name
    assert isinstance(fam.prefix, str) and isinstance(fam.causal, bool)
    assert callable(fam.tensor_shapes) and callable(fam.forward)
    assert (fam.logits is not None) == fam.causal  # a decoder writes; an encoder does not
    sizes = {f.name for f in fields(ModelConfig)} - {"family", "causal"}
    needed = {f.name for f in fields(ModelConfig) if f.default is MISSING} - {"family", "causal"}
    assert needed <= set(fam.config_keys) | set(fam.defaults)  # every size comes from somewhere
    assert set(fam.config_keys) | set(fam.defaults) <= sizes  # and names a real field
    assert model_type in CONFIGS  # tests/real_folder.py holds a tiny config.json for it


def test_forward_returns_the_promised_arrays(model):
    cfg = model.config
    result = model.run(SENTENCE)
    L, H, T, D = cfg.n_layer, cfg.n_head, len(result.ids), cfg.d_model
    assert result.hidden_states.shape == (L + 1, T, D)
    assert result.attentions.shape == (L, H, T, T)
    assert result.queries.shape == (L, H, T, cfg.d_head)
    assert result.keys.shape == result.values.shape == (L, cfg.n_kv_head, T, cfg.d_head)
    assert H % cfg.n_kv_head == 0
    for array in (result.hidden_states, result.attentions, result.queries, result.keys,
                  result.values):
        assert array.dtype == np.float32 and np.isfinite(array).all()
    np.testing.assert_allclose(result.attentions.sum(axis=-1), 1.0, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(result.hidden, result.hidden_states[-1])


def test_causal_says_what_the_weights_do(model):
    weights = model.run(SENTENCE).attentions
    T = weights.shape[-1]
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    assert model.config.causal == family(model.config.family).causal
    if model.config.causal:
        assert (weights[..., future] == 0).all()
    else:
        assert (weights[..., future] > 0).all()


def test_every_listed_tensor_changes_the_outputs(model):
    """tensor_shapes names exactly what forward reads: reading another would fail (the loader
    holds no other), and leaving one unread would show here as an output that never moves."""
    cfg, fam = model.config, family(model.config.family)
    ids = np.asarray(model.run(SENTENCE).ids)

    def outputs(weights):  # the forward's arrays, and a decoder's next-token scores
        out = dict(fam.forward(weights, cfg, ids))
        if fam.logits is not None:
            out["logits"] = fam.logits(weights, cfg, out["hidden_states"][-1])
        return out

    before = outputs(model.weights)
    for name in fam.tensor_shapes(cfg):
        weights = dict(model.weights)
        # not one constant: a layer norm right after a bias cancels a shift of every channel
        # alike (GPT-2's last attention bias), and only rounding would show it moved
        nudge = np.linspace(0.1, 0.5, weights[name].size, dtype=np.float32)
        weights[name] = weights[name] + nudge.reshape(weights[name].shape)
        after = outputs(weights)
        assert any(not np.array_equal(after[key], before[key]) for key in before), name


def with_key(raw, key, value=MISSING_VALUE):  # config dict, "a.b" -> a copy with a.b set/left out
    raw = json.loads(json.dumps(raw))
    *path, last = key.split(".")
    table = raw
    for part in path:
        table = table.setdefault(part, {})
    if value is MISSING_VALUE:
        table.pop(last, None)
    else:
        table[last] = value
    return raw


@pytest.mark.parametrize("model_type", sorted(FAMILIES))
def test_config_keys_and_defaults_are_the_familys_own(model_type):
    fam, raw = family(model_type), CONFIGS[model_type]
    cfg = config_from_dict(raw)
    assert (cfg.family, cfg.causal) == (model_type, fam.causal)
    for field, keys in fam.config_keys.items():
        keys = (keys,) if isinstance(keys, str) else keys
        without = raw
        for key in keys:
            if lookup(raw, key) is not MISSING_KEY:
                assert getattr(cfg, field) == lookup(raw, key), field
            without = with_key(without, key)
        if field not in fam.defaults:
            with pytest.raises(WorkshopError, match=f"the key '{keys[0]}' is missing"):
                config_from_dict(without)
        elif fam.defaults[field] is None:  # the usual: derived from the other sizes
            usual = {"d_mlp": 4 * cfg.d_model, "d_head": cfg.d_model // cfg.n_head,
                     "n_kv_head": cfg.n_head}[field]
            assert getattr(config_from_dict(without), field) == usual, field
        else:
            assert getattr(config_from_dict(without), field) == fam.defaults[field], field


@pytest.mark.parametrize("model_type", sorted(FAMILIES))
def test_other_values_of_required_options_are_refused(model_type):
    for key, wanted in family(model_type).required.items():
        assert config_from_dict(with_key(CONFIGS[model_type], key, wanted)).family == model_type
        with pytest.raises(WorkshopError, match=f'{key} is "something else", which is not '
                                                'supported'):
            config_from_dict(with_key(CONFIGS[model_type], key, "something else"))


def test_a_llama_config_states_a_modern_decoder():
    cfg = config_from_dict(CONFIGS["llama"])
    assert (cfg.n_head, cfg.n_kv_head, cfg.d_head, cfg.d_model) == (4, 2, 4, 8)
    assert (cfg.norm, cfg.positions, cfg.gated, cfg.tied, cfg.bias) == (
        "rms", "rotary", True, False, False)
    assert cfg.rope_theta == 500.0 and cfg.activation == "silu" and cfg.eps == 1e-5
    old_style = {**with_key(CONFIGS["llama"], "rope_parameters"), "rope_theta": 250.0,
                 "rope_scaling": None}  # transformers 4's config.json
    assert config_from_dict(old_style).rope_theta == 250.0
    for key, value, words in (("rope_parameters.rope_type", "llama3", "rope_type is"),
                              ("rope_scaling", {"type": "linear", "factor": 2.0},
                               "rope_scaling is"),
                              ("num_key_value_heads", 3, "cannot share"),
                              ("rope_theta", "10000", "must be a positive number"),
                              ("tie_word_embeddings", 1, "must be true or false")):
        with pytest.raises(WorkshopError, match=words):
            config_from_dict(with_key(CONFIGS["llama"], key, value))
