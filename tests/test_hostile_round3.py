"""Hostile input, round three (issue 31): the cases that still ended in a traceback or a stray
warning (names too long, NUL bytes, GGUF metadata, closed or full standard streams, memory,
signals at start-up and at the end). Each is run as the issue found it (a shell case in a
subprocess of the installed command) and must end in one line, the right exit code, nothing
changed. The output side (a learner's files never replaced, a full disk, ablate and train):
tests/test_hostile_own_files.py.
"""

import os
import subprocess
import sys

import pytest
from folders import tree
from hostile import SCRIPT, TIMEOUT, assert_one_line_refusal, run_installed, shell, tiny_gguf

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


# --- GGUF metadata and blocks ---

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


# --- the standard streams: closed or full ---

def test_stdout_closed_is_one_line_before_anything_is_done(tmp_path):
    """`explore ... >&-` ended in AttributeError: 'NoneType' object has no attribute 'flush'."""
    done = shell(">&-", ["explore", "the river bank", "--out", "out"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("attention-workshop: error: standard output is closed (>&-), so "
                           "nothing could be shown; send it somewhere, e.g. > out.txt or > "
                           "/dev/null\n")
    assert not (tmp_path / "out").exists()


def test_stdout_open_for_reading_only_is_one_line(tmp_path):
    """A write error that is not a full disk does not say to free some space."""
    done = shell("1</dev/null", ["explore", "the river bank"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("attention-workshop: error: cannot write to standard output (Bad "
                           "file descriptor); send the output elsewhere\n")


def test_stderr_closed_keeps_the_message_off_stdout_and_the_exit_code(tmp_path):
    """print(file=None) writes to stdout: the error line once went there."""
    done = shell("2>&-", ["explore", "the river bank", "--word", "nope"], tmp_path)
    assert (done.returncode, done.stdout) == (2, "")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stderr_full_keeps_the_exit_code(tmp_path):
    done = shell("2>/dev/full", ["explore", "the river bank", "--word", "nope"], tmp_path)
    assert (done.returncode, done.stdout) == (2, "")  # was 1: an OSError writing the message


def test_stdin_closed_stops_the_quiz(tmp_path):
    """input() with sys.stdin None: RuntimeError: input(): lost sys.stdin."""
    done = shell("<&-", ["quiz", "1"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "score: 0/0 right (stopped at Module 1, question 1)"
    assert done.stderr == ""


# --- memory ---

def test_a_memory_error_in_a_run_is_one_line_and_the_folder_as_it_was(tmp_path, capsys,
                                                                      monkeypatch):
    """numpy's own MemoryError (an array of 4 EiB asked for inside Module 2)."""
    import numpy as np

    from attention_workshop.modules import module2

    previous_run(tmp_path / "D")
    monkeypatch.setattr(module2, "scaling_experiment", lambda *a, **k: np.empty(2**62, np.uint8))
    assert_one_line_refusal(["run", "--no-real", "--no-figures", "--out", tmp_path / "D"],
                            tmp_path, capsys, "out of memory: unable to allocate 4.00 EiB for "
                            "an array with shape (4611686018427387904,) and data type uint8; "
                            "free some memory (or raise ulimit -v), or ask for less")


def previous_run(folder):  # a results.log that `run` wrote, as its file list records it
    from attention_workshop import manifest

    folder.mkdir()
    (folder / "results.log").write_text("[S1] the previous log\n")
    manifest.write(folder, {"run": {"results.log": manifest.fingerprint(folder / "results.log")}})


def test_run_under_a_memory_limit_is_one_line(tmp_path, capsys):
    """`ulimit -v 1200000; run --out D` ended in numpy's _ArrayMemoryError traceback, exit 1.
    900 MB of address space (one BLAS thread, so the count of cores does not move it): the
    real modules' models do not fit."""
    from attention_workshop.real import catalog

    try:
        catalog.minilm_folder(), catalog.smollm2_file()
    except WorkshopError:
        pytest.skip("the real models are not installed: a run fits in the limit")
    previous_run(tmp_path / "D")
    limit = 900_000  # KB, as ulimit -v counts
    script = SCRIPT
    before = tree(tmp_path / "D")
    done = subprocess.run(["sh", "-c", f'ulimit -v {limit}; exec "$0" run --out D', script],
                          cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("attention-workshop: error: ") and "memory" in done.stderr
    assert tree(tmp_path / "D") == before


# --- signals at start-up, and after the line is said ---

# The installed script (or `python -m attention_workshop`) run through runpy, so that an
# import hook sends the signal at a chosen moment of the start-up (tests/test_interrupts.py
# does the same for later moments); `again` also sends it once more while the interpreter
# ends, after Python has put its default handlers back (from an object's __del__).
STARTUP = """
import gc, importlib.abc, os, runpy, signal, sys
script, how, module, sig, again = sys.argv[1:6]
sig = getattr(signal, sig)
class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == module:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), sig)
class Again:  # its own names: the module's may be cleared to None by then
    def __del__(self, kill=os.kill, pid=os.getpid(), sig=sig):
        kill(pid, sig)
def freeze(freeze=gc.freeze):  # garbage made after gc.freeze (frozen objects are never
    freeze()  # finalized), for the collection as the interpreter ends, after its handlers
    cycle = [Again()]
    cycle.append(cycle)
    gc.disable()
if again == "again":
    gc.freeze = freeze
sys.meta_path.insert(0, Hook())
if how == "script":
    sys.argv = [script, *sys.argv[6:]]
    runpy.run_path(script, run_name="__main__")
else:
    sys.argv = ["attention_workshop", *sys.argv[6:]]
    sys.orig_argv = [sys.executable, "-m", "attention_workshop", *sys.argv[1:]]
    runpy.run_module("attention_workshop", run_name="__main__", alter_sys=True)
"""
# the moment: the import the signal comes in, all before cli.py's own handler
AT_START = {"in the package's first import": "attention_workshop.explore",
            "as cli.py imports interrupts": "attention_workshop.interrupts",
            "as interrupts imports errors": "attention_workshop.errors"}


def interrupted_program(how, module, name, again, tmp_path, *argv):
    script = SCRIPT
    return subprocess.run([sys.executable, "-c", STARTUP, script, how, module, name, again,
                           *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=TIMEOUT)


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("how", ["script", "python -m"])
@pytest.mark.parametrize("when", AT_START)
def test_a_signal_at_start_up_is_one_line(when, how, name, tmp_path):
    """A KeyboardInterrupt traceback from inside the package's imports, 2 runs in 30."""
    done = interrupted_program(how.split()[0], AT_START[when], name, "once", tmp_path,
                               "explore", "the river bank", "--out", "out")
    import signal

    assert done.returncode == 128 + getattr(signal, name), done.stderr
    assert done.stderr == "attention-workshop: interrupted; nothing was written\n"
    assert done.stdout == "" and not (tmp_path / "out").exists()


def test_a_second_signal_as_the_process_ends_keeps_the_exit_code(tmp_path):
    """The first Ctrl-C inside the command (said in one line), the second as the interpreter
    ends: once killed by the signal (1 run in 24) after the line was said."""
    done = interrupted_program("script", "numpy", "SIGINT",
                               "again", tmp_path, "explore", "the river bank", "--out", "out")
    assert done.returncode == 130, done.stderr
    assert done.stderr == "attention-workshop: interrupted; nothing was written\n"
    assert not (tmp_path / "out").exists()


def test_a_package_import_is_not_the_program():
    from fresh import fresh_python

    code = ("import signal, attention_workshop; "
            "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "
            "attention_workshop.started_as_program())")
    assert fresh_python(code) == "True False"


@pytest.mark.parametrize(("argv", "ours"), [
    (["-m", "attention_workshop"], True), (["-Im", "attention_workshop"], True),
    (["-X", "dev", "-m", "attention_workshop"], True), (["-mattention_workshop"], True),
    (["-W", "ignore", "-Bm", "attention_workshop"], True),
    (["-Xfrozen_modules=off", "-m", "attention_workshop"], True),
    (["-c", "x", "-m", "attention_workshop"], False), (["-m", "pytest"], False),
    (["script.py", "-m", "attention_workshop"], False), (["-m", "attention_workshop.x"], False),
])
def test_python_s_own_options_before_dash_m_are_read_as_python_reads_them(argv, ours,
                                                                          monkeypatch):
    import attention_workshop

    monkeypatch.setattr(sys, "orig_argv", [sys.executable, *argv])
    assert attention_workshop.started_as_program() is ours


def test_an_output_folder_named_with_a_nul_byte_in_the_api(tmp_path):
    from attention_workshop.workshop import run_workshop

    with pytest.raises(WorkshopError, match=r"cannot write to output folder '.*' \(the name "
                                            r"holds a NUL byte\)"):
        run_workshop(tmp_path / "a\0b", figures=False, real=False, say=lambda _: None)
    assert list(tmp_path.iterdir()) == []


def test_a_float64_weight_past_float32_s_range_prints_no_numpy_warning(tmp_path):
    """1e300 in a float64 checkpoint read in float32: numpy's 'overflow encountered in cast'
    came before the refusal."""
    import numpy as np
    from real_folder import write_folder
    from safetensors.numpy import load_file, save_file

    folder = write_folder(tmp_path / "model", "gpt2")
    tensors = {k: v.astype(np.float64) for k, v in
               load_file(str(folder / "model.safetensors")).items()}
    tensors["h.0.attn.c_attn.weight"][0, 0] = 1e300
    save_file(tensors, str(folder / "model.safetensors"))
    done = run_installed(["real", "the bank", "--model", str(folder)], tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.count("\n") == 1 and "Warning" not in done.stderr, done.stderr
    assert "overflow to NaN or infinity in layer 0" in done.stderr
