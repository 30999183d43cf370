# %% [markdown]
# # Module 2: queries, keys, and the square root of d_k
#
# Module 1's attention left two defects in plain view: every word kept its largest share
# for itself, and every score table was symmetric. Both come from one row doing two jobs,
# saying what a word *wants* and what it *offers*. Here each word gets a separate vector
# for each job, through two small matrices wired by hand, so every number stays readable.
# Then a random experiment explains the one constant in the formula, the division by
# sqrt(d_k).
#
# Run the cells in order; at each **Predict**, commit to a guess first. Section 6 has
# sliders on the two matrices (they need `ipywidgets`; without it, a cell shows the same
# pictures for a wiring you type).

# %%
# %matplotlib inline
import numpy as np
from IPython.display import display

from attention_workshop.attention import (
    W_K_WIRED,
    W_Q_WIRED,
    scaled_dot_product_attention,
    simple_attention,
    softmax,
    wired_attention,
)
from attention_workshop.embeddings import AXES, SENT_MONEY, SENT_RIVER, embed

np.set_printoptions(precision=3, suppress=True)  # three decimals, as the log prints them
CHANNELS = ("topic", "place")  # the wired head's two query/key channels
X_river, X_money = embed(SENT_RIVER), embed(SENT_MONEY)  # [3, 4] each

# %% [markdown]
# ## 1. Two matrices: what a word asks for, what it offers
#
# A query is the word's row times `W_Q`; a key is the row times `W_K`. Each matrix has one
# row per axis and one column per channel: the entry in row "place", column "topic" says
# how much of a word's place-ness turns into a question about topic.

# %%
for name, w in (("W_Q (asks)", W_Q_WIRED), ("W_K (offers)", W_K_WIRED)):
    print(f"{name:<13} {CHANNELS[0]:>6} {CHANNELS[1]:>6}")
    for axis, row in zip(AXES, w, strict=True):
        print(f"  {axis:<11} {row[0]:6.1f} {row[1]:6.1f}")

# %% [markdown]
# Read the non-zero entries. In `W_Q`: a place word asks for topic words (gain 2.0), and
# a filler word asks for places (1.5). In `W_K`: water and money both advertise "I carry a
# topic", and place-ness advertises itself on the place channel. What a word asks for and what it
# offers now come from different entries, so a word can look for something it lacks.
#
# **Predict.** Bank's row is water 0.3, money 0.3, place 0.9, filler 0. What is its query
# (two numbers: topic, place)? And its key?

# %%
Q, K = X_river @ W_Q_WIRED, X_river @ W_K_WIRED  # [3, 2] each
for word, q, k in zip(SENT_RIVER.split(), Q, K, strict=True):
    print(f"{word:<6} q = {q}   k = {k}")

# %% [markdown]
# Bank asks loudly for a topic (1.8 = 0.9 of place x 2.0), and offers some topic
# (0.3 + 0.3 = 0.6, from its water and its money) and a lot of place (0.9). A key is built
# axis by axis, each axis sending its value through its own row of the matrix; river's,
# term by term:

# %%
for axis, value, row in zip(AXES, X_river[1], W_K_WIRED, strict=True):
    print(f"{axis:<7} {value:.1f} x {row} = {value * row}")
print(f"{'river key':>20} = {X_river[1] @ W_K_WIRED}")

# %% [markdown]
# The same queries and keys in the log (cross-check: results.log lines 53-57):
#
# ```text
# [S4] Module 2: queries and keys, wired by hand (d_k = 2)
#   queries and keys for "the river bank" (2 channels: topic, place):
#     the     q = [ 0.00,  1.50]   k = [ 0.00,  0.00]
#     river   q = [ 0.60,  0.00]   k = [ 0.90,  0.30]
#     bank    q = [ 1.80,  0.00]   k = [ 0.60,  0.90]
# ```

# %% [markdown]
# ## 2. Queries meet keys
#
# The score of word i for word j is now query i against key j: `Q @ K.T`.
#
# **Predict.** Is the table still symmetric? In bank's row, which word scores highest now:
# still bank itself?

