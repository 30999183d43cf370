"""Hostile input, round three (issue 31): the cases that still ended in a traceback, a lost
user file or a stray message. Each is run as the issue found it (a shell case in a subprocess
of the installed command) and must end in one line, the right exit code, nothing changed.
"""

import os
import subprocess
import sys

import pytest
from hostile import TIMEOUT, assert_one_line_refusal

from attention_workshop.errors import WorkshopError

LONG = "a" * 300  # longer than any file name Linux allows (255 bytes)


# --- names too long for the file system: one function looks at every path (path_kind) ---

@pytest.mark.parametrize("argv", [
    ["real", "the river bank", "--model", "a" * 5000],
    ["generate", "P", "--model", LONG + ".gguf"],
    ["heads", "--kind", "sink", "--model", LONG],
    ["real", "the river bank", "--model", f"{LONG}/config.json"],
], ids=["real 5000", "generate .gguf", "heads", "real a file under it"])
def test_a_model_name_too_long_for_the_file_system(argv, tmp_path, capsys):
    err = assert_one_line_refusal(argv, tmp_path, capsys, "cannot read model 'aaa",
                                  subprocess_run=True)
    assert "the name is too long for the file system; check the path" in err
    assert len(err) < 500  # the name is cut in the message


def test_load_model_with_a_name_too_long_is_one_workshop_error():
    from attention_workshop import load_model

    with pytest.raises(WorkshopError, match="the name is too long for the file system"):
        load_model("a" * 10000)


def test_a_model_path_through_a_loop_of_links(tmp_path, capsys):
    (tmp_path / "loop").symlink_to("loop")
    assert_one_line_refusal(["real", "the bank", "--model", tmp_path / "loop" / "x.gguf"],
                            tmp_path, capsys, "it is a loop of symbolic links")


def test_a_model_name_with_a_nul_byte_is_refused_in_the_api():
    from attention_workshop import load_model

    with pytest.raises(WorkshopError, match="the name holds a NUL byte"):
        load_model("model\0.gguf")


def run_installed(argv, cwd, **kwargs):  # the installed script, as a shell runs it
    script = os.path.join(os.path.dirname(sys.executable), "attention-workshop")
    return subprocess.run([script, *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT, **kwargs)


# --- GGUF metadata and blocks ---

def tiny_gguf(path, qtype=None, inf_row=False, **meta):  # -> path of a tiny Llama GGUF
    import numpy as np
    from tiny_gguf import weights_of, write_llama

    weights = weights_of()
    if inf_row:  # one row of a quantized matrix: its blocks' scales become inf
        weights["model.layers.0.mlp.up_proj.weight"][0, :] = np.inf
    with np.errstate(all="ignore"):  # gguf's quantize warns of the inf it writes
        write_llama(path, qtype=qtype, weights=weights, meta=meta)
    return path


@pytest.mark.parametrize("meta", [{"llama.vocab_size": 26, "tokenizer.ggml.tokens": 5},
                                  {"tokenizer.ggml.tokens": 5}],
                         ids=["with vocab_size", "without"])
def test_tokens_stored_as_a_number(meta, tmp_path, capsys):
    path = tiny_gguf(tmp_path / "m.gguf", **meta)
    err = assert_one_line_refusal(["generate", "the bank", "--model", path, "--tokens", "2"],
                                  tmp_path, capsys, "cannot read GGUF file")
    assert "tokenizer.ggml.tokens is not a list of strings" in err or "for missing tokens" in err


@pytest.mark.parametrize("alignment", [None, 1], ids=["aligned", "general.alignment 1"])
def test_inf_in_a_quantized_block_prints_no_numpy_warning(alignment, tmp_path):
    import gguf

    path = tiny_gguf(tmp_path / "m.gguf", gguf.GGMLQuantizationType.Q8_0, inf_row=True,
                     **({} if alignment is None else {"general.alignment": alignment}))
    done = run_installed(["generate", "the bank", "--model", str(path)], tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.count("\n") == 1 and "Warning" not in done.stderr, done.stderr
    assert "holds NaN or infinity" in done.stderr
