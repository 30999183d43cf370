"""Module 4's numbers against transformers' SmolLM2 (float32, eager) and by hand.

The module runs SmolLM2 in float64 with our own code; here each logged kind of number is
recomputed independently: the sizes by hand, the rotary fact with transformers' own
apply_rotary_pos_emb, bank's weights and the pattern scores from transformers' attentions,
the greedy continuations from transformers' own greedy loop (interventions_reference.greedy).
"""

import numpy as np
import pytest
from interventions_reference import greedy
from shared_run import alone
from smollm2_reference import smollm2_path
from test_smollm2 import reference_run

from attention_workshop.modules import module4
from attention_workshop.real.analysis.head_patterns import pattern_scores

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def module_run():  # (its Result, its log lines: [S10]'s header first)
    smollm2_path()
    result, log = alone(module4)  # module4.run(Log(), {}), once a session (shared_run.py)
    return result, log.lines  # it pins its first line by section: no padding


def test_sizes_and_cache_worked_by_hand(module_run):
    result, lines = module_run
    assert lines[0].startswith("[S10] Module 4")
    assert "30 layers x 9 query heads over 3 key/value heads, d_model = 576" in lines[1]
    assert "sqrt(64) = 8.000" in lines[2]
    assert "query heads 0-2 read KV head 0, 3-5 read KV head 1, 6-8 read KV head 2" in lines[4]
    assert f"= {2 * 30 * 3 * 64 * 4:,} bytes (a KV head per query head: {2 * 30 * 9 * 64 * 4:,}" \
        in lines[5]


def test_rotary_scores_equal_transformers_rotation(module_run, smollm2_model):
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    result, _ = module_run
    rotary = smollm2_model.model.rotary_emb
    layer0 = smollm2_model.model.layers[0]
    with torch.no_grad():
        ids = torch.tensor([result.river.ids])
        x = layer0.input_layernorm(smollm2_model.model.embed_tokens(ids)).double()
        q = x @ layer0.self_attn.q_proj.weight.double().T  # [1, T, 576]
        k = x @ layer0.self_attn.k_proj.weight.double().T
        q, k = q[0, 2, :64], k[0, 1, :64]  # bank's head-0 query, river's KV-head-0 key

        def score(m, n):
            cos, sin = rotary(x, torch.tensor([[m, n]]))
            qm, _ = apply_rotary_pos_emb(q.view(1, 1, 1, 64), q.view(1, 1, 1, 64),
                                         cos[:, :1].double(), sin[:, :1].double())
            kn, _ = apply_rotary_pos_emb(k.view(1, 1, 1, 64), k.view(1, 1, 1, 64),
                                         cos[:, 1:].double(), sin[:, 1:].double())
            return float((qm.flatten() @ kn.flatten()) / 8)

    same, other = result.rotary
    theirs = [score(3, 0), score(53, 50), score(503, 500)]
    np.testing.assert_allclose(same, theirs, rtol=0, atol=1e-4)  # their angles are float32
    assert abs(other - score(8, 0)) < 1e-4 and abs(other - same[0]) > 0.1


def test_banks_weights_equal_transformers(module_run, smollm2_model):
    result, lines = module_run
    for run, grid in ((result.river, result.to_river), (result.money, result.to_money)):
        attentions, _, _ = reference_run(smollm2_model, run.ids)
        np.testing.assert_allclose(grid, attentions[:, :, 2, 1], rtol=0, atol=1e-5)
        assert (attentions[:, :, 0, 1:] == 0).all()  # bank can only look back; "the" at itself
    s12 = lines[lines.index(next(x for x in lines if x.startswith("[S12]"))) + 1]
    lay, head = np.unravel_index(int(np.argmax(result.to_river)), result.to_river.shape)
    assert s12.startswith(f'  bank -> river in "the river bank": L{lay} H{head} = '
                          f"{result.to_river.max():.3f}")


def test_pattern_scores_equal_transformers(module_run, smollm2_model):
    result, _ = module_run
    ids = result.patterns["induction"].ids
    attentions, _, logits = reference_run(smollm2_model, ids)
    for kind, found in result.patterns.items():
        np.testing.assert_allclose(found.scores, pattern_scores(attentions, kind), rtol=0,
                                   atol=1e-4)
        assert [s for *_, s in found.top] == sorted(found.scores.ravel())[::-1][:3]
    lp = torch.log_softmax(torch.tensor(logits, dtype=torch.float64), dim=-1).numpy()
    nll = -lp[np.arange(len(ids) - 1), ids[1:]]  # position i predicts token i + 1
    first, second = nll[:49].mean(), nll[50:].mean()
    induction = result.patterns["induction"]
    assert abs(induction.loss_first - first) < 1e-3 and abs(induction.loss_second - second) < 1e-3


