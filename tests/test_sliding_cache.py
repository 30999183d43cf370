"""The sliding KV cache (real/analysis/sliding_cache.py) proved against decoding that evicts.

The banded mask (query t sees keys t - W < j <= t and the first `sinks`) is claimed equal to
decoding token by token with a cache that drops its oldest key. Checked three ways on
SmolLM2: (1) our own decode, one token a pass, the evicted keys and values cut out of the
cache arrays; (2) transformers decoding with its DynamicCache cut the same way by hand;
(3) transformers' one forward given the same 4D mask. The full cache's loss is transformers'
LlamaForCausalLM loss. transformers runs in float64 here but keeps its RMSNorm and softmax
in float32, so it agrees to ~2e-5 on logits; our own decode agrees to float64's digits.
"""

import copy

import numpy as np
import pytest
from smollm2_reference import smollm2_path

from attention_workshop.errors import WorkshopError
from attention_workshop.real.analysis import sliding_cache as sc

TEXT = ("The river rose all night, and by morning the path along the bank was under water, so "
        "we walked the long way round.")  # 26 SmolLM2 tokens
W = 6


def test_band_by_hand():
    """Rows are queries 0..3, columns keys; window 2 keeps the query and the one before it,
    the sink keeps key 0 in every row."""
    expected = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(sc.band(4, 2), expected)
    expected[:, 0] = True
    np.testing.assert_array_equal(sc.band(4, 2, sinks=1), expected)
    # queries at positions 2, 3 of a text whose first two tokens are cached
    np.testing.assert_array_equal(sc.band(2, 1, start=2), [[0, 0, 1, 0], [0, 0, 0, 1]])


@pytest.fixture(scope="module")
def smollm2_64():
    from attention_workshop.real import load_model

    smollm2_path()
    return load_model("smollm2", dtype=np.float64)


@pytest.fixture(scope="module")
def reference_64():
    """transformers' SmolLM2 in float64, its rotary angles too (it computes them in float32
    whatever the weights: recomputed here from the formula, positions / theta^(2i/d))."""
    import torch
    from smollm2_reference import reference_model

    ref = copy.deepcopy(reference_model()).double()
    theta, d = ref.config.rope_theta if hasattr(ref.config, "rope_theta") else \
        ref.config.rope_parameters["rope_theta"], ref.config.head_dim

    def angles(x, position_ids):  # [1, T] -> cos, sin [1, T, d]
        inv = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
        freqs = position_ids[..., None].double() * inv
        both = torch.cat([freqs, freqs], dim=-1)
        return both.cos().to(x.dtype), both.sin().to(x.dtype)

    ref.model.rotary_emb.forward = angles
    return ref


def banded_logits(model, ids, window, sinks):  # -> [T, n_vocab] logits of every position
    first = sc.forward(model, ids[:window])
    rest = sc.forward(model, ids[window:], {"keys": first["keys"], "values": first["values"]},
                      sc.banded(model.config.n_layer, sc.band(len(ids) - window, window, sinks,
                                                             window)))
    return model.head(False)(np.concatenate([first["hidden"], rest["hidden"]]))


def our_evicting_decode(model, ids, window, sinks):  # -> [T, n_vocab], one token a pass
    """model.run on one token with the cache as past; after each step the keys and values of
    the token leaving the window are cut out of the arrays. model.run numbers a new token by
    the cache's length, so the hooks turn its query and key on to its place in the text (a
    rotation by the difference: rotary angles add)."""
    from types import SimpleNamespace

    from attention_workshop.real.hooks import Hooks
    from attention_workshop.real.layers import rotary_angles, rotate

    cfg, kept, cache, out = model.config, [], None, []
    for t, token in enumerate(ids):
        cos, sin = rotary_angles([t - len(kept)], cfg.d_head, cfg.rope_theta)

        def moved_k(k, cos=cos, sin=sin):  # [K, S, d]: only the new key (the last) moves
            return np.concatenate([k[:, :-1], rotate(k[:, -1:], cos, sin)], axis=1)
        hooks = Hooks({f"blocks.{i}.attn.hook_{n}": fn for i in range(cfg.n_layer)
                       for n, fn in (("q", lambda q, c=cos, s=sin: rotate(q, c, s)),
                                     ("k", moved_k))})
        result = model.run([token], past=cache, hooks=hooks)
        out.append(result.logits[-1])
        kept.append(t)
        keep = [i for i, p in enumerate(kept) if p < sinks or p > t + 1 - window]
        kept = [kept[i] for i in keep]
        cache = SimpleNamespace(keys=result.keys[:, :, keep], values=result.values[:, :, keep])
    return np.array(out)


