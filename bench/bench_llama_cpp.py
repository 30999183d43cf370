"""bench_decoder.py's llama.cpp side: llama-bench found, run and read; ours beside it, in turn.

llama-bench times what llama.cpp does with a GGUF: `-p 512` one 512-token prompt's pass
(pp512), `-n 32` 32 generated tokens after an empty context (tg32), each repeated `-r`
times after a warm-up run; its JSON gives every repetition's nanoseconds and the build's
commit and number. build_llama_bench.py builds it; $LLAMA_BENCH names another one. Each
block: llama-bench's R repetitions (a fresh process: its model load is not timed), then
ours R times (bench_decoder.py's worker, loaded once), then the streaming-read bandwidth
(bandwidth.py); ratios are taken block by block, so a load that comes and goes on this
shared machine weighs on both sides alike. On one thread each block also takes each side's
CPU time a new token (cpu_per_token; ours from its worker's process time): a core's cost
of the token whatever else runs, the ratio to read when the load makes the wall times'
ranges wide.

Example: found() -> Path(".../build-avx2/bin/llama-bench") or None; times(path, gguf, 2,
prompts=(16,), runs=3) -> ({"pp16": [s, s, s]}, {"commit": ..., "number": ...})
"""

import json
import os
import resource
import shutil
import statistics
import subprocess
from pathlib import Path

import bandwidth
import bench_forward as common
import build_llama_bench

LENGTHS = (16, 128, 512)
NEW = 32  # llama-bench's tg32; ours: bench_decoder.py's (32 new tokens - 1) / 31


def found():  # -> Path of a llama-bench to run, or None
    named = os.environ.get("LLAMA_BENCH")
    if named:
        return Path(named) if Path(named).is_file() else None
    on_path = shutil.which("llama-bench")
    return Path(on_path) if on_path else build_llama_bench.built()


def about():  # -> one line for the benchmark's header
    path = found()
    if path is None:
        return ("llama.cpp: no llama-bench found (python bench/build_llama_bench.py builds it, "
                "or set LLAMA_BENCH), so it is not measured")
    return f"llama.cpp: {path}"


def sdist(path):  # -> ", from the sdist ..." for a llama-bench build_llama_bench.py built
    """The sdist carries no git history, so its build says number 0, commit unknown."""
    inside = build_llama_bench.cache_folder() in Path(path).resolve().parents
    return (f", from the sdist {build_llama_bench.PACKAGE}=={build_llama_bench.VERSION}"
            if inside else "")