# %%
scores = Q @ K.T  # [3, 3]: row = asking word, column = offering word
print(scores)
print("symmetric?", np.array_equal(scores, scores.T))
print(f"bank -> river {scores[2, 1]:.3f}, river -> bank {scores[1, 2]:.3f}")

# %% [markdown]
# Both defects are gone. Bank's topic question meets river's topic badge: 1.8 x 0.9 =
# 1.620, larger than bank's score for itself (1.080). River asks only a little about
# topic, so its interest in bank is small (0.360): the table is lopsided, as language is
# (cross-check: results.log lines 58-63):
#
# ```text
#   score matrix Q @ K.T:
#                 the   river    bank
#     the       0.000   0.450   1.350
#     river     0.000   0.540   0.360
#     bank      0.000   1.620   1.080
#   symmetric? False  (bank->river = 1.620, river->bank = 0.360)
# ```

# %% [markdown]
# ## 3. Divide by sqrt(d_k), then softmax
#
# Before softmax the scores are divided by the square root of d_k, the length of a query
# (here 2). Section 7 measures why. For now, just apply it.
#
# **Predict.** With scores 0.000, 1.620, 1.080 divided by sqrt(2), what share does bank
# give river: about a third, a half, or two thirds?

# %%
d_k = Q.shape[1]
wired = softmax(scores / np.sqrt(d_k))  # [3, 3]
_, raw = simple_attention(X_river)
print(wired)
print("bank's row, raw -> wired:", raw[2], "->", wired[2])
print("'the's row, raw -> wired:", raw[0], "->", wired[0])

# %%
from attention_workshop.figures.toy import weight_grid

words = SENT_RIVER.split()
weight_grid([("simple attention: softmax(X @ X.T)", words, raw),
             ("wired head: softmax(Q @ K.T / sqrt(2))", words, wired)],
            f'"{SENT_RIVER}": raw weights against wired weights', None)

# %% [markdown]
# Bank now takes half of its update from river (0.500) and keeps a third for itself; "the",
# whose query asks for places, spends over half of its attention on bank. Four non-zero
# numbers in each matrix changed both behaviours (cross-check: results.log lines 64-71):
#
# ```text
#   weights after dividing by sqrt(2) and softmaxing each row:
#                 the   river    bank
#     the       0.201   0.276   0.522
#     river     0.266   0.390   0.344
#     bank      0.159   0.500   0.341
#   bank's row,  raw vs wired: [0.185, 0.317, 0.498] -> [0.159, 0.500, 0.341]
#   'the's row,  raw vs wired: [0.576, 0.212, 0.212] -> [0.201, 0.276, 0.522]
#   bank's largest share: raw -> 'bank' (0.498), wired -> 'river' (0.500)
# ```

# %% [markdown]
# ## 4. Blend, and bank's three lives
#
# What does each word hand over once it is chosen? In a trained model, a third matrix
# `W_V` makes a *value* vector for that. Our head keeps the raw rows as values (W_V is the
# identity), so the outputs stay on the named axes and can be read.
#
# **Predict.** Module 1 left bank in "the river bank" at water 0.435, money 0.149. With
# the new recipe, does water go up or down, and by how much?

# %%
out = wired @ X_river  # [3, 4]: the blend, values = the rows themselves
simple_out, _ = simple_attention(X_river)
for name, v in (("lookup row", X_river[2]), ("simple attention", simple_out[2]),
                ("wired head", out[2])):
    print(f"{name:<17} {v}   water to money {v[0] / v[1]:.1f} to 1")

# %%
from attention_workshop.figures.toy import three_lives

lives = [("lookup row", X_river[2]), ("simple attention", simple_out[2]),
         ("wired head", out[2])]
three_lives("bank", SENT_RIVER, AXES, lives, None)

# %% [markdown]
# Balanced, then leaning, then decided: from 1 to 1, to about 3 to 1, to more than 5 to 1
# in favour of water (cross-check: results.log lines 72-74):
#
# ```text
#   bank's output, wired head, in "the river bank": water=0.552  money=0.102  place=0.457  filler=0.159
#   water to money: lookup 1.0 to 1, simple 2.9 to 1, wired 5.4 to 1
#   bank's output, wired head, in "the money bank": water=0.102  money=0.552  place=0.357  filler=0.159
# ```

