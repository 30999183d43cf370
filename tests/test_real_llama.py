"""Our NumPy Llama (real/families/llama.py) equals transformers' LlamaForCausalLM on tiny random
Llamas built here: rotary positions, grouped-query attention, RMSNorm, SwiGLU.

Each test saves a random model with save_pretrained (safetensors, names under "model.",
lm_head beside it when untied) next to a byte-level BPE tokenizer.json, and loads the
folder with load_model. Shapes cover head_dim != d_model / n_head, 2 KV heads, 1 KV head
(multi-query), an untied head, rotary theta other than 10000, and a sharded checkpoint.
"""

import json

import numpy as np
import pytest
from test_real_gpt2 import byte_level_tokenizer

from attention_workshop import cli
from attention_workshop.errors import WorkshopError
from attention_workshop.real import load_model

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

SENTENCES = ["the river bank", "a boat by the money bank", "the bank the bank the bank the bank"]
SHAPES = {  # name: (layers, query heads, KV heads, d_model, head_dim, tied, theta)
    "grouped": (2, 4, 2, 32, 8, False, 10000.0),
    "head_dim_apart": (2, 4, 2, 24, 10, True, 500.0),
    "one_kv_head": (3, 6, 1, 36, 6, False, 100000.0),
    "no_grouping": (1, 2, 2, 16, 8, True, 10000.0),
}


def build_llama(folder, layers, heads, kv, d_model, head_dim, tied, theta, seed=0,
                shard=None):
    """Save a random LlamaForCausalLM into `folder`; return it, in eval mode, in float32."""
    tok = byte_level_tokenizer()
    config = transformers.LlamaConfig(
        vocab_size=tok.get_vocab_size(), hidden_size=d_model, intermediate_size=2 * d_model + 4,
        num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv,
        head_dim=head_dim, max_position_embeddings=256, rms_norm_eps=1e-5,
        tie_word_embeddings=tied, rope_parameters={"rope_type": "default", "rope_theta": theta},
        bos_token_id=None, eos_token_id=None, pad_token_id=None)
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(config).eval()
    with torch.no_grad():  # norms away from 1 and weights large enough to give sharp heads
        for name, p in model.named_parameters():
            p.add_(0.1 * torch.randn_like(p)) if "norm" in name else p.mul_(4.0)
    model.save_pretrained(folder, safe_serialization=True,
                          **({"max_shard_size": shard} if shard else {}))
    tok.save(str(folder / "tokenizer.json"))
    return transformers.LlamaForCausalLM.from_pretrained(
        folder, attn_implementation="eager", dtype=torch.float32).eval()


def reference_run(model, ids):  # -> attentions [L, H, T, T], hidden [L + 1, T, D], logits
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), output_attentions=True,
                    output_hidden_states=True)
    return (torch.stack(out.attentions)[:, 0].numpy(), torch.stack(out.hidden_states)[:, 0].numpy(),
            out.logits[0].numpy())


def close_relative(ours, theirs, rtol):  # hidden states grow with depth: compare to their size
    scale = np.abs(theirs).max(axis=-1, keepdims=True) + 1.0
    assert (np.abs(ours - theirs) / scale).max() < rtol


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_attentions_hidden_and_logits_equal_transformers(tmp_path, shape, dtype):
    layers, heads, kv, d_model, head_dim, tied, theta = SHAPES[shape]
    reference = build_llama(tmp_path, *SHAPES[shape], seed=layers + heads)
    ours = load_model(tmp_path, dtype=dtype)
    cfg = ours.config
    assert (cfg.family, cfg.n_head, cfg.n_kv_head, cfg.d_head, cfg.tied, cfg.rope_theta) == (
        "llama", heads, kv, head_dim, tied, theta)
    assert ("lm_head.weight" in ours.weights) == (not tied)
    for sentence in SENTENCES:
        result = ours.run(sentence)
        attentions, hidden, logits = reference_run(reference, result.ids)
        T = len(result.ids)
        assert result.attentions.shape == attentions.shape == (layers, heads, T, T)
        assert result.keys.shape == result.values.shape == (layers, kv, T, head_dim)
        np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
        close_relative(result.hidden_states, hidden, 1e-4)
        close_relative(result.logits, logits, 1e-4)
        assert result.attentions.dtype == np.dtype(dtype)


