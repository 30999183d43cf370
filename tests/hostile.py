"""What every hostile-input test shares: running a command as a user does (in-process, or in a
subprocess with a timeout, as root without root's file-mode override, with a memory cap), and
the one assertion: exit 2, one stderr line, no traceback, stdout empty, nothing changed; and
the installed script run as a shell does (with a redirection), a tiny GGUF to hand in.
"""

import ctypes
import os
import resource
import subprocess
import sys

from folders import tree

from attention_workshop import cli

TIMEOUT = 120  # seconds: far above a cold start on a busy machine; a hang ends the test
MEMORY = 3 * 2**30  # bytes of address space a subprocess may take: a blow-up fails, not swaps


def without_dac_override():
    """preexec_fn: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (1, 2) from the bounding set,
    so the command run as root obeys file modes (PR_CAPBSET_DROP = 24; Linux)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) refused")


def _capped():  # preexec_fn: file modes obeyed (as above) and at most MEMORY bytes
    if os.geteuid() == 0:
        without_dac_override()
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run_command(argv, cwd, capsys, subprocess_run=False):  # -> (exit code, stdout, stderr)
    argv = [str(a) for a in argv]
    if not subprocess_run:
        code = cli.main(argv)
        out, err = capsys.readouterr()
        return code, out, err
    done = subprocess.run([sys.executable, "-m", "attention_workshop", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=TIMEOUT, preexec_fn=_capped)
    return done.returncode, done.stdout, done.stderr


def assert_one_line_refusal(argv, watched, capsys, needle, subprocess_run=False, cwd=None):
    """The command exits 2 with one stderr line holding `needle`, no traceback, nothing on
    stdout, and every byte under `watched` (the previous output, the inputs) as it was."""
    before = tree(watched)
    code, out, err = run_command(argv, cwd or watched, capsys, subprocess_run)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("attention-workshop: error: "), err
    assert needle in err, err
    assert tree(watched) == before  # nothing written, nothing left behind
    return err


SCRIPT = os.path.join(os.path.dirname(sys.executable), "attention-workshop")  # as installed


def run_installed(argv, cwd, **kwargs):  # the installed script, as a shell runs it
    return subprocess.run([SCRIPT, *map(str, argv)], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT, **kwargs)


def shell(redirect, argv, cwd):  # the installed script with a shell's redirection, e.g. ">&-"
    return subprocess.run(["sh", "-c", f'"$@" {redirect}', "sh", SCRIPT, *map(str, argv)],
                          cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)


def tiny_gguf(path, qtype=None, inf_row=False, **meta):  # -> path of tiny_gguf's Llama
    """meta: keys written over tiny_gguf.metadata()'s; inf_row: one row of a matrix inf (with
    a qtype, its blocks' scales become inf)."""
    import numpy as np
    from tiny_gguf import weights_of, write_llama

    weights = weights_of()
    if inf_row:
        weights["model.layers.0.mlp.up_proj.weight"][0, :] = np.inf
    with np.errstate(all="ignore"):  # gguf's quantize warns of the inf it writes
        write_llama(path, qtype=qtype, weights=weights, meta=meta)
    return path
