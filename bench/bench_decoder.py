"""SmolLM2: our NumPy Llama vs llama.cpp and transformers, same GGUF and threads, side by side.

Usage: python bench/bench_decoder.py [--threads 1 2] [--blocks B] [--runs R]
                                     [--against llama.cpp transformers]

Against llama.cpp (bench_llama_cpp.py; its llama-bench built by build_llama_bench.py, or
named by $LLAMA_BENCH; where none is found this says so and measures the rest): one new
token (llama-bench's tg32; ours: generate, every attention weight recorded) and 16-, 128- and
512-token prompts (pp16 ...; ours: a forward pass returning every attention weight, and the
last position's next-token scores: llama-bench's batch asks for those of its last token
only, common_batch_get_one), in
alternating blocks, with the bytes each side reads per new token and the memory-bandwidth
floor they give (bandwidth.py, measured here meanwhile). --one adds a third side, in turn
with the two: ours with the block products on one thread whatever the threads allowed (the
code before they shared their rows), so a run measures before and after.

As bench_forward.py measures MiniLM (its workers, blocks and medians): each library in its
own worker process, loaded once from the same GGUF file; blocks of R timed runs, ours and
theirs in turn. Three measurements:
- a forward pass at T = 16, 128, 512 tokens with every attention weight returned and the
  next-token logits of every position (ours: load_model("smollm2").run(ids).logits;
  theirs: eager attention, output_attentions=True);
- greedy decoding, per new token after the prompt, both with a KV cache (ours:
  Model.generate; theirs: generate(do_sample=False)), 32 new tokens after an 8-token prompt
  minus 1 new token after it, over 31;
- at 512 tokens, each side's share of the matmul roofline, and each side's peak resident
  memory for one 512-token forward in a fresh worker.
"""

import statistics
import sys

import bench_forward as common
import bench_llama_cpp

LENGTHS = (16, 128, 512)
SIDES = ("llama.cpp", "transformers")
PROMPT = "1, 2, 3, 4, 5, 6,"  # it goes on counting: 32 tokens without an end-of-sequence
NEW = 32


def matmul_shapes(cfg, T):  # -> [(batch, m, k, n)]: the products of one forward, logits too
    D, F, H, K, d, V = (cfg[k] for k in ("d_model", "d_mlp", "n_head", "n_kv_head", "d_head",
                                         "n_vocab"))
    layer = [(1, T, D, H * d), (1, T, D, K * d), (1, T, D, K * d), (1, T, H * d, D),
             (1, T, D, F), (1, T, D, F), (1, T, F, D), (H, T, d, T), (H, T, T, d)]
    return layer * cfg["n_layer"] + [(1, T, D, V)]


def worker(side, threads):
    import numpy as np

    from attention_workshop.real import load_model

    model = load_model("smollm2")  # ours; its tokenizer gives both sides the same ids
    cfg = model.config
    rng = np.random.default_rng(0)
    ids = {T: rng.integers(3, cfg.n_vocab, size=T).tolist() for T in LENGTHS}
    prompt = model.encode(PROMPT)
    if side == "one":  # ours with a new token's block products on one thread, as before
        from attention_workshop.real.fast import blocks, decode_step  # issue 32 (--one)

        blocks.threads = lambda: 1  # a prompt's few tokens
        decode_step.threads_allowed = lambda: 1  # a generated token's step
    if side in ("ours", "one"):
        def forward(T):
            return model.run(ids[T]).logits

        def prompt_pass(T):  # as llama-bench's pp: the last position's scores only
            run = model.run(ids[T])
            return run.head(run.hidden[-1:])

        def generate(n):
            return model.generate(PROMPT, tokens=n).new_ids

        matmul = np.matmul

        def array(shape):
            return rng.normal(size=shape).astype(np.float32)
    else:
        del model
        import torch
        from transformers import AutoModelForCausalLM

        from attention_workshop.real.formats.gguf_checkpoint import smollm2_file

        torch.set_num_threads(threads)
        torch.set_grad_enabled(False)
        path = smollm2_file()
        theirs = AutoModelForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, attn_implementation="eager",
            dtype=torch.float32).eval()
        tensors = {T: torch.tensor([ids[T]]) for T in LENGTHS}
        start = torch.tensor([prompt])

        def forward(T):
            return theirs(input_ids=tensors[T], output_attentions=True).logits

        prompt_pass = forward  # (asked of ours only: the llama.cpp comparison)

        def generate(n):
            return theirs.generate(start, do_sample=False, max_new_tokens=n, min_new_tokens=n,
                                   attention_mask=torch.ones_like(start))

        matmul = torch.matmul

        def array(shape):
            return torch.randn(shape)
    sizes = {"d_model": cfg.d_model, "d_mlp": cfg.d_mlp, "n_head": cfg.n_head,
             "n_kv_head": cfg.n_kv_head, "d_head": cfg.d_head, "n_layer": cfg.n_layer,
             "n_vocab": cfg.n_vocab}
    common.reply({"ready": True, "config": sizes})
    for line in sys.stdin:
        ask = common.json.loads(line)
        T = ask.get("T", 0)
        if ask["cmd"] == "bytes":  # what a new token's products read: the blocks as held
            held = getattr(model, "blocks", None) or {}
            common.reply({"bytes": sum(b.bytes_read for b in held.values())})
        elif ask["cmd"] == "memory":
            forward(16)
            before = common.rss("VmRSS")
            common.reset_peak()
            forward(T)
            common.reply({"peak": common.rss("VmHWM"), "before": before})
        elif ask["cmd"] in ("time", "prompt"):
            run = forward if ask["cmd"] == "time" else prompt_pass
            cpu = []
            common.reply({"times": common.timed(lambda T=T, run=run: run(T), ask["runs"], cpu),
                          "cpu": cpu})
        elif ask["cmd"] == "generate":  # per new token: (NEW new tokens - 1) / (NEW - 1)
            cpu_many, cpu_one = [], []  # the process's CPU time too (load-proof on 1 thread)
            many = common.timed(lambda: generate(NEW), ask["runs"], cpu_many)
            one = common.timed(lambda: generate(1), ask["runs"], cpu_one)
            common.reply({"times": [(a - b) / (NEW - 1) for a, b in zip(many, one, strict=True)],
                          "cpu": [(a - b) / (NEW - 1) for a, b in zip(cpu_many, cpu_one,
                                                                      strict=True)]})
        elif ask["cmd"] == "gemm":
            shapes = matmul_shapes(sizes, T)
            pairs = {s: (array(s[:1] + s[1:3]), array(s[:1] + s[2:])) for s in set(shapes)}

            def products(shapes=shapes, pairs=pairs):
                for shape in shapes:
                    matmul(*pairs[shape])

            common.reply({"times": common.timed(products, ask["runs"])})


