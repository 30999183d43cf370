"""Our backpropagation equals torch autograd (float64, 1e-10 relative), Adam equals torch's
Adam (1e-12), and central finite differences agree as a second witness."""

import numpy as np
import pytest
from training_reference import torch_attention, torch_forward

from attention_workshop.attention import causal_mask, scaled_dot_product_attention
from attention_workshop.training import transformer
from attention_workshop.training.attention_grad import attention, attention_backward
from attention_workshop.training.cross_entropy import cross_entropy
from attention_workshop.training.optimizers import adam, adam_start, gradient_descent

torch = pytest.importorskip("torch")

RTOL = 1e-10


def assert_close(ours, theirs, rtol=RTOL):  # relative to the reference's largest entry
    theirs = np.asarray(theirs)
    assert ours.shape == theirs.shape
    scale = np.abs(theirs).max()
    assert scale > 0, "a zero reference proves nothing"
    assert np.abs(ours - theirs).max() <= rtol * scale


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("scaled", [True, False])
def test_attention_backward_equals_autograd(seed, causal, scaled):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((2, 3, 7, 5)) for _ in range(3))  # [B, H, T, d]
    d_out = rng.standard_normal((2, 3, 7, 5))
    mask = causal_mask(7) if causal else None
    out, weights = attention(q, k, v, mask, scaled)
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    t_out = torch_attention(tq, tk, tv, mask, scaled)
    (t_out * torch.from_numpy(d_out)).sum().backward()
    assert_close(out, t_out.detach().numpy(), 1e-13)
    for ours, theirs in zip(attention_backward(d_out, q, k, v, weights, scaled),
                            (tq.grad, tk.grad, tv.grad), strict=True):
        assert_close(ours, theirs.numpy())


def test_forward_is_the_core_formula():
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((6, 4)) for _ in range(3))
    ours = attention(q, k, v, causal_mask(6))
    core = scaled_dot_product_attention(q, k, v, causal_mask(6))
    for a, b in zip(ours, core, strict=True):
        np.testing.assert_array_equal(a, b)


def test_cross_entropy_equals_torch():
    rng = np.random.default_rng(1)
    logits, targets = rng.standard_normal((3, 5, 11)) * 3, rng.integers(0, 11, (3, 5))
    loss, d_logits = cross_entropy(logits, targets)
    t = torch.tensor(logits, requires_grad=True)
    t_loss = torch.nn.functional.cross_entropy(t.reshape(-1, 11), torch.tensor(targets).ravel())
    t_loss.backward()
    assert abs(loss - t_loss.item()) <= 1e-14 * t_loss.item()
    assert_close(d_logits, t.grad.numpy())


def model_case(seed, cfg):
    rng = np.random.default_rng(seed)
    params = transformer.init_params(cfg, rng)
    ids = rng.integers(0, cfg.n_vocab, (4, cfg.n_ctx + 1))
    return params, ids


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("ablate", [(), ((1, 0),)])
def test_transformer_gradients_equal_autograd(seed, ablate):
    cfg = transformer.Config(n_vocab=11, n_ctx=9, d_model=8, n_layer=2, n_head=2)
    params, ids = model_case(seed, cfg)
    logits, cache = transformer.forward(params, cfg, ids[:, :-1], ablate)
    loss, d_logits = cross_entropy(logits, ids[:, 1:])
    grads = transformer.backward(d_logits, params, cfg, cache)

    tp = {n: torch.tensor(a, requires_grad=True) for n, a in params.items()}
    t_logits = torch_forward(tp, cfg, torch.tensor(ids[:, :-1]), ablate)
    t_loss = torch.nn.functional.cross_entropy(t_logits.reshape(-1, cfg.n_vocab),
                                               torch.tensor(ids[:, 1:]).ravel())
    t_loss.backward()
    assert abs(loss - t_loss.item()) <= 1e-13 * t_loss.item()
    assert set(grads) == set(params)
    for name in params:
        if ablate and name == "1.W_V":  # head 0's value columns get no gradient when it is off
            assert not grads[name][:, :cfg.d_head].any()
            assert not tp[name].grad.numpy()[:, :cfg.d_head].any()
        assert_close(grads[name], tp[name].grad.numpy())


def test_transformer_gradients_by_finite_differences():
    """The second witness: (loss(p + h) - loss(p - h)) / 2h on a few entries of each matrix."""
    cfg = transformer.Config(n_vocab=7, n_ctx=6, d_model=4, n_layer=2, n_head=2)
    params, ids = model_case(3, cfg)

    def loss_at(p):
        return cross_entropy(transformer.forward(p, cfg, ids[:, :-1])[0], ids[:, 1:])[0]

    logits, cache = transformer.forward(params, cfg, ids[:, :-1])
    grads = transformer.backward(cross_entropy(logits, ids[:, 1:])[1], params, cfg, cache)
    rng, h = np.random.default_rng(0), 1e-5
    for name, p in params.items():
        for _ in range(3):
            at = tuple(int(rng.integers(0, n)) for n in p.shape)
            if name == "W_pos" and at[0] >= ids.shape[1] - 1:
                at = (0, at[1])  # a position no input reaches has gradient 0 on both sides
            up, down = dict(params), dict(params)
            up[name], down[name] = p.copy(), p.copy()
            up[name][at] += h
            down[name][at] -= h
            numeric = (loss_at(up) - loss_at(down)) / (2 * h)
            assert abs(grads[name][at] - numeric) <= 1e-7 + 1e-6 * abs(numeric), (name, at)


def test_adam_equals_torch_adam():
    rng = np.random.default_rng(2)
    params = {"a": rng.standard_normal((3, 4)), "b": rng.standard_normal(5)}
    tp = {n: torch.tensor(p, requires_grad=True) for n, p in params.items()}
    opt = torch.optim.Adam(tp.values(), lr=3e-3, betas=(0.9, 0.999), eps=1e-8)
    state = adam_start(params)
    for _ in range(3):  # three steps: the bias corrections change each time
        grads = {n: rng.standard_normal(p.shape) * 10.0 ** rng.integers(-4, 2)
                 for n, p in params.items()}
        params, state = adam(params, grads, state, lr=3e-3)
        for n, t in tp.items():
            t.grad = torch.tensor(grads[n])
        opt.step()
        for n in params:
            np.testing.assert_allclose(params[n], tp[n].detach().numpy(), rtol=1e-12, atol=0)
    assert state.step == 3


def test_gradient_descent_equals_torch_sgd():
    params = {"w": np.array([[1.0, -2.0], [0.5, 3.0]])}
    grads = {"w": np.array([[0.5, 0.25], [-1.0, 0.0]])}
    t = torch.tensor(params["w"], requires_grad=True)
    t.grad = torch.tensor(grads["w"])
    torch.optim.SGD([t], lr=0.1).step()
    np.testing.assert_allclose(gradient_descent(params, grads, 0.1)["w"], t.detach().numpy(),
                               rtol=1e-15, atol=0)
    assert gradient_descent(params, grads, 0.1)["w"][0, 0] == pytest.approx(0.95)  # by hand
