"""A full `run`'s wall time beside the floor, and each module's share of it.

The floor: a fresh Python importing numpy and matplotlib.pyplot.

Goals: `run --no-real` (Modules 0-2 and 6, log and figures) at most 2x the floor; Module 4's share
of the full `run` at most half of the 4.1 s it took before issue 32 (so at most 2.05 s).
Each command runs REPEAT times, interleaved, in fresh processes; medians are compared.

The shares are measured inside the full `run` itself: its process times each module's
`run` (modules.run_module) and the drawing of the figures (figures.draw_all), wall and CPU
(time.process_time: every thread of the process; the drawing's forked child is not in
it), and writes them to a file; "start and the rest" is the run's wall time outside them
(Python's start, the imports, writing the folder). The load average (os.getloadavg) is
read before each round: on a shared machine a module's wall time follows it, its CPU time
much less. Also printed: Module 4 alone (SmolLM2 loaded and run, its log lines computed) in
a fresh process.
Usage: python bench/bench_run.py [--repeat N]
"""

import argparse
import json
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
# `run` as `python -m attention_workshop run --out OUT` runs it (cli.program), with each
# module's run and the figures' drawing timed; argv: OUT, the file for the times (JSON)
TIMED_RUN = """
import json, sys, time
from attention_workshop import cli, figures, modules

times = {}

def timed(function, name):
    def measured(*args):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return function(*args)
        finally:
            times[name(args)] = (time.perf_counter() - wall, time.process_time() - cpu)
    return measured

modules.run_module = timed(modules.run_module, lambda args: modules.name_of(args[0]))
figures.draw_all = timed(figures.draw_all, lambda args: "figures")
out, record = sys.argv[1:]
sys.argv = ["attention-workshop", "run", "--out", out]
code = cli.program()
with open(record, "w") as f:
    json.dump(times, f)
sys.exit(code)
"""
FULL = "run (Modules 0-6, log + all figures)"
ALONE = "Module 4 alone (SmolLM2, its log lines)"


def wall(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def timed_run(out, record):  # -> (wall s, {part: (wall s, cpu s)}) of one full `run`
    seconds = wall([sys.executable, "-c", TIMED_RUN, out, record])
    with open(record) as f:
        parts = {name: tuple(t) for name, t in json.load(f).items()}
    inside = sum(t[0] for t in parts.values())
    return seconds, {**parts, "start and the rest": (seconds - inside, float("nan"))}


def print_shares(rounds, loads):  # [(wall, {part: (wall, cpu)})], [load] -> None
    full = statistics.median(w for w, _ in rounds)
    print(f"\neach part's share of the full `run` (median of {len(rounds)} runs: {full:.2f} s; "
          f"load average before each: {', '.join(f'{x:.2f}' for x in loads)})")
    print(f"{'part':<22} {'wall s':>7} {'share':>6} {'range s':>13} {'cpu s':>6}")
    for name in rounds[0][1]:
        walls = [parts[name][0] for _, parts in rounds]
        cpus = [parts[name][1] for _, parts in rounds]
        median = statistics.median(walls)
        cpu = statistics.median(cpus)
        shown = "-" if cpu != cpu else f"{cpu:.2f}"  # NaN: not measured
        print(f"{name:<22} {median:7.2f} {median / full:6.0%} {min(walls):6.2f}-{max(walls):<6.2f}"
              f" {shown:>6}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        record = os.path.join(out, "times.json")
        folder = os.path.join(out, "run")
        run = [sys.executable, "-m", "attention_workshop", "run", "--out", folder]
        commands = {
            "floor: python + numpy + matplotlib.pyplot": FLOOR,
            "run --no-real (Modules 0-2 and 6, log + 8 figures)": [*run, "--no-real"],
            FULL: None,  # timed_run: the shares
            "run --no-figures (log only, Modules 0-6)": [*run, "--no-figures"],
            ALONE: MODULE4,
        }
        for cmd in commands.values():  # warm the disk cache and matplotlib's font cache
            if cmd is not None:
                wall(cmd)
        times = {name: [] for name in commands}
        rounds, loads = [], []
        for _ in range(args.repeat):
            loads.append(os.getloadavg()[0])
            for name, cmd in commands.items():
                if cmd is None:
                    rounds.append(timed_run(folder, record))
                    times[name].append(rounds[-1][0])
                else:
                    times[name].append(wall(cmd))
    floors = next(iter(times.values()))
    floor = statistics.median(floors)
    print(f"median of {args.repeat} (load average {os.getloadavg()[0]:.2f} at the end); x floor: "
          "the median's, then the range over rounds (each run / that round's floor)")
    print(f"{'command':<48} {'median s':>9} {'x floor':>8} {'range':>12}")
    for name, values in times.items():
        median = statistics.median(values)
        per_round = [v / f for v, f in zip(values, floors, strict=True)]
        print(f"{name:<48} {median:9.3f} {median / floor:8.2f} "
              f"{min(per_round):5.2f}-{max(per_round):5.2f}")
    print_shares(rounds, loads)
    alone = statistics.median(times[ALONE])
    print(f"Module 4 alone in a fresh process (its start, imports and load included): "
          f"{alone:.2f} s")


if __name__ == "__main__":
    main()
