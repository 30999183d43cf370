"""Wall time of a full `run` beside the floor: a fresh Python importing numpy and matplotlib.pyplot.

Goal: `run` (Modules 0-2, log and figures) costs at most 2x the floor.
Each command runs REPEAT times, interleaved, in fresh processes; medians are compared.
Usage: python bench/bench_run.py [--repeat N]
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

FLOOR = [sys.executable, "-c",
         "import numpy, matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot"]


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
            "run (Modules 0-3, log + all figures)": run,
            "run --no-figures (log only, Modules 0-3)": [*run, "--no-figures"],
        }
        for cmd in commands.values():  # warm the disk cache and matplotlib's font cache
            wall(cmd)
        times = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, cmd in commands.items():
                times[name].append(wall(cmd))
    floor = statistics.median(next(iter(times.values())))
    print(f"{'command':<48} {'median s':>9} {'x floor':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<48} {median:9.3f} {median / floor:8.2f}")


if __name__ == "__main__":
    main()
