# %% [markdown]
# # Module 3: the same formula inside a real model
#
# Modules 1 and 2 built `softmax(Q K^T / sqrt(d_k)) V` by hand, on four named axes. Here
# we open a real pretrained transformer, all-MiniLM-L6-v2, and find that exact formula
# running in every one of its heads: learned matrices instead of wired ones, 32 numbers
# per query instead of 2, 72 heads instead of 1.
#
# The model runs on this package's own NumPy code, from files installed with pip, with no
# network (the test suite proves the numbers equal the reference implementation's). Run the
# cells in order; at each **Predict**, commit to a guess first. Section 4 is where you ask
# the model your own question: which heads send one word of your sentence to another?

# %%
# %matplotlib inline
import numpy as np

from attention_workshop.attention import softmax
from attention_workshop.embeddings import SENT_MONEY, SENT_RIVER
from attention_workshop.real import load_model

np.set_printoptions(precision=3, suppress=True)  # three decimals, as the log prints them

# %% [markdown]
# ## 1. The model and its sizes
#
# `float64` makes every digit the same on every machine, as in the log (the model's files
# hold float32; the default, float32, is twice as fast and agrees to about 6 digits).

# %%
model = load_model("minilm", dtype=np.float64)
cfg = model.config
print(f"{cfg.n_layer} layers x {cfg.n_head} heads, d_model = {cfg.d_model}, "
      f"vocabulary {cfg.n_vocab} tokens")
print(f"d_k = {cfg.d_model} / {cfg.n_head} = {cfg.d_head}; "
      f"every score is divided by sqrt({cfg.d_head}) = {np.sqrt(cfg.d_head):.3f}")

# %% [markdown]
# Each of the 6 layers holds 12 heads side by side. Every head has its own learned `W_Q`,
# `W_K` and `W_V`, each turning the 384 numbers of a token into 32: the wired head's job,
# at scale and learned from text. Around the heads sit parts our toy head did without
# (biases, an output matrix `W_O`, layer norms, a small MLP), but the attention itself is
# Module 2's formula (cross-check: results.log [S6] lines 1-4):
#
# ```text
# [S6] Module 3: the real thing (all-MiniLM-L6-v2, run by our own NumPy code)
#   model: BERT encoder, 6 layers x 12 heads, d_model = 384, MLP 1536, 512 positions, 30522-token vocabulary
#   d_k = d_head = 384 / 12 = 32: every score is divided by sqrt(32) = 5.657
#   learned in each layer: W_Q, W_K, W_V, W_O (384 x 384, with biases), 2 layer norms, MLP 384 -> 1536 -> 384 (gelu)
# ```

# %% [markdown]
# ## 2. Tokens
#
# A real model reads tokens, not our table's words.
#
# **Predict.** How many tokens will "the river bank" become? Will "bank" get the same id
# in both sentences?

# %%
river, money = model.run(SENT_RIVER), model.run(SENT_MONEY)
for result in (river, money):
    print(result.tokens, result.ids)

# %% [markdown]
# Five tokens each: the tokenizer adds `[CLS]` in front and `[SEP]` at the end, and
# `bank` is token 3 with id 2924 in both. The model's input for bank is as blind to the
# sentence as our table was (cross-check: results.log [S6] lines 5-7):
#
# ```text
#   real tokens, "the river bank": [CLS] the river bank [SEP]  (ids 101 1996 2314 2924 102)
#   real tokens, "the money bank": [CLS] the money bank [SEP]  (ids 101 1996 2769 2924 102)
#   the tokenizer adds [CLS] and [SEP]; each lesson word is one token; bank is token 3 in both
# ```
#
# A run's result shows itself as tables when it is a cell's last value: its tokens, each
# head's strongest look from one word to another (layers down, heads across, both counted
# from 0), and the weight tables of the three strongest heads.

# %%
river