def transformers_evicting_decode(ref, ids, window, sinks):  # -> [T, n_vocab]
    """transformers, one token a call at its true position, its DynamicCache's tensors cut by
    hand to the sinks and the newest window - 1 keys before each next token."""
    import torch
    from transformers import DynamicCache

    cache, kept, out = DynamicCache(config=ref.config), [], []
    with torch.no_grad():
        for t, token in enumerate(ids):
            r = ref(input_ids=torch.tensor([[token]]), position_ids=torch.tensor([[t]]),
                    cache=cache, attention_mask=torch.ones(1, len(kept) + 1,
                                                                     dtype=torch.long),
                    cache_position=torch.tensor([len(kept)]), use_cache=True)
            cache = r.cache
            out.append(r.logits[0, -1].numpy())
            kept.append(t)
            keep = [i for i, p in enumerate(kept) if p < sinks or p > t + 1 - window]
            for layer in cache.layers:
                layer.keys, layer.values = layer.keys[:, :, keep], layer.values[:, :, keep]
            kept = [kept[i] for i in keep]
    return np.array(out)


@pytest.mark.parametrize("sinks", [0, 2])
def test_banded_equals_our_evicting_decode(smollm2_64, sinks):
    ids = smollm2_64.encode(TEXT)
    decoded = our_evicting_decode(smollm2_64, ids, W, sinks)
    np.testing.assert_allclose(banded_logits(smollm2_64, ids, W, sinks), decoded, rtol=0,
                               atol=1e-5)
    full = smollm2_64.run(ids).logits  # the eviction changes the forecasts after position W
    assert np.abs(decoded[W:] - full[W:]).max() > 1.0
    np.testing.assert_allclose(decoded[:W], full[:W], rtol=0, atol=1e-9)


def test_banded_equals_transformers_evicting_cache(smollm2_64, reference_64):
    ids = smollm2_64.encode(TEXT)
    theirs = transformers_evicting_decode(reference_64, ids, W, 2)
    np.testing.assert_allclose(banded_logits(smollm2_64, ids, W, 2), theirs, rtol=0, atol=1e-4)


def transformers_nats(ref, ids, window, mask=None):  # -> mean loss on tokens window + 1 ..
    import torch

    labels = torch.tensor([ids])
    labels[0, :window + 1] = -100  # transformers shifts: label t is scored from position t - 1
    given = {} if mask is None else {"attention_mask": torch.where(
        torch.tensor(mask), 0.0, float("-inf")).double()[None, None]}  # [1, 1, T, T]
    with torch.no_grad():
        return float(ref(input_ids=torch.tensor([ids]), labels=labels, **given).loss)


def test_full_and_sinks_equal_transformers(smollm2_64, reference_64):
    ids = smollm2_64.encode(TEXT)
    ours = sc.losses(smollm2_64, ids, W, {"full": None, "window": 0, "sinks": 4})
    assert ours.scored == len(ids) - W - 1
    full = transformers_nats(reference_64, ids, W)
    assert abs(np.mean(ours.nats["full"]) - full) < 1e-4
    assert abs(ours.perplexity("full") - np.exp(full)) < 1e-4 * np.exp(full)
    for name, sinks in (("window", 0), ("sinks", 4)):
        masked = transformers_nats(reference_64, ids, W, sc.band(len(ids), W, sinks))
        assert abs(np.mean(ours.nats[name]) - masked) < 1e-4
    assert ours.perplexity("window") > ours.perplexity("full")  # the text's start is lost


