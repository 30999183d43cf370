"""Our NumPy forward pass vs transformers' BertModel on the same MiniLM input, same thread count.

Usage: python3 bench/bench_forward.py [--threads N] [--repeats R]
Both sides return every layer's attention weights (transformers: output_attentions=True, eager).
Times are the median of R runs after one warm-up; ratio = ours / transformers (< 1: ours faster).
"""

import argparse
import os
import statistics
import sys
import time

LENGTHS = (16, 128, 512)


def median_time(fn, repeats):
    fn()  # warm-up: first-touch allocations, BLAS thread start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)  # before numpy loads its BLAS

    import numpy as np
    import torch
    from transformers import BertModel

    from attention_workshop.real import load_model
    from attention_workshop.real.catalog import minilm_folder
    from attention_workshop.real.families import family

    torch.set_num_threads(args.threads)
    ours = load_model("minilm")
    forward = family(ours.config.family).forward
    theirs = BertModel.from_pretrained(str(minilm_folder()), attn_implementation="eager").eval()
    print(f"threads: numpy/OpenBLAS {args.threads}, torch {torch.get_num_threads()}; "
          f"median of {args.repeats} runs")
    print(f"{'tokens':>6} {'ours (s)':>10} {'transformers (s)':>17} {'ratio':>7}")
    for T in LENGTHS:
        ids = ours.run(" ".join(["bank"] * (T - 2))).ids  # [CLS] + T - 2 words + [SEP]
        assert len(ids) == T
        ids_np, ids_torch = np.asarray(ids), torch.tensor([ids])

        def run_ours(ids_np=ids_np):
            return forward(ours.weights, ours.config, ids_np)

        def run_theirs(ids_torch=ids_torch):
            with torch.no_grad():
                return theirs(input_ids=ids_torch, output_attentions=True)

        t_ours = median_time(run_ours, args.repeats)
        t_theirs = median_time(run_theirs, args.repeats)
        print(f"{T:>6} {t_ours:>10.4f} {t_theirs:>17.4f} {t_ours / t_theirs:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