def test_the_continuations_are_transformers_greedy_ids(module_run, smollm2_model,
                                                         smollm2_tokenizer):
    result, _ = module_run
    for generation in (result.continuation, result.answer):
        n = len(generation.new_ids)
        assert generation.new_ids == greedy(smollm2_model, generation.prompt_ids, n, eos=2)
    chat = smollm2_tokenizer.apply_chat_template(
        [{"role": "user", "content": module4.QUESTION}], add_generation_prompt=True,
        tokenize=False)
    assert result.answer.prompt_ids == smollm2_tokenizer(chat)["input_ids"]


def test_the_chats_cache_holds_what_transformers_cache_holds_after_generating(module_run,
                                                                               smollm2_model):
    """transformers' own generate, its cache read after the last token: [1, 3, 58, 64] for the
    chat (35 + 24 - 1: the last token written is never run). The log says the same count."""
    result, lines = module_run
    answer = result.answer
    with torch.no_grad():
        out = smollm2_model.generate(torch.tensor([answer.prompt_ids]),
                                     max_new_tokens=len(answer.new_ids), do_sample=False,
                                     return_dict_in_generate=True, use_cache=True)
    assert out.sequences[0, len(answer.prompt_ids):].tolist() == answer.new_ids
    their = out.cache.layers[0].keys.shape  # [batch, KV heads, cached tokens, d_head]
    assert tuple(their) == (1, 3, len(answer.prompt_ids) + len(answer.new_ids) - 1, 64)
    assert module4.cached_tokens(answer) == their[2]
    per = 2 * 30 * 3 * 64 * 4  # bytes a token, by hand
    line = next(x for x in lines if "KV cache at the end" in x)
    assert line.startswith(f"  the chat's KV cache at the end: {their[2]} tokens (") \
        and f"= {their[2] * per:,} bytes" in line


def test_quiz4_takes_its_numbers_as_the_log_prints_them(module_run):
    """Question 2's answer typed as the log and the explanation write it ("46,080") is right;
    question 3 says the first token's row is [1, 0, 0] in every causal head, not a random one."""
    from attention_workshop.quiz import module4 as quiz4
    from attention_workshop.quiz.question import grade, read_answer

    result, lines = module_run
    questions = quiz4.questions({module4.Result: result})
    per_token = 2 * 30 * 3 * 64 * 4  # by hand
    assert f"= {per_token:,} bytes" in questions[1].explanation
    assert f"= {per_token:,} bytes" in lines[5]  # [S10]'s cache line spells it the same way
    assert grade(questions[1], read_answer(questions[1], f"{per_token:,}")) == "right"
    assert "random" not in questions[2].explanation
    assert "its row is [1.0, 0.0, 0.0] in every causal head, here in all 270" \
        in questions[2].explanation


def test_notebook4_counts_the_shared_winners_from_transformers_weights(module_run,
                                                                        smollm2_model):
    """Notebook 04 prints which of bank's top-3 heads win in both sentences (2 of 3, not 'the
    same heads'), computed in the notebook; here from transformers' own attentions."""
    import json
    from pathlib import Path

    result, _ = module_run
    winners = []
    for run, topic in ((result.river, 1), (result.money, 1)):
        attentions, _, _ = reference_run(smollm2_model, run.ids)
        grid = attentions[:, :, 2, topic]  # [30, 9] bank -> its topic word
        order = np.argsort(-grid, axis=None, kind="stable")[:3]
        winners.append([tuple(int(i) for i in np.unravel_index(o, grid.shape)) for o in order])
    shared = [f"L{lay} H{h}" for lay, h in winners[0] if (lay, h) in winners[1]]
    notebook = json.loads((Path(__file__).parents[1] / "notebooks" /
                           "04_language_model.ipynb").read_text(encoding="utf-8"))
    printed = "".join("".join(out.get("text", "")) for cell in notebook["cells"]
                      if cell["cell_type"] == "code" for out in cell["outputs"])
    assert f"in both top 3: {', '.join(shared)} ({len(shared)} of 3);" in printed
    markdown = "".join("".join(c["source"]) for c in notebook["cells"]
                       if c["cell_type"] == "markdown")
    assert len(shared) < 3 and "The same heads win" not in markdown