def test_float32_keeps_two_decimals_on_any_thread_count(smollm2_64):
    """Module 5 runs the variants in float32: its perplexities agree with float64's to two
    decimals, and are the same bytes with the BLAS at 1 or 2 threads."""
    from threadpoolctl import threadpool_limits

    small = sc.in_float32(smollm2_64)
    assert small.dtype == "float32"
    ids = smollm2_64.encode(TEXT * 3)
    variants = {"full": None, "window": 0, "sinks": 4}
    exact = sc.losses(smollm2_64, ids, 16, variants)
    runs = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            runs.append(sc.losses(small, ids, 16, variants))
    for name in variants:
        assert runs[0].nats[name].tobytes() == runs[1].nats[name].tobytes()
        assert abs(runs[0].perplexity(name) - exact.perplexity(name)) < 0.005


def test_cache_bytes(smollm2_64):
    """SmolLM2 float64: 2 (keys, values) x 30 layers x 3 KV heads x 64 x 8 bytes = 92,160 a
    token; the full cache holds all 26 tokens, the window 6 (and the sinks)."""
    ids = smollm2_64.encode(TEXT)
    held = sc.losses(smollm2_64, ids, W, {"full": None, "window": 0, "sinks": 4}).cache_bytes
    assert held == {"full": 26 * 92160, "window": 6 * 92160, "sinks": 10 * 92160}


@pytest.mark.parametrize("window, variants, words", [
    (0, {"window": 0}, "the window must be from 1 to 24"),
    (25, {"window": 0}, "the window must be from 1 to 24"),
    (6, {"sinks": 6}, "sinks must be from 0 to 5"),
    (6, {"sinks": -1}, "sinks must be from 0 to 5"),
])
def test_bad_window_or_sinks(smollm2_64, window, variants, words):
    with pytest.raises(WorkshopError, match=words):
        sc.losses(smollm2_64, smollm2_64.encode(TEXT), window, variants)


def test_past_the_long_limit_is_refused(smollm2_64):
    from attention_workshop.real.config import LONG_TOKENS

    with pytest.raises(WorkshopError, match=f"runs at most {LONG_TOKENS} here; shorten it"):
        sc.losses(smollm2_64, [1] * (LONG_TOKENS + 1), 8, {"window": 0})


def test_long_text_is_package_data_past_real_s_limit(smollm2_tokenizer):
    """The text ships with the package (pyproject's package-data pattern matches it) and is
    longer than real's 512 tokens, within the sliding cache's limit (transformers' count)."""
    import fnmatch
    import tomllib
    from pathlib import Path

    from attention_workshop.real.config import LONG_TOKENS, MAX_TOKENS

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["package-data"]["attention_workshop"]
    assert any(fnmatch.fnmatch(sc.TEXT_FILE, pattern) for pattern in patterns)
    n = len(smollm2_tokenizer(sc.long_text())["input_ids"])
    assert MAX_TOKENS < n <= LONG_TOKENS


