"""Our NumPy forward pass vs transformers' BertModel on MiniLM, same thread count, side by side.

Usage: python bench/bench_forward.py [--threads 1 2] [--blocks B] [--runs R]

Each library runs in its own worker process (its thread pools and allocator to itself),
loaded once. The driver asks them in turn for a block of R timed runs at one length:
ours, theirs, ours, theirs, ... (B blocks each). Blocks, never call by call: OpenBLAS's and
OpenMP's threads keep spinning for tens of ms after a call. Ours is
`load_model("minilm").run(sentence)` (tokenizing included); theirs is BertModel (eager
attention, output_attentions=True) on the same ids. Printed: each side's median and range
over all runs; the ratio ours / theirs as the median, and range, of the ratios of
neighbouring blocks' medians (with one thread, also of their CPU times: one thread's CPU
time is its time, whatever else runs on the machine's other core); at 512 tokens each
side's share of the matmul roofline (the forward's matmul FLOPs at the rate each library's
GEMM reaches on the forward's own shapes) and the peak resident memory of one 512-token
forward (a fresh worker each, so peaks cannot mix: the process's peak, and how far the
forward raised it).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

LENGTHS = (16, 128, 512)


def sentence(T):  # [CLS] + T - 2 words + [SEP] = T tokens for MiniLM
    return " ".join(["bank"] * (T - 2))


def matmul_shapes(cfg, T):  # -> [(batch, m, k, n)]: every matrix product of one forward
    D, F, H, d = cfg["d_model"], cfg["d_mlp"], cfg["n_head"], cfg["d_model"] // cfg["n_head"]
    layer = [(1, T, D, 3 * D), (1, T, D, D), (1, T, D, F), (1, T, F, D),  # Q|K|V, W_O, MLP
             (H, T, d, T), (H, T, T, d)]  # q k^T and weights @ v
    return layer * cfg["n_layer"]


def flops(shapes):
    return sum(2 * b * m * k * n for b, m, k, n in shapes)


# ---------------------------------------------------------------- worker side


def worker(side, threads):
    import numpy as np

    from attention_workshop.real import load_model

    model = load_model("minilm")
    cfg = model.config
    if side == "numpy":  # ours with numpy's passes for gelu, softmax, layer norm (bench_kernels)
        from attention_workshop.real.fast import kernels

        kernels.compiled = None
    if side in ("ours", "numpy"):
        def forward(T):
            return model.run(sentence(T))

        def matmul(a, b):
            return np.matmul(a, b)

        def array(shape):
            return np.random.default_rng(0).normal(size=shape).astype(np.float32)
    else:
        import torch
        from transformers import BertModel

        from attention_workshop.real.catalog import minilm_folder

        torch.set_num_threads(threads)
        torch.set_grad_enabled(False)
        theirs = BertModel.from_pretrained(str(minilm_folder()),
                                           attn_implementation="eager").eval()
        ids = {T: torch.tensor([model.run(sentence(T)).ids]) for T in LENGTHS}

        def forward(T):
            return theirs(input_ids=ids[T], output_attentions=True)

        matmul = torch.matmul

        def array(shape):
            return torch.randn(shape)
    sizes = {"d_model": cfg.d_model, "d_mlp": cfg.d_mlp, "n_head": cfg.n_head,
             "n_layer": cfg.n_layer}
    reply({"ready": True, "config": sizes})
    for line in sys.stdin:
        ask = json.loads(line)
        T = ask["T"]
        if ask["cmd"] == "memory":  # first thing asked: nothing of this length ran yet
            forward(16)
            before = rss("VmRSS")
            reset_peak()
            forward(T)
            reply({"peak": rss("VmHWM"), "before": before})
        elif ask["cmd"] == "time":
            cpu = []
            reply({"times": timed(lambda T=T: forward(T), ask["runs"], cpu), "cpu": cpu})
        elif ask["cmd"] == "gemm":
            pairs = [(array((b, m, k)), array((b, k, n)))
                     for b, m, k, n in sorted(set(matmul_shapes(sizes, T)))]
            counts = {shape: matmul_shapes(sizes, T).count(shape)
                      for shape in set(matmul_shapes(sizes, T))}

            def products(pairs=pairs, counts=counts):
                for (a, b), shape in zip(pairs, sorted(counts), strict=True):
                    for _ in range(counts[shape]):
                        matmul(a, b)

            reply({"times": timed(products, ask["runs"])})


def timed(fn, runs, cpu=None):  # -> wall times; the process's CPU times appended to cpu
    fn()  # warm-up
    times = []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        if cpu is not None:
            cpu.append(time.process_time() - start_cpu)
    return times


def rss(field):  # "VmRSS" or "VmHWM" (peak) from /proc/self/status, in MB
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak():  # Linux: writing 5 to clear_refs resets VmHWM to the current RSS
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def reply(message):
    print(json.dumps(message), flush=True)


# ---------------------------------------------------------------- driver side


class Worker:
    """A worker process of a benchmark script (this one, or `script`: bench_decoder.py)."""

    def __init__(self, side, threads, script=__file__):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                   MKL_NUM_THREADS=str(threads))
        self.proc = subprocess.Popen(
            [sys.executable, script, "--worker", side, "--threads", str(threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.config = self.receive()["config"]

    def ask(self, **message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        return self.receive()

    def receive(self):
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"a benchmark worker died (exit {self.proc.wait()})")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def blocks(workers, cmd, T, args, key="times"):  # -> {side: [[times of a block], ...]}
    """Each side's blocks, interleaved; with key="both", (wall, cpu) blocks."""
    out = {side: [] for side in workers}
    for _ in range(args.blocks):
        for side, w in workers.items():
            got = w.ask(cmd=cmd, T=T, runs=args.runs)
            out[side].append(got["times"] if key == "times" else (got["times"], got["cpu"]))
    return out


