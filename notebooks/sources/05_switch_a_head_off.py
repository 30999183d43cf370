# %% [markdown]
# # Module 5: switch a head off and see what it did
#
# Modules 3 and 4 read each head's job off its weights: this one sends bank to river,
# those copy a repeated sequence, that one rests on the first token. Here we ask the
# causal question instead: what changes when a head is not there? A head's output z
# (before W_O mixes the heads) is set to zero (*ablation*), to its mean over the positions
# (*mean ablation*), or to its output in another run (*patching*), and we measure what the
# model then does. Our numbers are proved equal to transformers with the same change made
# its own way (tests/test_interventions_equal.py). At each **Predict**, guess first.
# Section 4 is where you switch off heads of your own choice.

# %%
import numpy as np

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED, wired_attention
from attention_workshop.embeddings import SENT_RIVER, embed
from attention_workshop.modules.module5 import channel_off
from attention_workshop.real import load_model
from attention_workshop.real.analysis.head_effects import loss_rows, losses, switched_off
from attention_workshop.real.analysis.head_patterns import pattern_scores, ranked, sequence_for

np.set_printoptions(precision=3, suppress=True)  # three decimals, as the log prints them

# %% [markdown]
# ## 1. The toy first: one channel of the wired head switched off
#
# Module 2's head asks on two channels: *topic* (place-ness asks for water or money) and
# *place* (filler asks for places). Zero W_Q's topic column and bank asks for nothing.
#
# **Predict.** What weights does bank then give the, river and bank?

# %%
X = embed(SENT_RIVER)  # [3, 4]: the, river, bank
for channel in ("topic", "place"):
    out, weights, _ = wired_attention(X, channel_off(W_Q_WIRED, channel), W_K_WIRED)
    print(f"{channel} off: bank's weights {weights[2]}, bank's output {out[2]}")
print("Module 1's equal average:", X.mean(axis=0))

# %% [markdown]
# With the topic channel off every score is 0 and softmax makes them 1/3 each: bank's
# output is the equal average Module 1 ruled out. The place channel was never bank's
# (cross-check: results.log [S16] lines 4-10):
#
# ```text
#     bank's weights: wired [0.159, 0.500, 0.341] -> topic off [0.333, 0.333, 0.333]
#   bank's output in "the river bank":
#     wired head                    water=0.552  money=0.102  place=0.457  filler=0.159
#     topic channel off             water=0.400  money=0.100  place=0.400  filler=0.333
#     Module 1's equal average      water=0.400  money=0.100  place=0.400  filler=0.333
#     Module 1's simple attention   water=0.435  money=0.149  place=0.543  filler=0.185
#   topic off gives back Module 1's equal average (to 15 decimals): True; in "the money bank": water=0.100  money=0.400  place=0.333  filler=0.333
# ```
#
# ## 2. SmolLM2's induction heads, switched off
#
# Module 4 found heads that, on a sequence repeated once, look at the token after the
# last time the current token came. If they copy, the loss on the repeat should climb
# when they go. float64 keeps every digit as in the log.

# %%
model = load_model("smollm2", dtype=np.float64)
ids, lead = sequence_for(model)  # 50 random tokens (seed 0), then the same 50
plain = model.run(ids)
repeat = {"repeat": loss_rows(ids, lead)["repeat"]}
scores = pattern_scores(plain.attentions, "induction", lead)  # [30, 9]
induction = [(lay, h) for lay, h, _ in ranked(scores, 5)]
print("top 5 induction heads:", induction)
print(f"loss on the repeat, every head on: {losses(plain, repeat)['repeat']:.2f} nats")

# %% [markdown]
# **Predict.** Switch off the top 3. Does the loss double? Go up tenfold?

# %%
for k in (3, 5):
    off = switched_off(model, plain, induction[:k])  # = model.run(ids, ablate=induction[:k])
    print(f"top {k} off: {losses(off, repeat)['repeat']:.2f} nats")

# %% [markdown]
# Five heads of 270 carry most of the copying; five random heads of the same layers cost
# far less (cross-check: results.log [S18] lines 2-8):
#
# ```text
#   every head on: 1.99 nats on the repeat (14.13 on the first half, whose tokens are new)
#   top  1 induction head  off:  3.78  (L18H6)
#   top  3 induction heads off:  5.87  (L18H6, L17H4, L17H3)
#   top  5 induction heads off: 11.47  (L18H6, L17H4, L17H3, L18H7, L17H5)
#   top 10 induction heads off: 12.67  (L18H6, L17H4, L17H3, L18H7, L17H5, L23H7, L23H2, L20H6, L22H7, L23H8)
#   5 random heads off (3 draws from layers 16-20, never the top 5, seed 0): 2.29, 2.37, 4.96; mean 3.21
#   so the copying is theirs: the top 5 off bring the repeat to 11.47 nats, near the new tokens' 14.13; 5 others cost 1.22 on average
# ```
#
# ## 3. The head that feeds them, and the sink
#
# An induction head needs to know which token came *after* each earlier token. A
# previous-token head marks every token with the one before it; switch it off and see.

# %%
off = switched_off(model, plain, [(16, 0)])
after = pattern_scores(off.attentions, "induction", lead)
for lay, h in induction[:3]:
    print(f"L{lay}H{h}: induction score {scores[lay, h]:.3f} -> {after[lay, h]:.3f}")

