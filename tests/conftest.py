"""Fixtures shared by several test files: the explorer page's browser (tests/browser.py has the
helpers), transformers' MiniLM as the reference for `real`, and the modules computed once for
the tests that only read them (tests/shared_run.py)."""

import contextlib
import io
import os
import signal

import pytest
from browser import launch


def pytest_configure(config):
    """Under pytest-xdist (scripts/test.sh runs -n 2: a worker a core) torch, the tests'
    reference, computes on one thread: two workers at two threads each made four threads on
    two cores, and torch's threads waited for one another (its references ran about twice as
    long). numpy's BLAS, which the workshop's own code sets itself, keeps its threads."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        with contextlib.suppress(ImportError):
            import torch

            torch.set_num_threads(1)


# Ctrl-C as at a terminal. A test run that a script starts in the background (CI) inherits
# SIGINT ignored, and Python keeps an ignored SIGINT ignored: the interrupt tests (in-process
# and in the commands they start, which inherit it) would test a Ctrl-C no learner can send.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="module")
def browser():
    driver, chromium = launch()
    yield chromium
    chromium.close()
    driver.stop()


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):  # the page `explorer` writes, with MiniLM when it is installed
    from attention_workshop import cli

    folder = tmp_path_factory.mktemp("page")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["explorer", "--out", str(folder)]) == 0
    return folder / "explorer.html"


@pytest.fixture(scope="module")
def minilm_reference():  # sentence -> (tokens, ids, attentions [L, H, T, T], hidden [L + 1, T, D])
    """transformers' BertModel on MiniLM's own files, run by torch: the reference for `real`."""
    transformers = pytest.importorskip("transformers")
    from torch_reference import run_reference

    from attention_workshop.errors import WorkshopError
    from attention_workshop.real import catalog

    try:
        folder = str(catalog.minilm_folder())
    except WorkshopError:
        pytest.skip("MiniLM's weights are not installed")
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_file=folder + "/tokenizer.json")
    model = transformers.BertModel.from_pretrained(folder, attn_implementation="eager").eval()

    def run(sentence):
        ids = tokenizer(sentence, padding=False)["input_ids"]
        attentions, hidden = run_reference(model, ids)
        return tokenizer.convert_ids_to_tokens(ids), ids, attentions, hidden

    return run


@pytest.fixture(scope="module")
def tiny_decoder(tmp_path_factory):  # -> (folder, transformers' model): GPT-2, 3 layers x 4
    """heads, d_head 8, random (head_reference.build_causal_gpt2): the ablation tests' model."""
    from head_reference import build_causal_gpt2

    folder = tmp_path_factory.mktemp("gpt2")
    return folder, build_causal_gpt2(folder, n_layer=3)


@pytest.fixture(scope="session")
def smollm2_model():  # transformers' LlamaForCausalLM on SmolLM2's GGUF (float32, eager), once
    from smollm2_reference import reference_model

    return reference_model()


@pytest.fixture(scope="session")
def smollm2_tokenizer():  # transformers' tokenizer of the same GGUF: the reference for ids
    from smollm2_reference import reference_tokenizer

    return reference_tokenizer()


@pytest.fixture(scope="session")
def shared_modules():  # Modules 0-6 computed once, as `run` computes them (tests/shared_run.py)
    from shared_run import Shared

    return Shared.compute()


@pytest.fixture
def replayed_modules(shared_modules):  # the test's quiz, run, check-lesson and compute calls
    """replay shared_modules' work instead of computing every module again (shared_run.py)."""
    with shared_modules.replaying():
        yield shared_modules


@pytest.fixture(scope="session")
def threaded_run_log(tmp_path_factory):  # (threads, nth=1) -> results.log's bytes
    """of the nth `run --no-figures` (MiniLM and SmolLM2 too) in a process of its own with
    OMP_, OPENBLAS_ and MKL_NUM_THREADS set to `threads`: each asked-for run done once a test
    run, for the tests that compare the log across runs and thread counts. Under pytest-xdist
    the workers share the runs: the first to ask runs it (a lock on the folder), the others
    read its log."""
    import fcntl
    import subprocess
    import sys

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the workers'

    def run_log(threads, nth=1):
        out = shared / f"run-{threads}-threads-{nth}"
        with open(shared / f"run-{threads}-threads-{nth}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (out / "results.log").is_file():
                env = dict(os.environ, OMP_NUM_THREADS=str(threads),
                           OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
                subprocess.run([sys.executable, "-m", "attention_workshop", "run",
                                "--no-figures", "--out", str(out)], check=True, env=env,
                               capture_output=True, timeout=600)
            return (out / "results.log").read_bytes()

    return run_log
