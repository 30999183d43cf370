# %% [markdown]
# # Module 1: the simplest attention that works
#
# Module 0 ended on a problem: the table gives `bank` one row, whatever the sentence. Here
# we repair it with nothing learned at all, only the two tools from Module 0: a dot product
# for each (word, word) couple, softmax to turn each word's scores into shares, and then
# each word rebuilt as a blend of the sentence, mixed by its own shares.
#
# Run the cells in order. At each **Predict**, commit to a guess before you run the next
# cell. Each "cross-check" quotes the lines of `results.log` that hold the same numbers;
# `attention-workshop check-lesson` keeps the quotes honest.

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

from attention_workshop.attention import simple_attention, softmax
from attention_workshop.embeddings import AXES, EMBED, SENT_MONEY, SENT_RIVER, embed

np.set_printoptions(precision=3, suppress=True)  # three decimals, as the log prints them

# %% [markdown]
# ## 1. The input cannot tell the two banks apart
#
# Stack each sentence's rows into a matrix X (one row per word, one column per axis) and
# compare bank's row, the third one (index 2, since rows count from 0):

# %%
X_river, X_money = embed(SENT_RIVER), embed(SENT_MONEY)  # [3, 4] each
print(X_river, "\n")
print(X_money, "\n")
print("bank's row identical in both sentences?", np.array_equal(X_river[2], X_money[2]))

# %% [markdown]
# Any computation that looks at bank's row alone gives the same answer in both
# sentences, however clever it is: same input, same output. To tell the banks apart, bank's
# new vector has to be computed from the *other* words too. The log opens Module 1 with
# this check (cross-check: results.log lines 27-28):
#
# ```text
# [S3] Module 1: the simplest attention (scores X @ X.T, row softmax, blend)
#   input check: 'bank' row identical in both sentences -> True
# ```

# %% [markdown]
# ## 2. A first try: average the whole sentence
#
# The simplest way to let every word see the others: replace each word by the plain
# average of all the rows.
#
# **Predict.** For "the river bank", will the average lean towards water or towards money?
# And what will "the" and "river" turn into?

# %%
for sentence, X in ((SENT_RIVER, X_river), (SENT_MONEY, X_money)):
    average = X.mean(axis=0)
    print(f'"{sentence}": average = {average.round(2)}')
    print("  every word becomes:", np.tile(average, (len(X), 1)).round(2).tolist())

# %% [markdown]
# Half of it works: the river average leans to water (0.40 against 0.10), the money
# average to money. But every word of a sentence receives the same vector, so the words
# can no longer be told apart, and the empty word "the" weighs exactly as much as "river".
# What we need is an average whose weights depend on *who is asking* and on *how relevant*
# each word is. The log records the failed attempt (cross-check: results.log lines 50-52):
#
# ```text
#   equal average of all rows, "the river bank": [0.40, 0.10, 0.40, 0.33]
#   equal average of all rows, "the money bank": [0.10, 0.40, 0.33, 0.33]
#   an equal average hands every word the same vector: the words become indistinguishable
# ```

# %% [markdown]
# ## 3. Step one: score every pair
#
# Relevance, for now, is Module 0's similarity meter. `X @ X.T` holds every dot product:
# row i is the asking word, column j the word it looks at.
#
# **Predict.** Is "river looking at bank" the same number as "bank looking at river"?

# %%
S = X_river @ X_river.T  # [3, 3]
print(S)
print("symmetric?", np.array_equal(S, S.T))

# %% [markdown]
# Yes, always: a dot product does not care which row comes first. Bank's row holds the
# three numbers from Module 0 (0.000, 0.540, 0.990), and the diagonal is the largest entry
# of each row (cross-check: results.log lines 29-34):
#
# ```text
#   score matrix S = X @ X.T for "the river bank":
#                 the   river    bank
#     the       1.000   0.000   0.000
#     river     0.000   0.900   0.540
#     bank      0.000   0.540   0.990
#   symmetric? True (S[i,j] always equals S[j,i] here)
# ```