def bench(threads, args):
    script = __file__
    workers = {side: common.Worker(side, threads, script) for side in ("ours", "transformers")}
    memory = {side: w.ask(cmd="memory", T=max(LENGTHS)) for side, w in workers.items()}
    print(f"\n{threads} thread(s): {args.blocks} blocks x {args.runs} runs per side, "
          "interleaved; times in ms, median [min-max]")
    print(f"{'tokens':>6}  {'ours':>22}  {'transformers':>22}  {'ours / theirs':>20}")
    medians = {}
    for T in LENGTHS:
        got = common.blocks(workers, "time", T, args)
        ratios = [statistics.median(a) / statistics.median(b)
                  for a, b in zip(got["ours"], got["transformers"], strict=True)]
        runs = {side: [t for block in b for t in block] for side, b in got.items()}
        medians[T] = {side: statistics.median(r) for side, r in runs.items()}
        print(f"{T:>6}  {common.spread(runs['ours']):>22}  "
              f"{common.spread(runs['transformers']):>22}  "
              f"{common.spread(ratios, 1, '{:.2f}'):>20}")
    got = common.blocks(workers, "generate", 0, args)
    ratios = [statistics.median(a) / statistics.median(b)
              for a, b in zip(got["ours"], got["transformers"], strict=True)]
    runs = {side: [t for block in b for t in block] for side, b in got.items()}
    cfg = workers["ours"].config
    cache = 2 * cfg["n_layer"] * cfg["n_kv_head"] * cfg["d_head"] * 4
    print(f"greedy decoding, per new token after the prompt {PROMPT!r} "
          f"(KV cache both sides, {cache:,} bytes a token in ours):")
    print(f"{'':>6}  {common.spread(runs['ours']):>22}  {common.spread(runs['transformers']):>22}"
          f"  {common.spread(ratios, 1, '{:.2f}'):>20}   goal <= 0.50")
    T = max(LENGTHS)
    work = common.flops(matmul_shapes(cfg, T))
    gemm = {side: statistics.median([t for b in times for t in b])
            for side, times in common.blocks(workers, "gemm", T, args).items()}
    roof = max(work / g for g in gemm.values())
    print(f"matmul roofline at {T} tokens: {work / 1e9:.1f} GFLOP per forward (logits "
          f"included); GEMM rate: numpy {work / gemm['ours'] / 1e9:.0f} GFLOP/s, torch "
          f"{work / gemm['transformers'] / 1e9:.0f} GFLOP/s")
    for side in workers:
        rate = work / medians[T][side]
        print(f"  {side:>12}: {rate / 1e9:5.1f} GFLOP/s = {rate / roof:4.0%} of the faster GEMM")
    common.print_memory(memory, T)
    for w in workers.values():
        w.close()


def against(threads, args):  # each side asked for, at this thread count
    if "llama.cpp" in args.against:
        bench_llama_cpp.bench(threads, args, __file__)
    if "transformers" in args.against:
        bench(threads, args)


def main(argv=None):
    args = common.options(__doc__, argv, blocks=3, runs=3, against=SIDES, one=True)
    if args.worker:
        return worker(args.worker, args.threads[0])
    return common.run_all(against, args, "ours: real/families/llama.py with its accelerator "
                          "(real/fast/llama.py), float32; " + bench_llama_cpp.about())


if __name__ == "__main__":
    sys.exit(main())
