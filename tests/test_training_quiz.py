"""Quiz 6's answers, worked apart from the module's Result with plain Python and the core."""

import math

import pytest
from shared_run import alone

from attention_workshop.embeddings import SENT_RIVER, embed
from attention_workshop.modules import module6
from attention_workshop.quiz.module6 import questions


@pytest.fixture(scope="module")
def quiz():
    result, _ = alone(module6)  # module6.run(Log(), {}), once a session (shared_run.py)
    return result, questions({module6.Result: result})


def test_bank_to_river_under_the_learned_wiring_by_hand(quiz):
    result, qs = quiz
    X = embed(SENT_RIVER).tolist()  # the, river, bank
    q = [sum(X[2][a] * result.W_Q[a, c] for a in range(4)) for c in range(2)]  # bank's query
    scores = [sum(q[c] * sum(X[j][a] * result.W_K[a, c] for a in range(4)) for c in range(2))
              / math.sqrt(2) for j in range(3)]
    e = [math.exp(s - max(scores)) for s in scores]
    assert qs[0].answer == pytest.approx(e[1] / sum(e), rel=1e-12)
    assert qs[0].answer > 0.9


def test_the_axis_learned_w_q_reads_is_places(quiz):
    result, qs = quiz
    rows = [sum(abs(sum(result.W_Q[i, c] * result.W_K[j, c] for c in range(2)))
                for j in range(4)) for i in range(4)]
    assert qs[1].answer == "abcd"[rows.index(max(rows))] == "c"  # place, bank's largest axis


def test_phase_and_ablation_answers_are_the_logged_numbers(quiz):
    result, qs = quiz
    at = {s.step: s for s in result.snapshots}
    falls = {b: at[a].second_copy - at[b].second_copy
             for a, b in zip(sorted(at)[:-1], sorted(at)[1:], strict=True)}
    assert qs[3].answer == max(falls, key=falls.get)
    assert qs[4].answer == result.ablation["L0 H0"][1]  # L0 H0 is the previous-token head
    assert qs[4].answer > result.ablation["none"][1] + 1.0
    stuck = result.aside[False]
    assert qs[2].answer == stuck.losses[0, -1] == pytest.approx(math.log(2), abs=1e-3)
    assert qs[5].answer == "b"  # its tokens are random