# %% [markdown]
# (cross-check: results.log [S19] lines 2-4):
#
# ```text
#   previous-token head L16H0 ([S14]'s strongest below layer 17, score 0.915) off; induction scores:
#     L18H6 0.935 -> 0.231, L17H4 0.802 -> 0.031, L17H3 0.794 -> 0.008, L18H7 0.668 -> 0.098, L17H5 0.654 -> 0.020
#     loss on the repeat 1.99 -> 8.48: the induction heads find the token after the last occurrence by the previous-token heads' mark
# ```
#
# A sink head puts nearly all its weight on position 0. **Predict.** If that weight
# mattered, what would position 0's value vector look like?

# %%
for lay, h in [(18, 8), (3, 1)]:
    v = np.linalg.norm(plain.values[lay, h // 3], axis=-1)  # [T]: each position's |v|
    print(f"L{lay}H{h}: |v| at position 0 = {v[0]:.2f}, at the others {v[1:].mean():.2f}")

# %% [markdown]
# Short: the weights must sum to 1, and a head with nothing to say parks them where they
# add almost nothing (cross-check: results.log [S19] lines 5-8):
#
# ```text
#   sink heads ([S14]): the value vector at position 0 is short, so the weight parked there adds little:
#     L18H8 (KV head 2): |v| 0.85 at position 0, mean 12.24 at the others
#     L3H1 (KV head 0): |v| 0.61 at position 0, mean 4.98 at the others
#     L3H3 (KV head 1): |v| 1.00 at position 0, mean 5.92 at the others
# ```
#
# If position 0 is where the spare weight goes, a model that loses it should suffer. A
# decoder writing a long text keeps every token's keys and values (its KV cache); a sliding
# cache keeps only the newest 32 and evicts the rest, the first tokens with them.
# **Predict.** Does the perplexity move a little or a lot? And if the first 4 tokens are kept
# beside the window? (sliding_cache.py computes the evicting cache as one pass with a banded
# mask, proved equal to decoding token by token.)

# %%
from attention_workshop.modules.module5 import CACHES, SCORED, WINDOW
from attention_workshop.real.analysis import sliding_cache as sc

text_ids = model.tokenizer.encode(sc.long_text()).ids[:WINDOW + SCORED + 1]
sliding = sc.losses(sc.in_float32(model), text_ids, WINDOW, CACHES)
for name in CACHES:
    print(f"{name:<28} perplexity {sliding.perplexity(name):.3g}")

# %% [markdown]
# A lot: without the first tokens every head that parked its weight there has to put it
# on real tokens, and their values are not short. One token kept gives back most of it
# (cross-check: results.log [S19] lines 13-17):
#
# ```text
#     full cache (4.47 MB)                      32.1
#     window of 32 only (1.47 MB)                805
#     window + the first token (1.52 MB)        48.8
#     window + the first 4 tokens (1.66 MB)     48.1
#   evicted, the first tokens cost 25x the full cache's perplexity; with the first token kept 1.52x, with 4 1.50x (the rest is the older text the window lost)
# ```
#
# **Try it.** Is the jump as large with a wider window? Run the whole text
# (`model.tokenizer.encode(sc.long_text()).ids`, 1,085 tokens) with a window of 256: each
# cache then runs the 828 tokens after the window again, a minute or two.
#
# ## 4. Your turn: switch off heads of your choice
#
# Change the list (layers and heads count from 0; `(18, 6)` is the log's L18H6) and run
# the cell: the loss on the repeat, and a continuation that copies, with and without them.
# The same from a terminal: `attention-workshop ablate --heads L18H6,L17H4`.

# %%
my_heads = [(18, 6), (17, 4), (17, 3), (18, 7), (17, 5)]
mine = model.run(ids, ablate=my_heads)
print(f"loss on the repeat: {losses(mine, repeat)['repeat']:.2f} nats")
prompt = "apple river seven blue chair lamp apple river seven blue"
print("every head on:", repr(model.generate(prompt, tokens=8).text))
print("heads off:    ", repr(model.generate(prompt, tokens=8, ablate=my_heads).text))

# %% [markdown]
# ## Quiz
#
# Module 5's questions, the ones `attention-workshop quiz 5` asks, built here from Module
# 5's own run (it needs Modules 1-4's results: the toy's, MiniLM's and this notebook's
# SmolLM2 run; `attention-workshop quiz 5` computes them all afresh):

# %%
from attention_workshop.modules import module0, module1, module2, module3, module4, module5
from attention_workshop.quiz import module5 as quiz5
from attention_workshop.quiz.session import graded, question_lines
from attention_workshop.real import heads
from attention_workshop.report import Log
from attention_workshop.workshop import compute

results = compute(Log(), modules=[module0, module1, module2])  # the toy (Modules 0-2)
results[module3.Result] = module3.run(Log(), results)  # MiniLM, as Module 3 runs it
patterns = {kind: heads(model, kind, 3, plain) for kind in ("induction", "previous", "sink")}
results[module4.Result] = module4.Result(  # what Module 5 reads of Module 4: this notebook's
    model=model, river=None, money=None, to_river=None, to_money=None, continuation=None,
    answer=None, patterns=patterns, rotary=None, repeated=plain)
results[module5.Result] = module5.run(Log(), results)
title, questions = module5.TITLE, quiz5.questions(results)
print(title)
for n, question in enumerate(questions, 1):
    print()
    print("\n".join(question_lines(n, len(questions), question)))

# %% [markdown]
# Type your answers between the quotes (a number such as `5.87`, or a letter), then run
# the cell after. An answer left empty shows the right one.

# %%
answers = {1: "", 2: "", 3: "", 4: "", 5: "", 6: ""}

# %% tags=["answers"]
got, total = graded([("5", title, questions)],
                    {("5", n): a for n, a in answers.items() if a.strip()})