def test_module5_lines_are_transformers_perplexities(smollm2_64, smollm2_model,
                                                     smollm2_tokenizer):
    """[S19]'s table: each cache's perplexity as transformers computes it on the same tokens
    (its tokenizer's ids, its LlamaForCausalLM loss under a band mask built here), three
    digits; the bytes are 46,080 a token (float32) times the tokens each cache holds."""
    import torch

    from attention_workshop.modules import module5
    from attention_workshop.quiz.module5 import sliding_question
    from attention_workshop.report import Log

    log = Log()
    sliding = module5.log_sliding(log, smollm2_64)
    rows = {line[4:44].split(" (")[0]: line for line in log.lines if line.startswith("    ")}
    W, T = module5.WINDOW, module5.WINDOW + module5.SCORED + 1
    ids = smollm2_tokenizer(module5_text())["input_ids"][:T]
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    perplexity = {}
    for name, sinks in module5.CACHES.items():
        sees = (j <= i) if sinks is None else (j <= i) & ((i - j < W) | (j < sinks))
        labels = torch.tensor([ids])
        labels[0, :W + 1] = -100
        mask = torch.where(torch.tensor(sees), 0.0, float("-inf"))[None, None]
        with torch.no_grad():
            loss = float(smollm2_model(input_ids=torch.tensor([ids]), labels=labels,
                                       attention_mask=mask).loss)
        held = 46080 * (T if sinks is None else W + sinks)
        perplexity[sinks] = np.exp(loss)
        assert rows[name].split()[-1] == module5.digits(np.exp(loss)), name
        assert f"({held / 1e6:.2f} MB)" in rows[name]
    # quiz 5: the first token alone closes more than half the gap, by transformers' numbers
    closes = perplexity[0] - perplexity[1] > (perplexity[0] - perplexity[None]) / 2
    assert sliding_question(sliding).answer == ("a" if closes else "b")


def module5_text():
    from importlib.resources import files

    return files("attention_workshop").joinpath("data/long_text.txt").read_text(encoding="utf-8")


def test_figure_lines_end_at_the_log_s_perplexities(tmp_path):
    """sliding_cache.png: each line is the perplexity of the tokens so far (nats [0, log 4]
    -> 1, then exp(log 4 / 2) = 2), so it ends at the variant's whole perplexity."""
    from types import SimpleNamespace

    from attention_workshop.figures import registry
    from attention_workshop.figures.sinks import running_perplexity, sliding_cache
    from attention_workshop.modules import module5

    np.testing.assert_allclose(running_perplexity([0.0, np.log(4.0)]), [1.0, 2.0])
    rng = np.random.default_rng(0)
    nats = {name: rng.uniform(0, 6, 10) for name in module5.CACHES}
    s = sc.Sliding(window=4, scored=10, nats=nats, cache_bytes={})
    fig = sliding_cache(SimpleNamespace(smollm2=SimpleNamespace(sliding=s)), None, None)
    ax = fig.axes[0]
    for line, name in zip(ax.get_lines(), module5.CACHES, strict=True):
        np.testing.assert_allclose(line.get_xdata(), np.arange(5, 15))  # tokens predicted
        assert line.get_ydata()[-1] == pytest.approx(s.perplexity(name))
        assert line.get_label().startswith(name)
    assert "sliding KV cache of 4 tokens" in ax.get_title()
    drawing = registry()["sliding_cache.png"]
    assert drawing.about.startswith("Module 5 (log [S19] lines 13-16)")
    assert drawing(({module5.Result: SimpleNamespace(smollm2=SimpleNamespace(sliding=s)),
                     **{kind: None for kind in drawing.reads[1:]}}),
                   tmp_path / "s.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("model_type", ["bert", "gpt2"])
def test_an_encoder_or_learned_positions_is_refused(model_type):
    """The sliding cache is measured on a decoder with rotary positions (keys keep their
    angles): MiniLM reads every token at once, GPT-2 adds position rows."""
    from types import SimpleNamespace

    from real_folder import CONFIGS

    from attention_workshop.real.config import config_from_dict

    model = SimpleNamespace(name=f"tiny {model_type}", config=config_from_dict(CONFIGS[model_type]))
    with pytest.raises(WorkshopError, match="is not a decoder with rotary positions"):
        sc.losses(model, [3, 4, 5, 6], 2, {"window": 0})


def test_the_model_s_own_positions_bound_the_text():
    from types import SimpleNamespace

    from real_folder import CONFIGS

    from attention_workshop.real.config import config_from_dict

    model = SimpleNamespace(name="tiny llama", config=config_from_dict(CONFIGS["llama"]))
    with pytest.raises(WorkshopError, match="the text is 7 tokens long, but a sliding cache "
                                            "runs at most 6 here; shorten it"):
        sc.losses(model, [3] * 7, 2, {"window": 0})