def test_a_sharded_checkpoint_loads_as_one(tmp_path):
    reference = build_llama(tmp_path, *SHAPES["grouped"], shard="20KB")
    assert (tmp_path / "model.safetensors.index.json").is_file()
    assert not (tmp_path / "model.safetensors").exists()
    assert len(list(tmp_path.glob("model-*.safetensors"))) > 2
    result = load_model(tmp_path).run(SENTENCES[1])
    attentions, hidden, _ = reference_run(reference, result.ids)
    np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
    close_relative(result.hidden_states, hidden, 1e-4)


def test_queries_keys_and_values_are_the_models_own(tmp_path):
    """transformers' q_proj, k_proj, v_proj outputs, hooked: our k and v keep the 2 KV heads;
    our q and k are theirs after the rotary turn (checked through the scores)."""
    reference = build_llama(tmp_path, *SHAPES["grouped"], seed=7)
    result = load_model(tmp_path, dtype="float64").run(SENTENCES[1])
    caught = {}
    hooks = [getattr(layer.self_attn, name).register_forward_hook(
        lambda _m, _i, out, key=(i, name): caught.__setitem__(key, out[0].detach().numpy()))
        for i, layer in enumerate(reference.model.layers) for name in ("v_proj",)]
    reference_run(reference, result.ids)
    for hook in hooks:
        hook.remove()
    T = len(result.ids)
    for i in range(2):
        values = caught[(i, "v_proj")].reshape(T, 2, 8).transpose(1, 0, 2)
        np.testing.assert_allclose(result.values[i], values, rtol=0, atol=1e-4)
    group = 4 // 2  # query head h reads KV head h // 2
    scores = result.queries @ np.repeat(result.keys, group, axis=1).swapaxes(-1, -2) / np.sqrt(8)
    scores = np.where(np.tri(T, dtype=bool), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    np.testing.assert_allclose(weights / weights.sum(-1, keepdims=True), result.attentions,
                               rtol=0, atol=1e-12)


def test_rotary_scores_depend_on_distance_only(tmp_path):
    """The same token repeated: with rotary positions (and no position rows), layer 0's score
    of query i on key j depends on i - j only."""
    build_llama(tmp_path, *SHAPES["grouped"], seed=3)
    model = load_model(tmp_path, dtype="float64")
    ids = [5] * 12
    r = model.run(ids)
    q, k = r.queries[0], np.repeat(r.keys[0], 2, axis=0)  # [H, T, d]
    scores = q @ k.swapaxes(-1, -2)  # [H, T, T]
    for d in range(6):
        diagonal = np.diagonal(scores, offset=-d, axis1=1, axis2=2)  # (i, i - d) for every i
        np.testing.assert_allclose(diagonal, diagonal[:, :1].repeat(diagonal.shape[1], 1),
                                   rtol=1e-9, atol=1e-9)


def test_real_command_json_equals_transformers(tmp_path, capsys):
    reference = build_llama(tmp_path, *SHAPES["head_dim_apart"], seed=11)
    assert cli.main(["real", SENTENCES[1], "--model", str(tmp_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    attentions, _, _ = reference_run(reference, report["ids"])
    np.testing.assert_allclose(np.array(report["attentions"]), attentions, rtol=0, atol=1e-5)
    assert report["heads"] == 4 and report["d_head"] == 10


def test_kv_cache_equals_a_full_recompute(tmp_path):
    build_llama(tmp_path, *SHAPES["one_kv_head"], seed=5)
    model = load_model(tmp_path, dtype="float64")
    ids = model.encode(SENTENCES[2])
    whole = model.run(ids)
    past = model.run(ids[:4])
    for t in range(4, len(ids)):  # one token at a time, on the cache of the ones before
        step = model.run([ids[t]], past=past)
        assert step.attentions.shape[-2:] == (1, t + 1)
        np.testing.assert_allclose(step.attentions[:, :, 0], whole.attentions[:, :, t, :t + 1],
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(step.logits[0], whole.logits[t], rtol=0, atol=1e-9)
        past = step
    np.testing.assert_allclose(past.keys, whole.keys, rtol=0, atol=1e-12)


def test_rotary_variants_we_do_not_compute_are_refused(tmp_path):
    build_llama(tmp_path, *SHAPES["grouped"])
    raw = json.loads((tmp_path / "config.json").read_text())
    raw["rope_parameters"] = {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}
    (tmp_path / "config.json").write_text(json.dumps(raw))
    with pytest.raises(WorkshopError, match='rope_parameters.rope_type is "linear", which is not '
                                            'supported'):
        load_model(tmp_path)
