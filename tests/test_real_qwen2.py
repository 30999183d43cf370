"""Our Qwen2 (real/families/qwen2.py: Llama's forward with biases on q, k, v and none on o) equals
transformers' Qwen2ForCausalLM on tiny random models built here with save_pretrained:
attentions, hidden states and logits in float32 and float64, the `real --format json`
report, and greedy ids from `generate` against transformers' own greedy loop. Shapes cover
more query heads than KV heads, an untied head, and a rotary base of Qwen2's default.
"""

import json

import numpy as np
import pytest
from test_real_gpt2 import byte_level_tokenizer
from test_real_llama import close_relative, reference_run

from attention_workshop import cli
from attention_workshop.real import load_model

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

SENTENCES = ["the river bank", "a boat by the money bank"]
SHAPES = {  # name: (layers, query heads, KV heads, d_model, tied, theta)
    "grouped_untied": (2, 4, 2, 32, False, 1000000.0),
    "one_kv_tied": (3, 6, 1, 36, True, 10000.0),
}


def build_qwen2(folder, layers, heads, kv, d_model, tied, theta, seed=0):
    """Save a random Qwen2ForCausalLM into `folder`; return it, eager, float32, in eval mode."""
    tok = byte_level_tokenizer()
    config = transformers.Qwen2Config(
        vocab_size=tok.get_vocab_size(), hidden_size=d_model, intermediate_size=2 * d_model + 4,
        num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv,
        max_position_embeddings=256, rms_norm_eps=1e-6, tie_word_embeddings=tied,
        rope_parameters={"rope_type": "default", "rope_theta": theta},
        bos_token_id=None, eos_token_id=None, pad_token_id=None)
    torch.manual_seed(seed)
    model = transformers.Qwen2ForCausalLM(config).eval()
    with torch.no_grad():  # norms away from 1, biases away from 0, weights large: sharp heads
        for name, p in model.named_parameters():
            p.add_(0.1 * torch.randn_like(p)) if "norm" in name else (
                p.add_(0.5 * torch.randn_like(p)) if name.endswith("bias") else p.mul_(4.0))
    model.save_pretrained(folder, safe_serialization=True)
    tok.save(str(folder / "tokenizer.json"))
    return transformers.Qwen2ForCausalLM.from_pretrained(
        folder, attn_implementation="eager", dtype=torch.float32).eval()


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_attentions_hidden_and_logits_equal_transformers(tmp_path, shape, dtype):
    layers, heads, kv, d_model, tied, theta = SHAPES[shape]
    reference = build_qwen2(tmp_path, *SHAPES[shape], seed=layers + heads)
    ours = load_model(tmp_path, dtype=dtype)
    cfg = ours.config
    assert (cfg.family, cfg.n_head, cfg.n_kv_head, cfg.tied, cfg.rope_theta) == (
        "qwen2", heads, kv, tied, theta)
    assert (cfg.bias, cfg.out_bias) == (True, False)  # q, k, v have biases; o has none
    names = set(ours.weights)
    assert "layers.0.self_attn.q_proj.bias" in names
    assert "layers.0.self_attn.o_proj.bias" not in names
    assert ("lm_head.weight" in names) == (not tied)
    for sentence in SENTENCES:
        result = ours.run(sentence)
        attentions, hidden, logits = reference_run(reference, result.ids)
        np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
        close_relative(result.hidden_states, hidden, 1e-5)
        close_relative(result.logits, logits, 1e-5)


def test_real_command_json_equals_transformers(tmp_path, capsys):
    reference = build_qwen2(tmp_path, *SHAPES["grouped_untied"], seed=7)
    assert cli.main(["real", SENTENCES[1], "--model", str(tmp_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    attentions, _, _ = reference_run(reference, report["ids"])
    np.testing.assert_allclose(np.array(report["attentions"]), attentions, rtol=0, atol=1e-5)
    assert report["heads"] == 4


def test_generate_writes_transformers_greedy_ids(tmp_path):
    reference = build_qwen2(tmp_path, *SHAPES["grouped_untied"], seed=9)
    ours = load_model(tmp_path)
    generation = ours.generate("the river bank", tokens=12)
    ids = torch.tensor([generation.prompt_ids])
    with torch.no_grad():
        theirs = reference.generate(ids, max_new_tokens=12, do_sample=False, min_new_tokens=12)
    assert generation.new_ids == theirs[0, ids.shape[1]:].tolist()
