"""Module 6's log lines hold: the same when every starting weight moves by 1e-12 (relative),
and the same under 1 and 2 BLAS threads; its section headers follow Module 5's."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from attention_workshop.modules import module6
from attention_workshop.report import Log
from attention_workshop.training import transformer, wiring


def nudged(monkeypatch):  # every start the module draws, each weight times (1 +- 1e-12)
    rng = np.random.default_rng(12)
    nudge = lambda w: w * (1 + 1e-12 * rng.choice([-1.0, 1.0], w.shape))  # noqa: E731
    start, init = wiring.start, transformer.init_params
    monkeypatch.setattr(wiring, "start", lambda *a, **k: tuple(map(nudge, start(*a, **k))))
    monkeypatch.setattr(transformer, "init_params",
                        lambda *a, **k: {n: nudge(w) for n, w in init(*a, **k).items()})


def run(threads):
    log = Log()
    with threadpool_limits(threads, user_api="blas"):
        result = module6.run(log, {})
    return log.lines, result


@pytest.fixture(scope="module")
def plain():
    return run(1)


def test_log_lines_survive_a_1e12_nudge_and_two_threads(plain, monkeypatch):
    lines, result = plain
    nudged(monkeypatch)
    other_lines, other = run(2)
    assert other_lines == lines
    # the nudge did reach the training: the unrounded numbers differ
    assert not np.array_equal(other.W_Q, result.W_Q)
    assert other.snapshots[-1].second_copy != result.snapshots[-1].second_copy


def test_sections_and_what_the_log_promises(plain):
    lines, result = plain
    headers = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert headers == ["[S20]", "[S21]", "[S22]", "[S23]", "[S24]"]
    assert all(line.startswith("  ") for line in lines if line[:1] != "[")
    steps = [s.step for s in result.snapshots]
    assert steps == list(range(0, steps[-1] + 1, steps[1]))
    before, after = result.phase
    assert after - before == steps[1]
    # the previous-token head matters: switching it off undoes most of the copying
    none = result.ablation["none"][1]
    assert max(b for _, b in result.ablation.values()) > none + 1.0
    assert result.snapshots[-1].second_copy < result.snapshots[0].second_copy - 1.0
