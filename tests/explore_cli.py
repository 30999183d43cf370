"""`attention-workshop explore SENTENCE --format json` run in-process, the engine the explorer
page is checked against; matrices go in through files, as a learner gives them."""

import contextlib
import io
import json
import tempfile
from pathlib import Path

import numpy as np

from attention_workshop import cli


def explore_json(sentence, w_q=None, w_k=None, w_v=None, scale=True, causal=False):
    """The parsed JSON of `explore SENTENCE --format json` with those options.
    Example: explore_json("bank")["raw"]["weights"] -> [[1.0]]."""
    argv = ["explore", sentence, "--format", "json"]
    with tempfile.TemporaryDirectory() as folder:
        for flag, matrix in (("--wq", w_q), ("--wk", w_k), ("--wv", w_v)):
            if matrix is not None:
                path = Path(folder) / f"{flag[2:]}.json"
                path.write_text(json.dumps({"matrix": np.asarray(matrix, float).tolist()}))
                argv += [flag, str(path)]
        argv += ([] if scale else ["--no-scale"]) + (["--causal"] if causal else [])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(argv) == 0
    return json.loads(out.getvalue())
