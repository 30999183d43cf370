"""Our float32 forward with real/_kernels.c's compiled loops vs with numpy's passes, side by side.

Usage: python bench/bench_kernels.py [--threads 1 2] [--blocks B] [--runs R]

What the compiled gelu, softmax and layer norm buy, and what a machine without a C compiler
gets instead (pyproject.toml builds the file where it can). Two worker processes of
bench_forward.py, loaded once: `load_model("minilm").run(sentence)` as installed, and the
same with `kernels.compiled = None`. The driver alternates blocks of R timed runs (B blocks
each) at 16, 128 and 512 tokens. Printed: each side's median [range] in ms, and compiled /
numpy as the median [range] of neighbouring blocks' ratios (with one thread, of CPU times).
"""

import statistics
import sys

from bench_forward import LENGTHS, Worker, blocks, options, run_all, spread


def bench(threads, args):
    workers = {"compiled": Worker("ours", threads), "numpy": Worker("numpy", threads)}
    print(f"\n{threads} thread(s): {args.blocks} blocks x {args.runs} runs per side and length, "
          "interleaved; times in ms, median [min-max]")
    print(f"{'tokens':>6}  {'compiled':>22}  {'numpy passes':>22}  {'compiled / numpy':>20}")
    for T in LENGTHS:
        both = blocks(workers, "time", T, args, key="both")
        pick = 1 if threads == 1 else 0  # one thread: CPU time; more: wall time
        ratios = [statistics.median(a[pick]) / statistics.median(b[pick])
                  for a, b in zip(both["compiled"], both["numpy"], strict=True)]
        runs = {side: [t for wall, _ in b for t in wall] for side, b in both.items()}
        print(f"{T:>6}  {spread(runs['compiled']):>22}  {spread(runs['numpy']):>22}  "
              f"{spread(ratios, 1, '{:.2f}'):>20}")
    for w in workers.values():
        w.close()


def main(argv=None):
    args = options(__doc__, argv)
    from attention_workshop.real.fast import kernels

    if kernels.compiled is None:
        raise SystemExit("real/_kernels.c is not built here: nothing to compare (reinstall "
                         "with a C compiler: pip install -e .)")
    return run_all(bench, args)


if __name__ == "__main__":
    sys.exit(main())
