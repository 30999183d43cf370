"""real/fast/ is removable: in a copy of the package without it, the commands still run and
give the same numbers as the installed package (with its accelerator), only slower.

The copy is imported first on sys.path by a fresh Python, so nothing of the installed
package can stand in for it; the test checks that the copy is the one that ran and that
no attention_workshop.real.fast module was loaded.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import attention_workshop

pytest.importorskip("gguf")


@pytest.fixture(scope="module")
def without_fast(tmp_path_factory):  # -> a folder holding attention_workshop minus real/fast/
    root = tmp_path_factory.mktemp("nofast")
    source = Path(attention_workshop.__file__).parent
    shutil.copytree(source, root / "attention_workshop",
                    ignore=shutil.ignore_patterns("fast", "__pycache__"))
    assert not (root / "attention_workshop" / "real" / "fast").exists()
    return root


def command(args, path=None):  # -> stdout of `attention-workshop ARGS`, from `path` if given
    code = ("import sys, attention_workshop.cli as c; r = c.main(sys.argv[1:]); "
            "import attention_workshop as a; "
            "loaded = [m for m in sys.modules if m.startswith('attention_workshop.real.fast')]; "
            "print('\\nFROM', a.__file__, 'FAST', len(loaded), file=sys.stderr); sys.exit(r)")
    env = None
    if path is not None:
        import os
        env = {**os.environ, "PYTHONPATH": str(path)}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    origin = done.stderr.rsplit("FROM", 1)[1]
    if path is not None:
        assert str(path) in origin and origin.strip().endswith("FAST 0"), origin
    return done.stdout


def test_real_gives_the_same_numbers_without_the_accelerator(without_fast):
    args = ["real", "the river bank", "--format", "json"]
    ours, plain = json.loads(command(args)), json.loads(command(args, without_fast))
    assert ours["ids"] == plain["ids"]
    np.testing.assert_allclose(plain["attentions"], ours["attentions"], rtol=0, atol=1e-5)


def test_generate_writes_the_same_tokens_without_the_accelerator(without_fast):
    args = ["generate", "The river bank was", "--tokens", "6", "--format", "json"]
    ours, plain = json.loads(command(args)), json.loads(command(args, without_fast))
    assert plain["new_ids"] == ours["new_ids"] and plain["text"] == ours["text"]
    for a, b in zip(ours["steps"], plain["steps"], strict=True):  # where the heads looked
        assert [w["position"] for w in a["looked_at"]] == [w["position"] for w in b["looked_at"]]
        np.testing.assert_allclose([w["weight"] for w in b["looked_at"]],
                                   [w["weight"] for w in a["looked_at"]], rtol=0, atol=1e-5)
