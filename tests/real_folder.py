"""Tiny random model folders for the loader and family tests: config.json, model.safetensors
written with safetensors.numpy from the family's own tensor_shapes, and a word-level
tokenizer.json built here. No torch needed."""

import json

import numpy as np

from attention_workshop.real.config import config_from_dict
from attention_workshop.real.families import family

WORDS = ["[CLS]", "[SEP]", "[UNK]", "the", "river", "money", "bank", "by", "water"]
CONFIGS = {  # one tiny config.json per family in families.FAMILIES: 2 layers, 2 heads
    "gpt2": {"model_type": "gpt2", "n_layer": 2, "n_head": 2, "n_embd": 8, "n_positions": 6,
             "vocab_size": len(WORDS)},
    "bert": {"model_type": "bert", "num_hidden_layers": 2, "num_attention_heads": 2,
             "hidden_size": 8, "intermediate_size": 16, "max_position_embeddings": 6,
             "vocab_size": len(WORDS), "type_vocab_size": 2, "hidden_act": "gelu"},
    "llama": {"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "hidden_size": 8, "intermediate_size": 12,
              "max_position_embeddings": 6, "vocab_size": len(WORDS), "head_dim": 4,
              "rms_norm_eps": 1e-5, "rope_parameters": {"rope_theta": 500.0,
                                                        "rope_type": "default"}},
    "qwen2": {"model_type": "qwen2", "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "hidden_size": 8, "intermediate_size": 12,
              "max_position_embeddings": 6, "vocab_size": len(WORDS), "rms_norm_eps": 1e-6,
              "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
              "use_sliding_window": False},
}


def write_folder(folder, model_type, prefix="", drop=(), reshape=(), **sizes):
    """A random tiny model folder; `drop` leaves tensors out, `reshape` gives them a wrong shape;
    `sizes` change config.json's values (e.g. n_positions=600)."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    folder.mkdir(parents=True, exist_ok=True)
    raw = {**CONFIGS[model_type], **sizes}
    (folder / "config.json").write_text(json.dumps(raw))
    shapes = family(model_type).tensor_shapes(config_from_dict(raw))
    rng = np.random.default_rng(0)
    tensors = {}
    for name, shape in shapes.items():
        if name in drop:
            continue
        shape = (shape[0] + 1, *shape[1:]) if name in reshape else shape
        tensors[prefix + name] = rng.standard_normal(shape).astype(np.float32)
    save_file(tensors, str(folder / "model.safetensors"))
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if model_type == "bert":
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 0), ("[SEP]", 1)])
    tok.enable_padding(length=6)  # as shipped files often do: the loader must switch it off
    tok.save(str(folder / "tokenizer.json"))
    return folder
