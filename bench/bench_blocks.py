"""A generated token's block products on 1 thread vs shared over n, alternating, one process.

Usage: python bench/bench_blocks.py [--threads 2] [--blocks B] [--runs R]

What the team in _kernels.c buys: SmolLM2's 211 matrices as fast/blocks.py holds them
(30 layers x 7 and the tied embedding for the logits), each times a random vector of its
width, in the order a token's step makes them: that is one "token" here, the products alone
(no Python between them, no attention). Blocks of R tokens on one thread (the code before
issue 32), on n threads as a token's step runs them (sharing only while it measures
faster than one thread), and on n threads always shared, in turn; each block's median,
then the ratio of neighbouring blocks' medians. Printed beside: the bytes the products
read and the rate that makes.

Example: python bench/bench_blocks.py --threads 2 -> "1 thread 31.2 ms ... 2 / 1 0.55"
"""

import argparse
import statistics
import sys
import time


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)

    import numpy as np
    from bench_forward import machine

    from attention_workshop.real import load_model
    from attention_workshop.real.fast import kernels

    if kernels.compiled is None:
        sys.exit("bench_blocks: _kernels.c is not built (tests/test_fast_kernels.py says why)")
    held = list(load_model("smollm2").blocks.values())
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=w.shape[1]).astype(np.float32) for w in held]
    outs = [np.empty(w.shape[0], np.float32) for w in held]
    product = kernels.compiled.blocks_times_vector

    def token(side):  # (threads, measured) -> seconds for one token's products
        n, measured = side
        kernels.compiled.block_team_measured(measured)
        start = time.perf_counter()
        for w, x, out in zip(held, xs, outs, strict=True):
            product(w.quants, w.scales, w.offsets, x, out, None, n)
        return time.perf_counter() - start

    sides = ((1, True), (args.threads, True), (args.threads, False))
    names = {sides[0]: "1 thread", sides[1]: f"{args.threads} threads",
             sides[2]: f"{args.threads} always shared"}
    got = {n: [] for n in sides}
    for n in sides:
        token(n)  # warm-up: the team's threads started, the blocks in memory
    for _ in range(args.blocks):
        for n in sides:
            got[n].append([token(n) for _ in range(args.runs)])
    read = sum(w.bytes_read for w in held)
    print(f"machine: {machine()}")
    print(f"a token's {len(held)} block products ({read / 1e6:.1f} MB read), "
          f"{args.blocks} blocks x {args.runs} tokens a side, alternating; ms, median [min-max]")
    kernels.compiled.block_team_measured(True)
    for side in sides:
        runs = [t for b in got[side] for t in b]
        m = statistics.median(runs)
        ratios = [statistics.median(a) / statistics.median(b)
                  for a, b in zip(got[side], got[sides[0]], strict=True)]
        print(f"  {names[side]:>18}: {m * 1e3:6.2f} [{min(runs) * 1e3:.2f}-"
              f"{max(runs) * 1e3:.2f}] ms, {read / m / 1e9:4.1f} GB/s; / 1 thread "
              f"{statistics.median(ratios):.2f} [{min(ratios):.2f}-{max(ratios):.2f}]")
    print(f"load average at the end: {machine().rsplit(' ', 1)[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