def spread(values, scale=1e3, fmt="{:.1f}"):  # -> "median [min-max]"
    return (f"{fmt.format(statistics.median(values) * scale)} "
            f"[{fmt.format(min(values) * scale)}-{fmt.format(max(values) * scale)}]")


def bench(threads, args):
    workers = {"ours": Worker("ours", threads), "transformers": Worker("transformers", threads)}
    memory = {side: w.ask(cmd="memory", T=max(LENGTHS)) for side, w in workers.items()}
    print(f"\n{threads} thread(s): {args.blocks} blocks x {args.runs} runs per side and length, "
          f"interleaved; times in ms, median [min-max]")
    cpu_note = "  ours / theirs, CPU" if threads == 1 else ""
    print(f"{'tokens':>6}  {'ours':>22}  {'transformers':>22}  {'ours / theirs':>20}{cpu_note}")
    medians = {}
    for T in LENGTHS:
        both = blocks(workers, "time", T, args, key="both")
        got = {side: [wall for wall, _ in b] for side, b in both.items()}
        ratios = [statistics.median(a) / statistics.median(b)
                  for a, b in zip(got["ours"], got["transformers"], strict=True)]
        runs = {side: [t for block in b for t in block] for side, b in got.items()}
        medians[T] = {side: statistics.median(r) for side, r in runs.items()}
        line = (f"{T:>6}  {spread(runs['ours']):>22}  {spread(runs['transformers']):>22}  "
                f"{spread(ratios, 1, '{:.2f}'):>20}")
        if threads == 1:  # one thread: its CPU time is its time, whatever the other core does
            cpu = [statistics.median(a[1]) / statistics.median(b[1])
                   for a, b in zip(both["ours"], both["transformers"], strict=True)]
            line += f"  {spread(cpu, 1, '{:.2f}'):>17}"
        print(line)
    T = max(LENGTHS)
    work = flops(matmul_shapes(workers["ours"].config, T))
    gemm = {side: statistics.median([t for b in times for t in b])
            for side, times in blocks(workers, "gemm", T, args).items()}
    roof = max(work / g for g in gemm.values())  # the faster library's GEMM rate, FLOP/s
    print(f"matmul roofline at {T} tokens: {work / 1e9:.2f} GFLOP per forward; GEMM rate on "
          f"the forward's shapes: numpy {work / gemm['ours'] / 1e9:.0f} GFLOP/s, torch "
          f"{work / gemm['transformers'] / 1e9:.0f} GFLOP/s")
    for side in workers:
        rate = work / medians[T][side]
        print(f"  {side:>12}: {rate / 1e9:5.1f} GFLOP/s = {rate / roof:4.0%} of the faster "
              f"GEMM, {rate * gemm[side] / work:4.0%} of its own library's")
    print_memory(memory, T)
    for w in workers.values():
        w.close()


def print_memory(memory, T):  # {side: the worker's "memory" reply}, tokens -> None
    print(f"peak resident memory, one {T}-token forward in a fresh worker (MB):")
    for side, m in memory.items():
        print(f"  {side:>12}: process peak {m['peak']:7.1f}, raised by the forward "
              f"{m['peak'] - m['before']:6.1f}")


def machine():  # -> "AMD EPYC (family 25 model 17, AVX-512), 2 cores; load average 0.23"
    """lscpu's name alone is not the machine: two "AMD EPYC" here were a Zen 2 without
    AVX-512 and a Zen 4 with it, and the kernels run other versions on each."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        text = ""
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    model = fields.get("Model name", "unknown CPU")
    flags = set(fields.get("Flags", "").split())
    simd = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    if "CPU family" in fields and "Model" in fields:
        model += f" (family {fields['CPU family']} model {fields['Model']}, {simd})"
    return f"{model}, {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}"


def options(doc, argv, blocks=6, runs=5, against=(), one=False):  # docstring, argv -> args
    """against: the other sides a benchmark may measure (--against, all by default); one:
    it takes --one (bench_decoder.py)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    if one:
        parser.add_argument("--one", action="store_true",
                            help="also ours with the block products on one thread (before)")
        parser.add_argument("--prompts", type=int, nargs="*", default=list(LENGTHS),
                            choices=LENGTHS,
                            help="prompt lengths against llama.cpp (none: a new token only)")
    if against:
        parser.add_argument("--against", nargs="+", choices=against, default=list(against))
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--blocks", type=int, default=blocks, help="blocks per side and length")
    parser.add_argument("--runs", type=int, default=runs, help="timed runs per block")
    parser.add_argument("--worker", choices=("ours", "numpy", "transformers", "one"),
                        help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def run_all(bench, args, about=""):  # bench(threads, args) for each thread count -> 0
    print(f"machine: {machine()}")
    if about:
        print(about)
    for threads in args.threads:
        bench(threads, args)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    return 0


def main(argv=None):
    args = options(__doc__, argv)
    if args.worker:
        return worker(args.worker, args.threads[0])
    from attention_workshop.real.fast import kernels

    return run_all(bench, args, "ours: gelu, softmax and layer norm by " + (
        "real/_kernels.c, compiled" if kernels.compiled else "numpy (real/_kernels.c not built)"))


if __name__ == "__main__":
    sys.exit(main())