# %% [markdown]
# ## 4. Step two: each row becomes shares
#
# Softmax runs along each row separately, so each word gets its own set of shares summing
# to 1: its recipe for rebuilding itself.
#
# **Predict.** You already computed bank's river-sentence row in Module 0. What is it? And
# in "the money bank", will bank give "money" more or less than it gave "river"?

# %%
W_river, W_money = softmax(X_river @ X_river.T), softmax(X_money @ X_money.T)  # [3, 3] each
print(W_river, "\n")
print(W_money)
print("each row sums to:", W_river.sum(axis=1))

# %%
from attention_workshop.figures.toy import weight_grid

weight_grid([(f'"{s}"', s.split(), W) for s, W in ((SENT_RIVER, W_river),
                                                   (SENT_MONEY, W_money))],
            "Simple attention: each row is one word's recipe", None)

# %% [markdown]
# Bank's recipes differ between the sentences (0.317 from "river", 0.280 from "money")
# because the scores depend on which words are present. That is the whole trick. But look at
# the darkest cell of every row: it is always on the diagonal. Each word still keeps the
# biggest share for itself. The same tables in the log (cross-check: results.log lines
# 35-44):
#
# ```text
#   attention weights (each row softmaxed) for "the river bank":
#                 the   river    bank
#     the       0.576   0.212   0.212
#     river     0.193   0.475   0.332
#     bank      0.185   0.317   0.498
#   attention weights for "the money bank":
#                 the   money    bank
#     the       0.576   0.212   0.212
#     money     0.213   0.483   0.305
#     bank      0.195   0.280   0.525
# ```

# %% [markdown]
# ## 5. Step three: blend
#
# Each word's new vector is its recipe applied to the rows of X: scale every row by the
# word's share for it, then add the scaled rows up. For bank in "the river bank", one row
# at a time:
#
# **Predict.** Bank arrives balanced, 0.3 water and 0.3 money. After the blend, which of
# the two is larger, and by roughly how much?

# %%
from attention_workshop.explore import slow_motion


def vec(v, decimals=3):  # [0.9, 0, 0.3, 0] -> "(0.900, 0.000, 0.300, 0.000)"
    return "(" + ", ".join(f"{a:.{decimals}f}" for a in v) + ")"


recipe = W_river[2]  # bank's shares for the, river, bank
shares = recipe.round(3)  # as printed, so that every product below is true on paper
scaled, _ = slow_motion(shares, X_river)  # [3, 4]: each row of X times its printed share
scaled = scaled.round(3)  # each product as printed
print(f"axes: {', '.join(AXES)}")
for share, word, x, row in zip(shares, SENT_RIVER.split(), X_river, scaled, strict=True):
    print(f"{share:.3f} x {word:<5} {vec(x, 1)} = {vec(row)}")
print(f"{'sum of the rows':>32} = {vec(scaled.sum(axis=0))}")
_, z_bank = slow_motion(recipe, X_river)  # [4]: the same blend from the unrounded shares
print(f"{'at full precision':>32} = {vec(z_bank)}")

# %% [markdown]
# Water wins, 0.435 to 0.149: river's scaled row brings 0.317 x 0.9 = 0.285 of water, while
# nobody but bank itself brings money, and bank kept only half of itself. The filler value
# 0.185 is exactly the share "the" received: its row has nothing else to give. (The printed
# rows add up to 0.434 of water; the shares behind the printed ones carry more digits, and
# the blend at full precision, the one the log prints, is 0.435.)
#
# One matrix product does all three words at once, `W @ X`, and that is the last line of
# `simple_attention`. Check that the package's function gives the same as our three steps:

# %%
out_river, weights = simple_attention(X_river)
out_money, _ = simple_attention(X_money)
print("same weights as our step two?", np.allclose(weights, W_river))
print("same bank output as our blend?", np.allclose(out_river[2], z_bank))
for sentence, out in ((SENT_RIVER, out_river), (SENT_MONEY, out_money)):
    print(f'bank in "{sentence}": water {out[2, 0]:.3f}, money {out[2, 1]:.3f}')

