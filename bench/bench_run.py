"""Wall time of a full `run` beside the floor: a fresh Python importing numpy and matplotlib.pyplot.

Goals: `run --no-real` (Modules 0-2, log and figures) at most 2x the floor, the full `run`
at most 2.5x. Also printed: Module 4 alone (SmolLM2 loaded and run, its log lines
computed) in a fresh process, and its share of the full run.
Each command runs REPEAT times, interleaved, in fresh processes; medians are compared.
Usage: python bench/bench_run.py [--repeat N]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

FLOOR = [sys.executable, "-c",
         "import numpy, matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot"]
MODULE4 = [sys.executable, "-c", "from attention_workshop.modules import module4; "
           "from attention_workshop.report import Log; module4.run(Log(), {})"]


def wall(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        run = [sys.executable, "-m", "attention_workshop", "run", "--out", out]
        commands = {
            "floor: python + numpy + matplotlib.pyplot": FLOOR,
            "run --no-real (Modules 0-2, log + 5 figures)": [*run, "--no-real"],
            "run (Modules 0-4, log + all figures)": run,
            "run --no-figures (log only, Modules 0-4)": [*run, "--no-figures"],
            "Module 4 alone (SmolLM2, its log lines)": MODULE4,
        }
        for cmd in commands.values():  # warm the disk cache and matplotlib's font cache
            wall(cmd)
        times = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, cmd in commands.items():
                times[name].append(wall(cmd))
    floors = next(iter(times.values()))
    floor = statistics.median(floors)
    print(f"median of {args.repeat} (load average {os.getloadavg()[0]:.2f}); x floor: the "
          "median's, then the range over rounds (each run / that round's floor)")
    print(f"{'command':<48} {'median s':>9} {'x floor':>8} {'range':>12}")
    for name, values in times.items():
        median = statistics.median(values)
        per_round = [v / f for v, f in zip(values, floors, strict=True)]
        print(f"{name:<48} {median:9.3f} {median / floor:8.2f} "
              f"{min(per_round):5.2f}-{max(per_round):5.2f}")
    full = statistics.median(times["run (Modules 0-4, log + all figures)"])
    alone = statistics.median(times["Module 4 alone (SmolLM2, its log lines)"])
    print(f"Module 4's share of a full run: {alone / full:.0%} ({alone:.2f} s of {full:.2f} s, "
          "its process's own start included)")


if __name__ == "__main__":
    main()