# %% [markdown]
# ## 3. The formula, checked on real weights
#
# The run keeps every head's queries and keys (`result.queries`, `result.keys`, shaped
# [layers, heads, tokens, 32]).
#
# **Predict.** Take one head's queries and keys and compute `softmax(q @ k.T /
# sqrt(32))` yourself, with the package's `softmax` from Module 0. Will you get the
# model's own weights for that head exactly, roughly, or not at all?

# %%
q, k = river.queries[0, 4], river.keys[0, 4]  # layer 0, head 4: [5, 32] each
mine = softmax(q @ k.T / np.sqrt(cfg.d_head))  # [5, 5]
print(mine)
print("equal to the model's weights?", np.allclose(mine, river.attentions[0, 4], rtol=0,
                                                   atol=1e-12))
everything = softmax(river.queries @ np.swapaxes(river.keys, -1, -2) / np.sqrt(cfg.d_head))
print("and for all 72 heads at once?", np.allclose(everything, river.attentions, rtol=0,
                                                   atol=1e-12))

# %% [markdown]
# Exactly (to 12 decimals): each of the 72 heads is the formula you wired by hand, with
# learned numbers in the matrices.

# %% [markdown]
# ## 4. Which heads send bank to its topic word?
#
# Nobody wired these heads. Does any of them do what our wired head did, sending bank's
# attention to the topic word?
#
# **Predict.** Over all 72 heads, what is the largest share that bank gives "river"? And
# on average over the heads, more or less than an even split (1/5 = 0.2)?

# %%
from attention_workshop.real.analysis.head_search import heads_toward

for result, topic in ((river, "river"), (money, "money")):
    b, t = result.tokens.index("bank"), result.tokens.index(topic)
    top = heads_toward(result.attentions, b, t, 3)  # [(layer, head, weight)], strongest first
    print(f"bank -> {topic}:", ", ".join(f"L{lay} H{h} = {w:.3f}" for lay, h, w in top),
          f"| mean over heads {result.attentions[:, :, b, t].mean():.3f}")

# %%
from attention_workshop.figures.encoder import layer_by_head

b = river.tokens.index("bank")  # 3 in both sentences; the topic word is token 2 in both
layer_by_head([('"bank" -> "river"', river.attentions[:, :, b, river.tokens.index("river")]),
               ('"bank" -> "money"', money.attentions[:, :, b, money.tokens.index("money")])],
              "bank's weight on its topic word, in every layer (down) and head (across)", None)

# %% [markdown]
# A few heads send bank almost entirely to its topic word, and most heads barely look at
# it: the mean is below an even split (cross-check: results.log [S7] lines 1-5):
#
# ```text
# [S7] which heads send "bank" to its topic word (layers and heads count from 0)
#   bank -> river in "the river bank": L0 H2 = 0.999, L0 H4 = 0.788, L1 H9 = 0.736
#     mean over all 72 heads: 0.129 (even spread over 5 tokens: 0.200)
#   bank -> money in "the money bank": L0 H2 = 0.996, L2 H11 = 0.632, L1 H9 = 0.626
#     mean over all 72 heads: 0.105 (even spread over 5 tokens: 0.200)
# ```
#
# But is L0 H2 looking for a topic? Look at its whole table next to L0 H4's:

# %%
from attention_workshop.figures.toy import weight_grid

weight_grid([(f"layer 0, head {h}", river.tokens, river.attentions[0, h]) for h in (2, 4)],
            f'Two heads of layer 0 on "{SENT_RIVER}" (row = looking token)', None)

# %% [markdown]
# L0 H2 sends *every* token to the token just before it: a previous-token head. It found
# river only because river happens to stand right before bank. L0 H4's table has no such
# diagonal: bank's row alone points at river (cross-check: results.log [S7] lines 6-19):
#
# ```text
#   L0 H2 on "the river bank" (previous-token head: every word looks at the word before it):
#               [CLS]     the   river    bank   [SEP]
#     [CLS]     1.000   0.000   0.000   0.000   0.000
#     the       1.000   0.000   0.000   0.000   0.000
#     river     0.000   1.000   0.000   0.000   0.000
#     bank      0.000   0.000   0.999   0.001   0.000
#     [SEP]     0.000   0.000   0.000   0.997   0.003
#   L0 H4 on "the river bank" (looks by content, not by position):
#               [CLS]     the   river    bank   [SEP]
#     [CLS]     0.710   0.088   0.011   0.001   0.191
#     the       0.289   0.185   0.047   0.023   0.456
#     river     0.171   0.135   0.057   0.367   0.271
#     bank      0.069   0.032   0.788   0.007   0.104
#     [SEP]     0.251   0.121   0.074   0.063   0.491
# ```
#
# **Predict.** Move river behind bank: "a bank by the river". Which of the two heads
# still sends bank to river?

