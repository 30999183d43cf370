# %% [markdown]
# # Module 0: words as rows, the dot product, softmax
#
# Attention is built from three small tools: a table that turns each word into a row of
# numbers, the dot product that scores how alike two rows are, and softmax that turns a row
# of scores into shares. This notebook takes each one apart on a table small enough to
# check on paper.
#
# **How to use it.** Run the cells from top to bottom (Shift+Enter). When a cell is marked
# **Predict**, write your guess down before running the one after it: a guess you commit
# to is what makes the answer stick. The last section is Module 0's quiz.
#
# Every number here also stands in `results.log`, the file `attention-workshop run`
# writes. Each "cross-check" below quotes the log lines that hold the same numbers, and
# `attention-workshop check-lesson notebooks/00_embeddings.ipynb` proves the quotes still
# match the log.

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

from attention_workshop.attention import softmax
from attention_workshop.embeddings import AXES, EMBED, SENT_MONEY, SENT_RIVER, embed

np.set_printoptions(precision=3, suppress=True)  # three decimals, as the log prints them

# %% [markdown]
# ## 1. A word is a row on four named axes
#
# A model first looks every word up in a table, one row per word. Real tables have hundreds
# of unnamed columns; ours has four, and each one has a name you can read.

# %%
print("axes:", AXES)
for word in ("the", "river", "money", "bank"):
    print(f"{word:>6}", EMBED[word])

# %% [markdown]
# Read the rows as descriptions. `river` is mostly water and a bit of a place; `money` is
# mostly money; `the` carries no meaning at all, only the "filler" axis. `bank` is the
# interesting one: equally watery and moneyed (0.3 each), and strongly a place. Nothing in
# its row says which kind of bank it is.
#
# A sentence becomes a matrix by stacking its words' rows, one row per word:

# %%
X_river, X_money = embed(SENT_RIVER), embed(SENT_MONEY)
print(X_river.shape, "<- 3 words x 4 axes")
print(X_river)
print("bank's row in both sentences:", X_river[2], X_money[2])

# %% [markdown]
# The lookup only knows *which* word it is given, never the sentence around it, so bank
# gets the same row next to "river" as next to "money". The whole workshop is about fixing
# that. The same table, in the log (cross-check: results.log lines 1-8):
#
# ```text
# [S1] Module 0: the embedding table (one fixed row per word)
#   axes: water, money, place, filler
#               water   money   place  filler
#     the       0.000   0.000   0.000   1.000
#     river     0.900   0.000   0.300   0.000
#     money     0.000   0.900   0.100   0.000
#     bank      0.300   0.300   0.900   0.000
#   lookup asks only 'which word?': bank's row is [0.3, 0.3, 0.9, 0.0] in every sentence
# ```

# %% [markdown]
# ## 2. The dot product: a similarity meter
#
# Multiply two rows slot by slot and add the products. Slots where both rows are large add a
# lot; a slot where either row is zero adds nothing. So the total is large when two rows
# are large on the same axes.
#
# **Predict.** Apart from bank itself, which of `the`, `river`, `money` will score highest
# against bank? Roughly what number?

# %%
bank, river = EMBED["bank"], EMBED["river"]
products = bank * river  # slot by slot
print("slot by slot:", products, "-> sum =", round(products.sum(), 3))
print("bank @ river =", round(bank @ river, 3), "(the same, in one operation)")

# %%
for word in ("the", "river", "money", "bank"):
    print(f"bank . {word:<5} = {bank @ EMBED[word]:.3f}")

# %% [markdown]
# River wins (0.540) over money (0.360): bank's 0.9 of place meets river's 0.3 of place but
# only money's 0.1. `the` shares no axis with bank and scores exactly 0. And bank against
# itself scores highest of all: every slot is multiplied by itself, so every term is a
# square and nothing cancels.

# %%
print("bank . bank as a sum of squares:", " + ".join(f"{v}^2" for v in bank), "=",
      round(float((bank**2).sum()), 3))

# %% [markdown]
# The log measures the same thing (cross-check: results.log lines 9-15):
#
# ```text
# [S2] Module 0: the dot product as a similarity meter, then softmax
#   dot products of bank's row with each row (bigger = more alike):
#     bank . the   = 0.000
#     bank . river = 0.540
#     bank . money = 0.360
#     bank . bank  = 0.990
#   self-match is a sum of squares: bank . bank = 0.3^2 + 0.3^2 + 0.9^2 + 0.0^2 = 0.990
# ```

# %% [markdown]
# ## 3. Softmax: scores into shares
#
# Scores can be any size; to blend words we need shares that are positive and add up to 1.
# Softmax does it in two moves: raise e to each score (so every value is positive), then
# divide by the total (so they add up to 1).
#
# In "the river bank", bank's scores against the three words are one matrix product away:
# every row of X dotted with bank's row.
#
# **Predict.** The scores are 0.000, 0.540 and 0.990. The word `the` scored zero: will
# its share be zero too? Which share will be largest, and is it above or below one half?

# %%
scores = X_river @ bank  # [3]: bank against the, river, bank
by_hand = np.exp(scores) / np.exp(scores).sum()
print("scores:", scores)
print("by hand:", by_hand, " sum =", round(by_hand.sum(), 3))
print("softmax:", softmax(scores))

