"""Hostile input, round three (issue 31): the cases that still ended in a traceback, a lost
user file or a stray message. Each is run as the issue found it (a shell case in a subprocess
of the installed command) and must end in one line, the right exit code, nothing changed.
"""

import os
import subprocess
import sys

import pytest
from folders import tree
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


# --- the standard streams: closed or full ---

def shell(redirect, argv, cwd):  # the installed script with a shell's redirection
    script = os.path.join(os.path.dirname(sys.executable), "attention-workshop")
    return subprocess.run(["sh", "-c", f'"$@" {redirect}', "sh", script, *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=TIMEOUT)


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
    script = os.path.join(os.path.dirname(sys.executable), "attention-workshop")
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
    script = os.path.join(os.path.dirname(sys.executable), "attention-workshop")
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


# --- stray output before a refusal ---

def test_tokens_past_the_room_left_print_nothing_before_the_refusal(tmp_path, capsys):
    """The "N prompt tokens; writing up to 256" line came on stdout before the refusal."""
    path = tiny_gguf(tmp_path / "m.gguf")  # 128 positions
    assert_one_line_refusal(["generate", "the bank", "--model", path, "--tokens", "200"],
                            tmp_path, capsys, "--tokens must be a whole number from 1 to")


# --- files of the user's: never replaced ---

OWN = "cannot write '{}': {} of that name is there that attention-workshop did not write " \
      "(or it changed since), and it is never replaced; move or rename it, or choose " \
      "another with --out DIR"


def generate_argv(tmp_path):
    return ["generate", "the bank", "--model", tiny_gguf(tmp_path / "m.gguf"), "--tokens", "2",
            "--out", "D"]


@pytest.fixture
def in_d(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "D").mkdir()
    (tmp_path / "D" / "notes.txt").write_text("the learner's")
    return tmp_path


def test_generate_does_not_replace_the_users_own_page(in_d, capsys):
    (in_d / "D" / "generation.html").write_text("<p>my own page</p>")
    assert_one_line_refusal(generate_argv(in_d), in_d, capsys, OWN.format("D/generation.html",
                                                                          "a file"))


def test_generate_does_not_replace_a_link_of_that_name(in_d, capsys):
    (in_d / "mine.html").write_text("<p>the file it points to</p>")
    (in_d / "D" / "generation.html").symlink_to(in_d / "mine.html")
    assert_one_line_refusal(generate_argv(in_d), in_d, capsys, OWN.format("D/generation.html",
                                                                          "a link"))
    assert (in_d / "D" / "generation.html").is_symlink()


def test_generate_replaces_its_own_page_but_not_once_the_user_changed_it(in_d, capsys):
    argv = generate_argv(in_d)
    assert cli_main(argv) == 0
    first = (in_d / "D" / "generation.html").read_bytes()
    assert cli_main(argv) == 0  # ours, untouched: replaced (by the same page)
    assert (in_d / "D" / "generation.html").read_bytes() == first
    capsys.readouterr()
    (in_d / "D" / "generation.html").write_bytes(first + b"<!-- my note -->")
    assert_one_line_refusal(argv, in_d, capsys, OWN.format("D/generation.html", "a file"))


@pytest.mark.parametrize(("argv", "name"), [
    (["run", "--no-real", "--no-figures"], "results.log"),
    (["explorer", "--no-real"], "explorer.html")], ids=["run", "explorer"])
def test_run_and_explorer_do_not_replace_the_users_own_file(argv, name, in_d, capsys):
    (in_d / "D" / name).write_text("my own\n")
    assert_one_line_refusal([*argv, "--out", "D"], in_d, capsys, OWN.format(f"D/{name}",
                                                                            "a file"))


@pytest.mark.parametrize("name", ["explore_weights.png", "head_view.html"])
def test_a_file_known_only_when_drawn_is_refused_at_the_commit(name, in_d, capsys):
    """explore's and real's names depend on the words: checked as the set is put in place,
    still before anything is printed."""
    from real_folder import write_folder

    (in_d / "D" / name).write_bytes(b"my own")
    argv = ["explore", "the river bank", "--out", "D"] if name.startswith("explore") else \
        ["real", "the river bank", "--model", write_folder(in_d / "model", "bert"), "--out", "D"]
    assert_one_line_refusal(argv, in_d, capsys, OWN.format(f"D/{name}", "a file"))


def cli_main(argv):
    from attention_workshop import cli

    return cli.main(argv)


# --- a full disk: the stage is not left behind ---

def test_a_stage_whose_mark_cannot_be_written_is_removed(in_d, capsys, monkeypatch):
    """0 bytes free: the stage folder is made, its MARK file too, but writing it fails."""
    import errno
    import pathlib

    from attention_workshop import staging

    write_text = pathlib.Path.write_text

    def full(path, *args, **kwargs):
        if path.name == staging.MARK:
            path.touch()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return write_text(path, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "write_text", full)
    assert_one_line_refusal(generate_argv(in_d), in_d, capsys, "cannot write to output folder "
                            "'D' (No space left on device)")


def test_a_full_disk_leaves_no_stage(tmp_path):
    """generate --out on a tmpfs with 0 bytes free (a private mount namespace, as
    tests/test_hostile_outputs.py's full disk)."""
    import shutil

    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare -m (root)")
    model = tiny_gguf(tmp_path / "m.gguf")
    disk = tmp_path / "disk"
    disk.mkdir()
    script = (f"mount -t tmpfs -o size=64k tmpfs {disk} || exit 99; mkdir {disk}/D; "
              f"echo mine > {disk}/D/notes.txt; dd if=/dev/zero of={disk}/fill bs=4k "
              f"2>/dev/null; '{sys.executable}' -m attention_workshop generate 'the bank' "
              f"--model {model} --tokens 2 --out {disk}/D > {tmp_path}/stdout "
              f"2> {tmp_path}/stderr; echo $? > {tmp_path}/rc; ls -A {disk}/D > {tmp_path}/ls")
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                          cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT)
    if done.returncode == 99:
        pytest.skip("cannot mount a tmpfs here")
    err = (tmp_path / "stderr").read_text()
    assert (tmp_path / "rc").read_text() == "2\n" and err.count("\n") == 1, err
    assert "No space left on device" in err, err
    assert (tmp_path / "ls").read_text() == "notes.txt\n"  # no .attention-workshop-new-XXXX


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