# %%
moved = model.run("a bank by the river")
b, r = moved.tokens.index("bank"), moved.tokens.index("river")
for h in (2, 4):
    w = moved.attentions[0, h, b]
    print(f"L0 H{h}: bank -> river {w[r]:.3f}; bank's largest share goes to "
          f"{moved.tokens[int(w.argmax())]!r} ({w.max():.3f})")

# %% [markdown]
# L0 H2 keeps looking one step back (now at "a"); L0 H4 follows river to its new place.
# To tell a head that reads content from one that counts positions, move the words.
#
# ### Your own words
#
# Write any sentence, then name the word that looks and the word it might look at. The
# cell lists the heads where the first gives the second the most weight. Layers and heads
# count from 0, as in `attention-workshop real SENTENCE --layer L --head H`.

# %%
sentence = "she sat on the bank of the river and watched the water"
looking, looked_at = "bank", "river"  # then try "water", or a sentence of your own

mine = model.run(sentence)
print("tokens:", " ".join(mine.tokens))
if looking in mine.tokens and looked_at in mine.tokens:
    i, j = mine.tokens.index(looking), mine.tokens.index(looked_at)
    for lay, h, w in heads_toward(mine.attentions, i, j, 5):
        print(f"  layer {lay}, head {h}: {looking} -> {looked_at} {w:.3f} "
              f"(its largest share: {mine.tokens[int(mine.attentions[lay, h, i].argmax())]!r})")
    print(f"  mean over all heads: {mine.attentions[:, :, i, j].mean():.3f} "
          f"(even split over {len(mine.tokens)} tokens: {1 / len(mine.tokens):.3f})")
else:
    print("pick two words that are whole tokens above (a long word may be split into pieces)")

# %% [markdown]
# Every head of one layer at once, as lines between the tokens: pick a layer, switch heads
# on and off, hover a token to see where it looks. (The view runs in your browser; a code
# host's preview of this notebook may show it as a blank frame.)

# %%
from html import escape

from IPython.display import HTML

from attention_workshop.figures.head_view import head_view_html

page = head_view_html(f'"{sentence}"', mine.tokens, mine.attentions, 0)
height = 240 + 28 * len(mine.tokens)  # pixels: the page's header, then a row per token
HTML(f'<div><iframe srcdoc="{escape(page)}" width="100%" height="{height}" style="border:0">'
     "</iframe></div>")

# %% [markdown]
# ## 5. Bank's vector, layer by layer
#
# In our toy head, attention gave bank two different outputs in the two sentences. Does
# the real model do the same? Compare bank's vector in the two sentences with the cosine
# similarity (1 = pointing the same way), after each layer.
#
# **Predict.** Before the first layer the two vectors are identical (cosine 1). After the
# layers, will the cosine drop a little, a lot, or stay at 1?

# %%
def cosine(a, b):  # [d], [d] -> float: 1 when a and b point the same way
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


b = river.tokens.index("bank")
print(f"embeddings: cosine {cosine(river.hidden_states[0, b], money.hidden_states[0, b]):.3f}")
for layer in range(cfg.n_layer):  # hidden_states[0] is the input; [layer + 1] its output
    after = cosine(river.hidden_states[layer + 1, b], money.hidden_states[layer + 1, b])
    print(f"after layer {layer}: cosine {after:.3f}")

