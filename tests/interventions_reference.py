"""The reference side of the intervention tests: transformers' models with the same ablation or
patching done their own way, by a forward pre-hook on each layer's output projection (o_proj,
attention.output.dense, c_proj) that zeroes or replaces one head's slice of its input.

The projection's input is [batch, T, n_head * d_head], heads side by side (head h owns
columns h * d_head .. (h + 1) * d_head - 1): the same z that our hook_z holds as [n_head, T,
d_head]. Nothing here calls attention_workshop.
"""

import contextlib

import numpy as np


def output_projections(model):  # transformers model -> [the W_O module of each layer]
    if hasattr(model, "encoder"):  # BertModel
        return [layer.attention.output.dense for layer in model.encoder.layer]
    if hasattr(model, "transformer"):  # GPT2LMHeadModel
        return [block.attn.c_proj for block in model.transformer.h]
    return [layer.self_attn.o_proj for layer in model.model.layers]  # Llama, Qwen2


@contextlib.contextmanager
def pre_hooks(model, hooks):  # {layer: fn(x [1, T, D]) -> x}: registered, removed after
    handles = [output_projections(model)[layer].register_forward_pre_hook(
        lambda module, args, fn=fn: (fn(args[0].clone()), *args[1:]))
        for layer, fn in hooks.items()]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def intervened(model, d_head, ablate=(), how="zero", patch=None):
    # -> context manager: heads [(layer, head)] zeroed or mean-ablated; patch {(layer, head):
    #    {layer: the source run's projection input [1, T, D]}}
    hooks = {}

    def add(layer, fn):
        before = hooks.get(layer, lambda x: x)
        hooks[layer] = lambda x: fn(before(x))

    for layer, head in ablate:
        cols = slice(head * d_head, (head + 1) * d_head)

        def off(x, cols=cols):
            x[..., cols] = 0.0 if how == "zero" else x[..., cols].mean(dim=1, keepdim=True)
            return x
        add(layer, off)
    for (layer, head), inputs in (patch or {}).items():
        cols = slice(head * d_head, (head + 1) * d_head)

        def swap(x, cols=cols, given=inputs[layer]):
            x[..., cols] = given[..., cols]
            return x
        add(layer, swap)
    return pre_hooks(model, hooks)


def projection_inputs(model, ids):  # -> {layer: the projection's input [1, T, D]} on ids
    import torch

    seen = {}

    def keep(layer):
        def fn(x):
            seen[layer] = x.clone()
            return x
        return fn

    with pre_hooks(model, {i: keep(i) for i in range(len(output_projections(model)))}), \
            torch.no_grad():
        model(input_ids=torch.tensor([ids]))
    return seen


def reference(model, ids):  # -> (attentions [L, H, T, T], hidden [L + 1, T, D], logits or None)
    import torch

    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), output_attentions=True,
                    output_hidden_states=True)
    logits = getattr(out, "logits", None)
    return (torch.stack(out.attentions)[:, 0].numpy(), torch.stack(out.hidden_states)[:, 0].numpy(),
            None if logits is None else logits[0].numpy())


def greedy(model, ids, n, eos=None):  # transformers: argmax each step with its own KV cache
    import torch

    new, past = [], None
    with torch.no_grad():
        step = torch.tensor([ids])
        for _ in range(n):
            out = model(input_ids=step, cache=past, use_cache=True)
            past = out.cache
            token = int(out.logits[0, -1].argmax())
            new.append(token)
            if token == eos:
                break
            step = torch.tensor([[token]])
    return new


def max_scaled_error(ours, theirs):  # hidden states: |difference| / (the row's largest + 1)
    scale = np.abs(theirs).max(axis=-1, keepdims=True) + 1.0  # a Llama feature reaches ~2.4e4
    return float((np.abs(ours - theirs) / scale).max())