# %% [markdown]
# One row in, two meanings out: the same lookup row came out watery next to "river" and
# moneyed next to "money". On the water/money plane, bank's single lookup point splits in
# two, each pulled toward the topic word that was really there:

# %%
fig, ax = plt.subplots(figsize=(5.5, 5))
for word in ("the", "river", "money"):
    ax.scatter(*EMBED[word][:2], color="black")
    ax.annotate(word, EMBED[word][:2], xytext=(6, 6), textcoords="offset points")
ax.scatter(*EMBED["bank"][:2], s=120, color="#7f7f7f", label="bank's lookup row")
for sentence, out in ((SENT_RIVER, out_river), (SENT_MONEY, out_money)):
    ax.annotate("", xy=out[2, :2], xytext=EMBED["bank"][:2],
                arrowprops={"arrowstyle": "->", "color": "#c0392b"})
    ax.scatter(*out[2, :2], marker="D", color="#c0392b")
    ax.annotate(f'in "{sentence}"\n({out[2, 0]:.3f}, {out[2, 1]:.3f})', out[2, :2],
                xytext=(8, -10), textcoords="offset points", color="#c0392b")
ax.set(xlabel="water", ylabel="money", xlim=(-0.1, 1.1), ylim=(-0.1, 1.1), aspect="equal",
       title="bank after simple attention")
ax.legend(loc="upper right")
plt.show()

# %% [markdown]
# The log's version (cross-check: results.log lines 45-49):
#
# ```text
#   bank's output vector (water, money, place, filler):
#     in "the river bank": water=0.435  money=0.149  place=0.543  filler=0.185
#     in "the money bank": water=0.158  money=0.409  place=0.501  filler=0.195
#   water vs money, river sentence: 0.435 vs 0.149
#   water vs money, money sentence: 0.158 vs 0.409
# ```

# %% [markdown]
# ## 6. Your turn: any sentence
#
# `explore` runs this head (and Module 2's, which you meet next) on any sentence made of
# the table's words, and shows every intermediate table. Shown as a cell's last value, it
# draws itself as tables; the weights are shaded, darker for a larger share.

# %%
from attention_workshop.explore import explore

print("words in the table:", ", ".join(sorted(EMBED)))
explore(SENT_RIVER)

# %% [markdown]
# Change the sentence below and run the cell. Try a sentence where a word appears twice
# ("the bank by the bank"), or one with two topic words ("the boat at the bank of the
# river"). Which word does each word look at most in the raw head?

# %%
explore("the boat by the shore")

# %% [markdown]
# ## What is still missing
#
# Two facts from this notebook will not go away as long as scores are `X @ X.T`:
#
# 1. **Self-focus.** The diagonal wins every row: bank cannot give "river" more than it
#    keeps for itself.
# 2. **Symmetry.** River's interest in bank always equals bank's interest in river, yet
#    "river" tells us a lot about "bank" and not the other way round.
#
# Both come from one row playing two parts at once: what a word looks for and what it
# offers. Module 2 gives each word separate vectors for the two parts.

# %% [markdown]
# ## Quiz
#
# Module 1's questions, from `attention-workshop quiz 1`:

# %%
from attention_workshop.quiz import load
from attention_workshop.quiz.session import graded, question_lines

title, questions = load("1")
print(title)
for n, question in enumerate(questions, 1):
    print()
    print("\n".join(question_lines(n, len(questions), question)))

# %% [markdown]
# Type your answers between the quotes (a number such as `0.4`, or a letter), then run the
# cell after. An answer left empty shows the right one.

# %%
answers = {1: "", 2: "", 3: "", 4: "", 5: "", 6: "", 7: ""}

# %% tags=["answers"]
got, total = graded([("1", title, questions)],
                    {("1", n): a for n, a in answers.items() if a.strip()})