# --- the new surfaces: ablate ---

@pytest.mark.parametrize("choice", [["--heads", "L0H0,L0H1,L0H2,L0H3,L1H0,L1H1,L1H2"],
                                    ["--kind", "induction", "--top", "7"],
                                    ["--kind", "sink", "--top", str(10**21)]],
                         ids=["7 heads of 12", "top 7 of 12", "top 10^21"])
def test_ablate_more_heads_than_the_random_control_can_match(choice, tmp_path, capsys):
    """More than half the heads off left too few others for the random draws: numpy's
    ValueError from rng.choice, a traceback."""
    pytest.importorskip("torch")
    from head_reference import build_causal_gpt2

    build_causal_gpt2(tmp_path / "gpt2", n_layer=3)  # 3 layers x 4 heads
    capsys.readouterr()  # transformers' own lines while building it
    assert_one_line_refusal(["ablate", "--model", tmp_path / "gpt2", *choice], tmp_path, capsys,
                            "to draw the random control from: ")


# --- the new surfaces: train ---

@pytest.mark.parametrize(("task", "name"), [("wiring", "learned_wiring.png"),
                                            ("induction", "induction_patterns.png")])
def test_train_refuses_the_users_own_figure_before_it_prints_anything(task, name, in_d,
                                                                      capsys):
    """Its progress lines came on stdout, then the refusal at the swap."""
    (in_d / "D" / name).write_bytes(b"my own")
    assert_one_line_refusal(["train", task, "--steps", "2", "--out", "D"], in_d, capsys,
                            OWN.format(f"D/{name}", "a file"))


def test_train_interrupted_leaves_the_folder_as_it_was(in_d):
    import signal
    import time

    script = os.path.join(os.path.dirname(sys.executable), "attention-workshop")
    proc = subprocess.Popen([script, "train", "induction", "--steps", "20000", "--out", "D"],
                            cwd=in_d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(600):  # until it prints its first progress line: training has begun
        time.sleep(0.05)
        if proc.poll() is not None or os.path.exists(in_d / "D") and any(
                p.name.startswith(".attention-workshop-new-") for p in (in_d / "D").iterdir()):
            break
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 130, err
    assert err == "attention-workshop: interrupted; 'D' is as it was (nothing in it changed)\n"
    assert sorted(p.name for p in (in_d / "D").iterdir()) == ["notes.txt"]