# %% [markdown]
# `the` keeps 0.185: e to the power 0 is 1, not 0, so softmax never hands out an exact
# zero. And bank's top share is its own, just under one half.
#
# The same for "the money bank", where money scores lower against bank than river did:

# %%
scores_money = X_money @ bank
print("scores:", scores_money, "-> softmax:", softmax(scores_money))

# %% [markdown]
# Both rows of shares, in the log (cross-check: results.log lines 16-19):
#
# ```text
#   bank's scores in "the money bank" (the, money, bank): [0.000, 0.360, 0.990]
#     softmax -> [0.195, 0.280, 0.525]  (sum = 1.000)
#   bank's scores in "the river bank" (the, river, bank): [0.000, 0.540, 0.990]
#     softmax -> [0.185, 0.317, 0.498]  (sum = 1.000)
# ```

# %% [markdown]
# ## 4. Bigger scores, sharper shares ("x 5")
#
# Softmax only cares about the *gaps* between scores. Multiply every score by 5 and the
# order stays the same, but the gaps grow five times.
#
# **Predict.** Bank's top share is 0.498 now. After multiplying the scores by 5, is it
# about 0.55, about 0.7, or about 0.9?

# %%
sharp = softmax(5 * scores)
print("5 x scores:", 5 * scores, "-> softmax:", sharp)
print(f"top share: {softmax(scores).max():.3f} -> {sharp.max():.3f}")

# %%
fig, ax = plt.subplots(figsize=(6, 3.2))
x = np.arange(3)
for shift, shares, label, color in ((-0.2, softmax(scores), "softmax(scores)", "#7f7f7f"),
                                    (0.2, sharp, "softmax(5 x scores)", "#c0392b")):
    ax.bar_label(ax.bar(x + shift, shares, 0.4, label=label, color=color), fmt="%.3f")
ax.set_xticks(x, SENT_RIVER.split())
ax.set(ylabel="share of bank's attention", ylim=(0, 1), title="Same order, sharper shares")
ax.legend()
plt.show()

# %% [markdown]
# Adding the same number to every score changes no gap, so it changes nothing. And because
# only gaps matter, the package's `softmax` subtracts each row's largest score before
# calling `exp`: the result is identical, but `exp` never sees a huge number. The naive
# formula overflows on scores in the thousands.

# %%
print("softmax(scores + 10) equals softmax(scores)?", np.allclose(softmax(scores + 10),
                                                                 softmax(scores)))
huge = scores * 10_000
with np.errstate(over="ignore", invalid="ignore"):  # we know: this is the overflow to show
    naive = np.exp(huge) / np.exp(huge).sum()
print("naive formula on scores x 10000:", naive)
print("package softmax on scores x 10000:", softmax(huge))

# %% [markdown]
# The log's version of this section (cross-check: results.log lines 20-23):
#
# ```text
#   x 5 demo: softmax([0.000, 2.700, 4.950]) -> [0.006, 0.095, 0.899]
#     top share 0.498 -> 0.899: bigger scores, sharper softmax
#   adding 10 to every score changes softmax? False (only differences matter)
#   scores x 10000 stay finite after softmax? True
# ```
#
# Keep the "x 5" effect in mind: in Module 2, scores grow by themselves when vectors get
# longer, and something has to undo it.

# %% [markdown]
# ## 5. Every word is most like itself
#
# Score every word against every word at once: `X @ X.T` is the table of all the dot
# products, one row per word.
#
# **Predict.** In each row of that table, which entry is the largest?

# %%
for sentence, X in ((SENT_RIVER, X_river), (SENT_MONEY, X_money)):
    S = X @ X.T  # [3, 3]: S[i, j] = word i's row . word j's row
    print(f'"{sentence}"')
    print(S)
    print("  largest entry of each row is at column:", S.argmax(axis=1), "(the diagonal)")

# %% [markdown]
# The diagonal wins every row. A row against itself is a sum of squares; another row can
# only beat it by being longer *and* pointing the same way, and no word in these sentences
# does. Module 1 will run into this fact head first. The log checks it for both sentences
# (cross-check: results.log lines 24-26):
#
# ```text
#   self-match fact: in each raw score row, is the word's own score the largest?
#     "the river bank": True (diagonal [1.000, 0.900, 0.990])
#     "the money bank": True (diagonal [1.000, 0.820, 0.990])
# ```

# %% [markdown]
# ## Quiz
#
# The questions come from the workshop's own quiz (`attention-workshop quiz 0`), and
# their answers are computed by the same code as the log.

# %%
from attention_workshop.quiz import load
from attention_workshop.quiz.session import graded, question_lines

title, questions = load("0")
print(title)
for n, question in enumerate(questions, 1):
    print()
    print("\n".join(question_lines(n, len(questions), question)))

# %% [markdown]
# Type your answers between the quotes (a number such as `0.5`, or a letter), then run the
# cell after. An answer left empty shows the right one.

# %%
answers = {1: "", 2: "", 3: "", 4: "", 5: "", 6: ""}

# %% tags=["answers"]
got, total = graded([("0", title, questions)],
                    {("0", n): a for n, a in answers.items() if a.strip()})
