"""Module 5's real numbers ([S17]-[S19]) against transformers with the same interventions done
by pre-hooks on the output projections (tests/interventions_reference.py): MiniLM's drift
table from BertModel's hidden states, SmolLM2's losses from torch's cross entropy on
LlamaForCausalLM's logits, the induction scores after the previous-token head is gone from
their attentions, and the sink's value norms from their v_proj. Printed numbers are
compared at their printed precision (one unit of the last digit)."""

import re

import numpy as np
import pytest
from head_reference import minilm_bert
from interventions_reference import intervened, projection_inputs, reference
from smollm2_reference import smollm2_path

from attention_workshop.modules import (
    module0,
    module1,
    module2,
    module3,
    module4,
    module5,
    run_module,
)
from attention_workshop.real.analysis.head_patterns import sequence_for
from attention_workshop.report import Log

torch = pytest.importorskip("torch")


def module5_lines():  # -> (Module 5's Result, its lines: [S16]'s header first, SmolLM2)
    log, results = Log(), {}
    for module in (module0, module1, module2, module3, module4):
        run_module(module, log, results)
    start = len(log.lines)
    return (run_module(module5, log, results), log.lines[start:],
            results[module4.Result].model)


@pytest.fixture(scope="module")
def logged(shared_modules):  # module5_lines(), from the modules computed once (shared_run.py)
    smollm2_path()
    return (shared_modules.results[module5.Result], shared_modules.lines_of(module5),
            shared_modules.results[module4.Result].model)


def section(lines, number):  # -> the lines of [S<number>], its header first
    first = next(i for i, line in enumerate(lines) if line.startswith(f"[S{number}]"))
    rest = next((i for i, line in enumerate(lines[first + 1:], first + 1)
                 if line.startswith("[S")), len(lines))
    return lines[first:rest]


def floats(line):
    return [float(x) for x in re.findall(r"-?\d+\.\d+", line)]


def cosines(hidden_a, hidden_b, position):  # [L + 1, T, D] twice -> [L + 1] cosines
    a, b = hidden_a[:, position].astype(np.float64), hidden_b[:, position].astype(np.float64)
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


def test_minilm_drift_table_equals_bert_under_the_same_hooks(logged, minilm_reference):
    result, lines, _ = logged
    lines = section(lines, 17)
    theirs, heads = minilm_bert(), result.minilm.heads
    river, money = (minilm_reference(s)[1] for s in ("the river bank", "the money bank"))
    for label, how in (("3 heads off (zero)", "zero"), ("3 heads off (mean)", "mean")):
        with intervened(theirs, 32, heads, how):
            expected = cosines(reference(theirs, river)[1], reference(theirs, money)[1], 3)
        row = next(line for line in lines if line.strip().startswith(label))
        np.testing.assert_allclose(floats(row), expected, rtol=0, atol=6e-4, err_msg=label)
    with intervened(theirs, 32, patch=dict.fromkeys(heads, projection_inputs(theirs, money))):
        patched = reference(theirs, river)[1]
    row = next(line for line in lines if "to the money sentence's bank" in line)
    np.testing.assert_allclose(floats(row), cosines(patched, reference(theirs, money)[1], 3),
                               rtol=0, atol=6e-4)


def their_loss(model, ids, heads):  # -> nats on the repeat with the heads zeroed (no lead)
    with intervened(model, 64, heads):
        logits = torch.tensor(reference(model, ids)[2], dtype=torch.float64)
    rows = torch.arange(50, 99)
    return float(torch.nn.functional.cross_entropy(logits[rows], torch.tensor(ids)[rows + 1]))


def test_smollm2_losses_equal_transformers_under_the_same_hooks(logged, smollm2_model):
    result, lines, smollm2 = logged
    s, lines = result.smollm2, section(lines, 18)
    ids, lead = sequence_for(smollm2)
    assert lead == 0
    for k in (3, 5):
        row = next(line for line in lines if line.strip().startswith(f"top {k:>2} induction"))
        printed = floats(row)[0]
        assert abs(printed - their_loss(smollm2_model, ids, s.induction[:k])) <= 0.011, row
    drawn, printed = s.loss_random[0]
    assert abs(round(printed, 2) - their_loss(smollm2_model, ids, drawn)) <= 0.011
    assert s.loss_top[5] > 5 * s.loss_plain > max(loss for _, loss in s.loss_random)


def test_previous_token_head_off_drops_the_induction_scores_in_transformers(logged,
                                                                            smollm2_model):
    from head_reference import reference_scores

    result, _, smollm2 = logged
    s = result.smollm2
    ids, _ = sequence_for(smollm2)
    with intervened(smollm2_model, 64, [s.previous]):
        attentions = reference(smollm2_model, ids)[0]
    scores = reference_scores(attentions, ids, "induction", 0)
    for (lay, h), (_, after) in s.fed.items():
        assert after == pytest.approx(scores[lay, h], abs=1e-4)
    assert all(after < before / 2 for before, after in s.fed.values())


def test_sink_value_norms_equal_transformers_v_proj(logged, smollm2_model):
    result, _, smollm2 = logged
    ids, _ = sequence_for(smollm2)
    with torch.no_grad():
        out = smollm2_model(input_ids=torch.tensor([ids]), output_hidden_states=True)
    for (lay, h), (at0, rest) in result.smollm2.sink_norms.items():
        block = smollm2_model.model.layers[lay]
        x = block.input_layernorm(out.hidden_states[lay])[0]  # [T, 576]
        kv = h // 3
        v = block.self_attn.v_proj(x)[:, kv * 64:(kv + 1) * 64].detach().numpy()  # [T, 64]
        norms = np.linalg.norm(v, axis=-1)
        assert at0 == pytest.approx(norms[0], rel=1e-4)
        assert rest == pytest.approx(norms[1:].mean(), rel=1e-4)
        assert at0 < rest / 4


def test_the_log_is_the_same_on_a_second_run_and_with_two_blas_threads(logged):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=2, user_api="blas"):  # forward passes hold one anyway
        assert module5_lines()[1] == logged[1]
