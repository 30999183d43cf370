"""Qwen2: a Llama (llama.py) whose q, k and v projections have biases and whose output
projection has none, with its own defaults (rotary base, epsilon, context).

Everything else is Llama's: the same tensor names under `model.`, rotary positions,
grouped-query attention, RMSNorm, the gated SiLU MLP, the same forward with the same hook
points. What differs is data, so this file is a record: the biases are two options of the
config (bias: q, k, v; out_bias: W_O) that tensor_shapes reads and the forward adds.

Example: a config.json from transformers' Qwen2Config -> ModelConfig(family='qwen2',
bias=True, out_bias=False, ...); its q_proj.bias is read and added, o_proj has no bias.
"""

from attention_workshop.real.families import Family, llama

# ModelConfig field -> config.json key: Llama's, but Qwen2's biases are not options of its file
CONFIG_KEYS = {field: key for field, key in llama.CONFIG_KEYS.items()
               if field not in ("bias", "out_bias")}
# transformers' Qwen2Config's defaults; biases on q, k, v and not on o, always
DEFAULTS = llama.DEFAULTS | {"n_ctx": 32768, "eps": 1e-6, "bias": True, "out_bias": False}
# a sliding window (some layers see only the last W tokens) is code we do not have
REQUIRED = llama.REQUIRED | {"use_sliding_window": False}

FAMILY = Family(model_type="qwen2", config_keys=CONFIG_KEYS, defaults=DEFAULTS,
                required=REQUIRED, prefix=llama.PREFIX, causal=llama.CAUSAL,
                tensor_shapes=llama.tensor_shapes, forward=llama.forward, logits=llama.logits,
                layer_prefix="layers.")
