"""Module 5's toy ablation, worked by hand: Module 2's wired head with one query channel
switched off ([S16]).

Topic off: bank's row (0.3, 0.3, 0.9, 0) meets W_Q's place column only, whose one non-zero
entry is filler's 1.5, and bank has no filler: its query is (0, 0), every score is 0, each
weight is 1/3, and bank's output is the plain mean of the three rows, Module 1's equal
average: ((0 + 0.9 + 0.3) / 3, (0 + 0 + 0.3) / 3, (0 + 0.3 + 0.9) / 3, (1 + 0 + 0) / 3).
Place off: bank's query keeps its topic part 2.0 x 0.9 = 1.8; the keys' topic parts are
0 (the), 0.9 (river), 0.6 (bank), so its scores are 0, 1.62, 1.08, as with both channels on.
"""

import math

import numpy as np
import pytest

from attention_workshop.attention import W_Q_WIRED
from attention_workshop.modules import module0, module1, module2, module5, run_module
from attention_workshop.report import Log

THIRD = 1 / 3
RIVER_MEAN = [1.2 / 3, 0.3 / 3, 1.2 / 3, THIRD]  # the, river, bank rows averaged
MONEY_MEAN = [0.3 / 3, 1.2 / 3, 1.0 / 3, THIRD]  # the, money, bank


def hand_softmax(scores):
    e = [math.exp(s) for s in scores]
    return [x / sum(e) for x in e]


@pytest.fixture(scope="module")
def logged():  # -> (Toy, the [S16] lines)
    log, results = Log(), {}
    for module in (module0, module1, module2):
        run_module(module, log, results)
    start = len(log.lines)
    toy = module5.log_toy(log, results[module1.Result], results[module2.Result])
    return toy, log.lines[start:]


def test_channel_off_zeroes_one_column_only():
    off = module5.channel_off(W_Q_WIRED, "topic")
    assert off.tolist() == [[0, 0], [0, 0], [0, 0], [0, 1.5]]
    assert W_Q_WIRED[2, 0] == 2.0  # the wiring itself is untouched


def test_topic_off_gives_module1s_equal_average(logged):
    toy, _ = logged
    np.testing.assert_allclose(toy.weights["topic"][2], [THIRD] * 3, rtol=0, atol=1e-15)
    np.testing.assert_allclose(toy.outputs["topic"][2], RIVER_MEAN, rtol=0, atol=1e-15)
    np.testing.assert_allclose(toy.money_topic_off, MONEY_MEAN, rtol=0, atol=1e-15)


def test_place_off_leaves_bank_alone_and_flattens_the(logged):
    toy, _ = logged
    scaled = [s / math.sqrt(2) for s in (0.0, 1.8 * 0.9, 1.8 * 0.6)]
    np.testing.assert_allclose(toy.weights["place"][2], hand_softmax(scaled), rtol=0,
                               atol=1e-15)
    np.testing.assert_allclose(toy.weights["place"][0], [THIRD] * 3, rtol=0, atol=1e-15)


def test_the_log_shows_the_numbers_side_by_side(logged):
    _, lines = logged
    text = "\n".join(lines)
    assert lines[0].startswith("[S16] Module 5: ")
    assert "bank's query becomes [0.00, 0.00]" in text
    assert "wired [0.159, 0.500, 0.341] -> topic off [0.333, 0.333, 0.333]" in text
    off = next(line for line in lines if line.strip().startswith("topic channel off"))
    average = next(line for line in lines if "equal average  " in line)
    assert off.endswith("water=0.400  money=0.100  place=0.400  filler=0.333")
    assert average.split("water=")[1] == off.split("water=")[1]
    assert "(to 15 decimals): True" in text
    assert 'in "the money bank": water=0.100  money=0.400  place=0.333  filler=0.333' in text


def test_the_quizs_toy_questions_answer_by_hand(logged):
    from attention_workshop.quiz import module5 as quiz5

    toy, _ = logged
    log, results = Log(), {}
    for module in (module0, module1, module2):
        run_module(module, log, results)
    results[module5.Result] = module5.Result(toy=toy, minilm=None, smollm2=None)
    first, second = quiz5.questions(results)  # no real model ran: the toy's two only
    assert first.answer == pytest.approx(THIRD, abs=1e-15)
    assert second.answer == "a"  # place off: bank's weights as wired
