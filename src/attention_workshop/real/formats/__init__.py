"""The file formats: each turns files on disk into a config, tensors and a tokenizer, checked
once, before anything is computed.

    checkpoint.py       a model folder (config.json, model.safetensors or its shards,
                        tokenizer.json) -> ModelConfig, weights by checkpoint name, tokenizer
    safetensors_file.py a .safetensors file's header, its tensors mapped in place
    shards.py           model.safetensors, or the shards its index lists
    gguf_file.py        a GGUF file's header, metadata and tensor table (gguf's reader)
    gguf_checkpoint.py  a Llama GGUF -> config, weights under transformers' names, blocks
    gguf_tokenizer.py   a GGUF's own tokenizer, as a tokenizers.Tokenizer
    folder_checks.py    the checks and wording every format shares
    finite.py           the one check for NaN and infinity
"""