# %% [markdown]
# ## 5. One formula
#
# Everything above is the formula of every transformer paper,
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V,$$
#
# and the package writes it once, as `scaled_dot_product_attention(q, k, v)`.
# `wired_attention` is nothing but that function fed our Q, K and V = X:

# %%
by_formula, formula_weights = scaled_dot_product_attention(Q, K, X_river)
head_out, head_weights, _ = wired_attention(X_river)
print("same weights as our steps?", np.allclose(formula_weights, wired),
      "| same as wired_attention?", np.allclose(formula_weights, head_weights))
print("same outputs?", np.allclose(by_formula, out), np.allclose(head_out, out))

# %% [markdown]
# ## 6. Rewire it yourself
#
# Each slider is one entry of `W_Q` or `W_K` (rows: the four axes; the two columns: topic,
# place). Moving one redraws the weights of both sentences and bank's three lives. Things
# to try: set W_Q's place -> topic entry to 0 (bank stops asking about topic); give W_K's
# place row a topic entry (places start advertising topic); make filler ask for topic.
#
# This cell defines what is drawn for any wiring:

# %%
def redraw(w_q, w_k):  # [4, 2], [4, 2]: a wiring -> both sentences' weights, bank's 3 lives
    panels = [(f'"{s}"', s.split(), wired_attention(embed(s), w_q, w_k)[1])
              for s in (SENT_RIVER, SENT_MONEY)]
    display(weight_grid(panels, "wired head weights under this wiring", None))
    bank = wired_attention(X_river, w_q, w_k)[0][2]
    display(three_lives("bank", SENT_RIVER, AXES, [*lives[:2], ("this wiring", bank)], None))


# %% [markdown]
# The sliders (if `ipywidgets` is missing, this cell says so and the next one still shows a
# wiring you type):

# %%
try:
    import ipywidgets as widgets
except ImportError:
    widgets = None
    print("ipywidgets is not installed (pip install ipywidgets): edit the next cell instead")


def slider_grid(name, w):  # -> (a widget: the matrix as a grid of sliders, {key: slider})
    sliders = {f"{name}{i}{j}": widgets.FloatSlider(
        value=w[i, j], min=-1.0, max=3.0, step=0.1, description=f"{AXES[i]} -> {CHANNELS[j]}",
        style={"description_width": "110px"}) for i in range(4) for j in range(2)}
    rows = [widgets.HBox([sliders[f"{name}{i}0"], sliders[f"{name}{i}1"]]) for i in range(4)]
    return widgets.VBox([widgets.Label(f"{name} (rows: axes, columns: channels)"), *rows]), sliders


def from_sliders(**values):  # slider values by key -> the two matrices, redrawn
    w_q, w_k = (np.array([[values[f"{m}{i}{j}"] for j in range(2)] for i in range(4)])
                for m in ("W_Q", "W_K"))
    redraw(w_q, w_k)


if widgets is not None:
    (grid_q, q_sliders), (grid_k, k_sliders) = (slider_grid("W_Q", W_Q_WIRED),
                                                slider_grid("W_K", W_K_WIRED))
    display(grid_q, grid_k, widgets.interactive_output(from_sliders, q_sliders | k_sliders))

# %% [markdown]
# Without sliders, change the numbers here and run the cell. As it stands, the place row
# of W_Q is all zeros, so place words ask for nothing.
#
# **Predict.** Bank's query becomes [0, 0]. What are its three scores, its three shares,
# and which earlier attempt does its output turn into?

# %%
w_q = W_Q_WIRED.copy()
w_q[2] = [0.0, 0.0]  # place words ask for nothing
print("bank's weights under this wiring:", wired_attention(X_river, w_q, W_K_WIRED)[1][2])
redraw(w_q, W_K_WIRED)

# %% [markdown]
# A query of zeros scores 0 against every key, and softmax of equal scores is an equal
# split: bank's output is exactly the plain average of the sentence that Module 1 ruled
# out, [0.40, 0.10, 0.40, 0.33]. Without a question, there is no preference.