def times(path, gguf, threads, prompts=(), new=0, runs=3):
    # llama-bench, a GGUF, threads, prompt lengths, new tokens, repetitions ->
    # ({"pp16": [seconds a pass], "tg32": [seconds a new token]}, the build's version)
    cmd = [str(path), "-m", str(gguf), "-t", str(threads), "-r", str(runs), "-o", "json",
           "-p", ",".join(str(T) for T in prompts) or "0", "-n", str(new)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        last = (out.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise SystemExit(f"llama-bench failed (exit {out.returncode}): {last}")
    got, version = {}, {}
    for row in json.loads(out.stdout):
        samples = [ns / 1e9 for ns in row["samples_ns"]]
        if row["n_gen"]:
            got[f"tg{row['n_gen']}"] = [t / row["n_gen"] for t in samples]
        else:
            got[f"pp{row['n_prompt']}"] = samples
        version = {"commit": row.get("build_commit"), "number": row.get("build_number")}
    return got, version


def cpu_per_token(path, gguf, runs):  # -> llama-bench's CPU seconds a new token, 1 thread
    """Its process's CPU time (user + system, from the children's rusage) for `runs`
    repetitions of tg32 minus that for one, over the (runs - 1) x 32 tokens between: the
    model's load and the warm-up cancel. On one thread CPU time is what the token costs
    whatever the other core does, so this ratio holds on a loaded machine where the wall
    times' do not."""
    spent = []
    for r in (1, runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        times(path, gguf, 1, new=NEW, runs=r)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return (spent[1] - spent[0]) / ((runs - 1) * NEW)


def file_bytes(gguf):  # -> bytes of the GGUF's tensors: what llama.cpp reads for a new token
    from gguf import GGUFReader

    return sum(int(t.n_bytes) for t in GGUFReader(gguf).tensors)


def bench(threads, args, script):
    from attention_workshop.real.formats.gguf_checkpoint import smollm2_file

    path = found()  # None: ours, its bytes and the floor alone, llama.cpp's columns empty
    gguf = smollm2_file()
    mine = {"ours": common.Worker("ours", threads, script)}
    if getattr(args, "one", False):
        mine["one"] = common.Worker("one", threads, script)
    lengths = tuple(getattr(args, "prompts", LENGTHS))
    rows = [f"tg{NEW}"] + [f"pp{T}" for T in lengths]
    got = {row: {side: [] for side in (*mine, "llama.cpp")} for row in rows}
    rates, version = [], {}
    cpu = {side: [] for side in (*mine, "llama.cpp")}  # 1 thread: CPU ms a new token, per block
    by_cpu = threads == 1 and path is not None and args.runs >= 2
    for _ in range(args.blocks):
        theirs = {row: [float("nan")] for row in rows}
        if path is not None:
            theirs, version = times(path, gguf, threads, new=NEW, runs=args.runs)
            if lengths:
                more, _ = times(path, gguf, threads, prompts=lengths, runs=args.runs)
                theirs.update(more)
            if by_cpu:
                cpu["llama.cpp"].append(cpu_per_token(path, gguf, args.runs))
        for side, w in mine.items():
            made = w.ask(cmd="generate", runs=args.runs)
            got[f"tg{NEW}"][side].append(made["times"])
            cpu[side].append(statistics.median(made["cpu"]))
            for T in lengths:
                got[f"pp{T}"][side].append(w.ask(cmd="prompt", T=T, runs=args.runs)["times"])
        for row in rows:
            got[row]["llama.cpp"].append(theirs[row])
        rates.append(bandwidth.rate(threads, mb=256, passes=5))
    held = mine["ours"].ask(cmd="bytes")["bytes"]
    for w in mine.values():
        w.close()
    who = (f"llama.cpp (build {version.get('number')}, commit {version.get('commit')}"
           f"{sdist(path)})" if path else "llama.cpp (NOT FOUND: its columns are empty)")
    print(f"\n{threads} thread(s) against {who}: {args.blocks} blocks x {args.runs} runs a "
          "side, alternating; ms, median [min-max]; ratio: ours / llama.cpp, block by block")
    print(f"{'':>6}  {'ours':>24}  {'llama.cpp':>24}  {'ours / llama.cpp':>18}")
    medians = {}
    for row in rows:
        runs = {side: [t for b in blocks for t in b] for side, blocks in got[row].items()}
        ratios = [statistics.median(a) / statistics.median(b)
                  for a, b in zip(got[row]["ours"], got[row]["llama.cpp"], strict=True)]
        medians[row] = {side: statistics.median(r) for side, r in runs.items()}
        tokens = 1 if row.startswith("tg") else int(row[2:])
        per_s = {side: f"{tokens / m:.0f} t/s" for side, m in medians[row].items()}
        line = (f"{row:>6}  {common.spread(runs['ours']):>15} {per_s['ours']:>8}  "
                f"{common.spread(runs['llama.cpp']):>15} {per_s['llama.cpp']:>8}  "
                f"{common.spread(ratios, 1, '{:.2f}'):>18}")
        if "one" in mine:  # before: the block products on one thread; ratio ours / before
            was = [statistics.median(a) / statistics.median(b)
                   for a, b in zip(got[row]["ours"], got[row]["one"], strict=True)]
            line += (f"   before {common.spread(runs['one'])}, "
                     f"ours / before {common.spread(was, 1, '{:.2f}')}")
        print(line)
    if by_cpu:  # the same token in CPU time: what it costs on a core of its own
        ratios = [a / b for a, b in zip(cpu["ours"], cpu["llama.cpp"], strict=True)]
        print(f"{'':>6}  CPU time a new token (1 thread): ours "
              f"{common.spread(cpu['ours'])}, llama.cpp {common.spread(cpu['llama.cpp'])}; "
              f"ours / llama.cpp {common.spread(ratios, 1, '{:.2f}')}")
    best = max(rates)
    theirs_bytes = file_bytes(gguf)
    print(f"memory bandwidth, streaming read on {threads} thread(s): best {best / 1e9:.1f} GB/s "
          f"(median {statistics.median(rates) / 1e9:.1f})")
    for side, read in (("ours", held), ("llama.cpp", theirs_bytes))[:2 if path else 1]:
        floor = bandwidth.floor_ms(read, best)
        spent = medians[f"tg{NEW}"][side] * 1e3
        print(f"  {side:>9}: {read / 1e6:5.1f} MB read a new token -> floor {floor:5.2f} ms; "
              f"its {spent:5.2f} ms is {spent / floor:4.2f}x the floor")
