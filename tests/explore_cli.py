"""`attention-workshop explore SENTENCE --format json` run in-process, the engine the explorer
page is checked against; matrices go in through files, as a learner gives them."""

import contextlib
import io
import json
import tempfile
from pathlib import Path

import numpy as np

from attention_workshop import cli


def explore_json(sentence, w_q=None, w_k=None, w_v=None, scale=True, causal=False, table=None,
                 replace=False):
    """The parsed JSON of `explore SENTENCE --format json` with those options; table:
    {word: row} written as a --table file (--replace-table if replace).
    Example: explore_json("bank")["raw"]["weights"] -> [[1.0]]."""
    argv = ["explore", sentence, "--format", "json"]
    with tempfile.TemporaryDirectory() as folder:
        argv += own_files(Path(folder), table, replace, w_q, w_k, w_v)
        argv += ([] if scale else ["--no-scale"]) + (["--causal"] if causal else [])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(argv) == 0
    return json.loads(out.getvalue())


def own_files(folder, table=None, replace=False, w_q=None, w_k=None, w_v=None):
    # -> the options that hand those to explore or explorer, their files written in `folder`
    argv = []
    if table is not None:
        path = folder / "table.json"
        path.write_text(json.dumps({"words": {w: list(map(float, r)) for w, r in table.items()}}))
        argv += ["--table", str(path)] + (["--replace-table"] if replace else [])
    for flag, matrix in (("--wq", w_q), ("--wk", w_k), ("--wv", w_v)):
        if matrix is not None:
            path = folder / f"{flag[2:]}.json"
            path.write_text(json.dumps({"matrix": np.asarray(matrix, float).tolist()}))
            argv += [flag, str(path)]
    return argv