# %% [markdown]
# From the first layer on, bank's vector depends on its sentence: the cosine drops to about
# 0.9 and stays there (cross-check: results.log [S8] lines 1-9):
#
# ```text
# [S8] bank's vector, river sentence vs money sentence: cosine similarity
#   lookup row (word embedding 2924): the same row in both -> cosine 1.000
#   embeddings (+ position 3, type 0, layer norm): cosine 1.000
#   after layer 0: cosine 0.912
#   after layer 1: cosine 0.925
#   after layer 2: cosine 0.932
#   after layer 3: cosine 0.943
#   after layer 4: cosine 0.954
#   after layer 5: cosine 0.872
# ```

# %% [markdown]
# ## 6. [S5] again, on real queries and keys
#
# Module 2 measured, on random vectors, that scores grow like sqrt(d_k) and that dividing
# by it keeps softmax from turning winner-take-all. Do a trained model's queries and keys
# behave the same? Per layer, take both sentences' 12 heads x 5 query tokens and measure
# the spread of the raw scores and the average top share, without and with the division.
#
# **Predict.** Random vectors with d = 32 would spread by about sqrt(32) = 5.66. Will the
# real scores spread more or less?

# %%
queries = np.stack([river.queries, money.queries], axis=1)  # [6, 2, 12, 5, 32]
keys = np.stack([river.keys, money.keys], axis=1)
scores = queries @ np.swapaxes(keys, -1, -2)  # [6, 2, 12, 5, 5], not yet divided
for layer, s in enumerate(scores):
    unscaled = softmax(s).max(axis=-1).mean()
    scaled = softmax(s / np.sqrt(cfg.d_head)).max(axis=-1).mean()
    print(f"layer {layer}: std {s.std():6.2f} | average top share: unscaled {unscaled:.3f}, "
          f"scaled {scaled:.3f}")

# %% [markdown]
# Learned scores spread more widely than random ones (7 to 20 instead of 5.66): training
# makes heads decisive on purpose. The division still pulls every layer's top share down
# from near 1, leaving room to blend (cross-check: results.log [S9] lines 1-10):
#
# ```text
# [S9] [S5] again, on the model's real queries and keys (d_k = 32)
#   per layer: 2 sentences x 12 heads x 5 query tokens = 120 rows of 5 keys (random [S5]: 2000 rows of 8)
#   softmax(q.k / sqrt(32)) is the model's own attention weights: True
#   layer 0: dot-product std =  20.04  (sqrt(d) =  5.66) | avg top weight: unscaled = 0.932, scaled = 0.609
#   layer 1: dot-product std =  13.50  (sqrt(d) =  5.66) | avg top weight: unscaled = 0.974, scaled = 0.803
#   layer 2: dot-product std =  12.61  (sqrt(d) =  5.66) | avg top weight: unscaled = 0.969, scaled = 0.796
#   layer 3: dot-product std =  10.08  (sqrt(d) =  5.66) | avg top weight: unscaled = 0.965, scaled = 0.752
#   layer 4: dot-product std =   9.84  (sqrt(d) =  5.66) | avg top weight: unscaled = 0.973, scaled = 0.778
#   layer 5: dot-product std =   7.17  (sqrt(d) =  5.66) | avg top weight: unscaled = 0.942, scaled = 0.576
#   all layers: avg top weight: unscaled = 0.959, scaled = 0.719
# ```

# %% [markdown]
# ## Quiz
#
# Module 3's questions, from `attention-workshop quiz 3` (it runs MiniLM to compute its
# answers):

# %%
from attention_workshop.quiz import load
from attention_workshop.quiz.session import graded, question_lines

title, questions = load("3")
print(title)
for n, question in enumerate(questions, 1):
    print()
    print("\n".join(question_lines(n, len(questions), question)))

# %% [markdown]
# Type your answers between the quotes (a number such as `72`, or a letter), then run the
# cell after. An answer left empty shows the right one.

# %%
answers = {1: "", 2: "", 3: "", 4: "", 5: "", 6: "", 7: ""}

# %% tags=["answers"]
got, total = graded([("3", title, questions)],
                    {("3", n): a for n, a in answers.items() if a.strip()})
