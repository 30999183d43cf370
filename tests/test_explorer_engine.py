"""explorer.html's engine in real headless Chromium, against the Python engine.

The engine is `explore --format json` (full precision); the page's JavaScript must agree within
1e-12 on the lesson sentences, random sentences and random wirings, with and without the
division by sqrt(d_k) and the causal mask; and what the page prints is what Python prints.
"""

import numpy as np
from browser import open_page, shown
from explore_cli import explore_json

from attention_workshop.embeddings import EMBED, SENT_MONEY, SENT_RIVER

TOLERANCE = 1e-12


def random_cases():
    rng = np.random.default_rng(2024)
    words = list(EMBED)
    sentence = lambda: " ".join(rng.choice(words, size=int(rng.integers(1, 13))))  # noqa: E731
    cases = [{"sentence": s} for s in [SENT_RIVER, SENT_MONEY, *(sentence() for _ in range(24))]]
    for k in range(24):
        cases.append({"sentence": sentence(), "w_q": rng.uniform(-3, 3, (4, 2)).tolist(),
                      "w_k": rng.uniform(-3, 3, (4, 2)).tolist(),
                      "w_v": None if k % 2 else rng.uniform(-2, 2, (4, 4)).tolist()})
    return [{**c, "scale": scale, "causal": causal}
            for c in cases for scale in (True, False) for causal in (False, True)]


def test_the_page_engine_equals_explore_json(browser, page_file):
    """26 sentences x the lesson's wiring and 24 random wirings (12 with a random W_V), each
    with and without the division and the mask: 200 cases, every matrix within 1e-12."""
    cases = random_cases()
    assert len(cases) == 200
    opened = open_page(browser, page_file)
    pages = opened.page.evaluate("cases => cases.map(c => window.explorer.explore(c))", cases)
    worst = 0.0
    for case, js in zip(cases, pages, strict=True):
        py = explore_json(case["sentence"], case.get("w_q"), case.get("w_k"), case.get("w_v"),
                    case["scale"], case["causal"])
        py["wired"].setdefault("values", [EMBED[w] for w in py["tokens"]])  # W_V = identity
        for head, keys in (("raw", ("scores", "weights", "outputs")),
                           ("wired", ("queries", "keys", "values", "scores", "weights",
                                      "outputs"))):
            for key in keys:
                a, b = np.array(js[head][key]), np.array(py[head][key])
                assert a.shape == b.shape, (case, head, key)
                worst = max(worst, float(np.abs(a - b).max()))
                assert np.abs(a - b).max() <= TOLERANCE, (case, head, key)
    assert worst <= TOLERANCE and not opened.errors


def test_number_format_is_pythons(browser, page_file):
    values = [0.0625, -0.0625, 0.1875, 2.5e-4, -2.5e-4, 0.0005, 1234.56789, 0.9995, -0.0,
              1e-300, 0.123456, 5.0, -7.0625, 1 / 3]
    opened = open_page(browser, page_file)
    printed = opened.page.evaluate("vs => vs.map(v => window.explorer.engine.fixed(v, 3))", values)
    assert printed == [shown(v) for v in values]
