"""A real pretrained transformer's attention, computed by this package's own NumPy code.

    from attention_workshop.real import load_model
    model = load_model("minilm")          # or "gpt2", or a folder path
    result = model.run("the river bank")
    result.tokens       # ['[CLS]', 'the', 'river', 'bank', '[SEP]']
    result.attentions   # [n_layer, n_head, T, T]
    result.hidden       # [T, d_model]

The rooms, in the order a run uses them:

    catalog.py          a name (minilm, gpt2, smollm2) or a path -> a model folder or .gguf file
    formats/            the files -> config, tensors, tokenizer, each checked once
                        (safetensors, shards, GGUF, the folder loader: formats/__init__.py;
                        a GGUF's dequantized numbers kept for the next load: gguf_cache.py)
    config.py           config.json -> ModelConfig, every value checked
    families/           model_type -> its record (__init__.py: Family, the registry, the
                        contract); bert.py, gpt2.py, llama.py, qwen2.py: each family whole,
                        config keys, tensor names, forward pass with its hook points
    layers.py           what the families are made of: norms, activations, rotary, heads
    hooks.py            the named hook points: read or replace any activation
    trace.py            the arrays a forward pass fills, layer by layer (a hook consumer)
    model.py            Model.run: text or ids -> tokens -> forward pass -> RunResult
    decode.py           greedy generation with a KV cache (decoders)
    checked_generation.py   the same tokens drafted in float32, checked by one float64 pass
    interventions.py, resume.py   heads switched off or patched (hook consumers); a run
                        continued from a layer
    accelerator.py      the one door to fast/
    fast/               the accelerator: float32 forward passes made fast, proved equal
    analysis/           which heads matter, heads scored by a pattern or by their effect,
                        a word's drift, long context

It never draws and never prints: the head grids and pages are in figures/, what
`attention-workshop real` prints in commands/real_report.py.
"""

from attention_workshop.real.catalog import DEFAULT, KNOWN

__all__ = ["DEFAULT", "KNOWN", "Model", "RunResult", "generate", "heads", "load_model"]


def load_model(name=DEFAULT, download=False, dtype="float32", say=None, fast=True):
    # str | Path -> Model
    """Load a model by name ("minilm", "gpt2", "smollm2"), from a folder with config.json,
    model.safetensors (or its shards) and tokenizer.json, or from a .gguf file. Only
    download=True may use the network. `dtype` is the working precision (np.float64 for
    digits that never change). `say`, if given, is told when the (slow) loading starts,
    once the name has resolved. fast=False runs the family's readable forward only."""
    from attention_workshop.real.catalog import resolve
    from attention_workshop.real.model import Model

    found = resolve(name, download=download)
    if say:
        say(f"loading model '{name}' from {found} ...")
    if found.suffix.lower() == ".gguf":
        from attention_workshop.real.config import config_from_dict
        from attention_workshop.real.formats.gguf_checkpoint import read_gguf

        raw, weights, tokenizer, blocks = read_gguf(found, dtype=dtype)
        config = config_from_dict(raw, found)
        weights, blocks = (
            {name[len("model."):] if name.startswith("model.") else name: array
             for name, array in named.items()} for named in (weights, blocks))
        meta = {"eos_id": raw.get("eos_token_id"), "chat_template": raw.get("chat_template"),
                "blocks": blocks}
    else:
        from attention_workshop.real.formats.checkpoint import load_folder

        config, weights, tokenizer = load_folder(found, dtype=dtype)
        meta = {}
    return Model(name=str(name), config=config, weights=weights, tokenizer=tokenizer,
                 fast=fast, **meta)


_LAZY = {"Model": "model", "RunResult": "model", "generate": "decode",
         "heads": "analysis.head_patterns"}


def __getattr__(name):  # these bring numpy: imported when first asked for, so that
    if name in _LAZY:  # `--help`, which reads KNOWN, stays light
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