# %% [markdown]
# ## 7. Why divide by sqrt(d_k)?
#
# A dot product of two length-d vectors adds up d products. When the entries are random,
# some products cancel and some add up, so the total grows, but only like sqrt(d) (a
# random walk of d steps). Real heads use d_k = 32 or 64, so their raw scores would be
# several times larger than in a 2-channel head, and Module 0's "x 5" demo showed what
# larger scores do to softmax.
#
# The experiment: for each width d, 2000 rows of one random query against 8 random keys
# (entries drawn from a standard normal), with a fixed seed so the numbers are the same on
# every machine. Per width, measure the spread (standard deviation) of the scores and the
# average top softmax share of a row, with and without the division.
#
# **Predict.** Without the division, what happens to the average top share as d grows from
# 4 to 256? With it?

# %%
rng = np.random.default_rng(0)  # the seed of the log's [S5]
s5 = {}
for d in (4, 16, 64, 256):
    draws = rng.standard_normal((2000, 1 + 8, d))  # per row: its query, then its 8 keys
    q, keys = draws[:, 0], draws[:, 1:]  # [2000, d], [2000, 8, d]
    dots = np.einsum("rkd,rd->rk", keys, q)  # [2000, 8]: each row's 8 scores
    unscaled = softmax(dots).max(axis=1).mean()
    scaled = softmax(dots / np.sqrt(d)).max(axis=1).mean()
    s5[d] = (dots.std(), unscaled, scaled)
    print(f"d = {d:3d}: std {dots.std():6.2f} (sqrt(d) {np.sqrt(d):5.2f}) | average top share: "
          f"unscaled {unscaled:.3f}, scaled {scaled:.3f}")

# %%
import matplotlib.pyplot as plt

dims = list(s5)
fig, ax = plt.subplots(figsize=(6.5, 3.6))
for column, color, label in ((1, "#c0392b", "unscaled: softmax(q . k)"),
                             (2, "#2468b4", "scaled: softmax(q . k / sqrt(d))")):
    ax.plot(dims, [s5[d][column] for d in dims], "o-", color=color, label=label)
ax.axhline(1.0, color="#7f7f7f", ls="--", lw=1)
ax.set_xscale("log", base=2)
ax.set_xticks(dims, [str(d) for d in dims])
ax.set(xlabel="d (length of a query and a key)", ylabel="average top share (8 keys)",
       ylim=(0, 1.05), title="Without the division, one key takes nearly everything")
ax.legend(loc="center right")
plt.show()

# %% [markdown]
# The spread follows sqrt(d) almost exactly. Without the division the top share climbs
# toward 1 (red): one key takes nearly everything and the blend stops blending. Dividing
# by sqrt(d), the very factor the scores grew by, keeps it flat (blue) at every width. The
# log's table holds the same numbers (cross-check: results.log lines 75-80):
#
# ```text
# [S5] why scores are divided by sqrt(d_k)
#   random q, k entries drawn from N(0,1); 8 keys per row; 2000 rows per size
#   d =   4: dot-product std =   1.97  (sqrt(d) =  2.00) | avg top weight: unscaled = 0.522, scaled = 0.338
#   d =  16: dot-product std =   4.02  (sqrt(d) =  4.00) | avg top weight: unscaled = 0.750, scaled = 0.356
#   d =  64: dot-product std =   8.01  (sqrt(d) =  8.00) | avg top weight: unscaled = 0.879, scaled = 0.362
#   d = 256: dot-product std =  16.03  (sqrt(d) = 16.00) | avg top weight: unscaled = 0.941, scaled = 0.366
# ```
#
# Module 3 finds this exact formula, with d_k = 32, inside a real pretrained model.

# %% [markdown]
# ## Quiz
#
# Module 2's questions, from `attention-workshop quiz 2`:

# %%
from attention_workshop.quiz import load
from attention_workshop.quiz.session import graded, question_lines

title, questions = load("2")
print(title)
for n, question in enumerate(questions, 1):
    print()
    print("\n".join(question_lines(n, len(questions), question)))

# %% [markdown]
# Type your answers between the quotes (a number such as `1.8`, or a letter), then run the
# cell after. An answer left empty shows the right one.

# %%
answers = {1: "", 2: "", 3: "", 4: "", 5: "", 6: "", 7: ""}

# %% tags=["answers"]
got, total = graded([("2", title, questions)],
                    {("2", n): a for n, a in answers.items() if a.strip()})
