# %% [markdown]
# # Module 6: attention learns
#
# Modules 2 to 5 show wirings that were already there: W_Q and W_K set by hand, then heads
# of pretrained models, finished. Where do such matrices come from? Here the workshop trains
# them itself, with its own backpropagation in NumPy (`attention_workshop.training`, proved
# equal to torch autograd by the tests): first the toy's two matrices, then Module 2's aside
# about sqrt(d_k) as a measurement, then a small transformer in which an induction head forms
# while you watch.
#
# Run the cells in order; at each **Predict**, commit to a guess first.

# %%
# %matplotlib inline
import numpy as np

from attention_workshop.attention import W_K_WIRED, W_Q_WIRED, softmax
from attention_workshop.embeddings import embed
from attention_workshop.figures import training as figures
from attention_workshop.modules import module6
from attention_workshop.report import Log
from attention_workshop.training import induction, transformer, wiring
from attention_workshop.training.attention_grad import softmax_backward

np.set_printoptions(precision=3, suppress=True)
log = Log()
result = module6.run(log, {})  # the whole module, as `attention-workshop run` runs it


def section(number):  # the log's lines of one section, as results.log holds them
    start = log.lines.index(next(x for x in log.lines if x.startswith(f"[S{number}]")))
    end = next((i for i in range(start + 1, len(log.lines)) if log.lines[i].startswith("[")),
               len(log.lines))
    print("\n".join(log.lines[start:end]))


# %% [markdown]
# ## 1. The one new piece of calculus: softmax, backwards
#
# Training needs, for every weight, how the loss changes when it moves (its gradient).
# Most steps are matrix products, whose gradients are other matrix products. The one
# step that is not is softmax: nudging one score moves every share in its row. If the
# loss changes by `dw` per unit of each weight `w`, it changes per unit of score `j` by
# `w_j (dw_j - sum_i dw_i w_i)`.
#
# **Predict.** Two scores with weights 0.5 and 0.5; the loss cares only about the first
# share (dw = [1, 0]). What are the two score gradients?

# %%
w = np.array([0.5, 0.5])
print(softmax_backward(np.array([1.0, 0.0]), w))
scores, h = np.array([0.0, 0.0]), 1e-6  # the same by nudging each score a little
print([(softmax(scores + h * np.eye(2)[j])[0] - softmax(scores - h * np.eye(2)[j])[0]) / (2 * h)
       for j in range(2)])

# %% [markdown]
# Raising the first score by a little raises its share by a quarter of that, and raising the
# second lowers it by the same: the two always sum to zero, because adding the same number
# to every score changes nothing. The tests compare every gradient of this package with
# torch's autograd (within 1e-10) and with nudges like this one.
#
# ## 2. The toy's wiring, learned
#
# The task: in each sentence, bank's output must lean toward the kind of bank the sentence
# is about. Its water and money numbers are read as two scores; the loss is the cross
# entropy of the right kind. The training sentences never contain river or money, so the
# lesson's two sentences are a test the training never saw (cross-check: results.log [S20]
# lines 1-9):
#
# ```text
# [S20] Module 6: the toy's W_Q and W_K learned by gradient descent (d_k = 2)
#   the task: bank's output vector must tell which kind of bank the sentence is about;
#   its water and money numbers are two scores, and the loss is the cross entropy of
#   the right kind (log 2 = 0.693 when it cannot tell)
#   water-kind topic words: water, stream, lake, fish
#   money-kind topic words: cash, loan, deposit, account
#   32 training sentences: each word in 'the ... bank', 'a ... bank', 'the bank by the ...', 'the bank of a ...'
#   start: entries N(0, 0.1^2), seed 0; plain gradient descent, step 1.0, 300 steps, on all sentences at once
#   loss: step 0 0.615, step 25 0.615, step 50 0.614, step 100 0.604, step 200 0.453, step 300 0.443
# ```
#
# The loss hardly moves for the first 100 steps: from a small random start every weight is
# near even, and the gradient is small until the head begins to prefer one word. Then it
# falls fast.
#
# **Predict.** Module 2 wired bank's query to ask for topic words. Which of bank's axes will
# the learned W_Q ask with?

# %%
section(20)

# %% [markdown]
# The learned W_Q asks with place-ness (bank's largest axis), and the learned W_K answers
# on water and money, and against place and filler: the hand wiring's idea, found by
# gradient descent, with larger numbers (the task rewards an ever sharper look). Only the
# product W_Q @ W_K.T sets the scores, so compare that.
#
# ## 3. Learned against wired, on sentences never seen

# %%
section(21)
figures.learned_wiring(result, None)

# %% [markdown]
# Bank's weight on river under the learned wiring is 0.992, where the hand wiring gave 0.500
# (cross-check: results.log [S21] lines 1-3):
#
# ```text
# [S21] learned against wired: bank's weights, and sentences never trained on
#   "the river bank", bank over (the, river, bank): learned [0.001, 0.992, 0.007] | wired [0.159, 0.500, 0.341]
#   "the money bank", bank over (the, money, bank): learned [0.000, 0.998, 0.002] | wired [0.159, 0.500, 0.341]
# ```
#
# ## 4. Why divide by sqrt(d_k): what happens in training
#
# Module 2 measured that without the division, scores at d_k = 256 pin softmax near 1. Here
# the same task is trained at d_k = 256 from four random starts, with and without it
# (cross-check: results.log [S22] lines 1-4):
#
# ```text
# [S22] the sqrt(d_k) aside measured: the same training at d_k = 256, with and without the division
#   starts: W_Q, W_K entries N(0, 1) (4 x 256), seeds 0-3, the same for both; step 1.0, 150 steps each
#   per start: rows pinned (top weight > 0.99), the gradient's size at the start, the loss and bank's weight on its topic word, start -> end
#   divided by sqrt(256):
# ```

# %%
section(22)

# %% [markdown]
# Divided, every start learns the same way. Unscaled, about half the rows start pinned, and
# what happens depends on where: seed 0's bank rows are pinned on words that carry no
# topic, its gradient (1.7e-08) is tens of thousands of times smaller than the other
# starts', and 150 steps leave it at log 2. The starts whose pinned rows happened to sit on the topic word only
# sharpen it. "Hard to train" means: at the mercy of the start.
#
# ## 5. An induction head forms
#
# A transformer of two layers with two heads each, no MLP, trained by Adam on sequences in
# which a stretch of 6 random tokens appears twice, the second copy at a random distance.
# The first copy cannot be predicted; the second can, by a model that finds where the
# current token came before and copies what followed it. The scores are Module 4's, on 8
# random tokens repeated once.

# %%
section(23)
figures.induction_forms(result, None)

# %% [markdown]
# For about 200 steps the second-copy loss creeps down. Then, within 50 steps, layer 1's
# induction scores jump and the loss falls steeply: the phase change (cross-check:
# results.log [S23] lines 24-25):
#
# ```text
#   phase change: the second-copy loss fell most between steps 225 and 250 (2.42 -> 1.94)
#   layer 0's best previous-token score first above 0.3 at step 175; layer 1's best induction score first above 0.5 at step 225 (the previous-token head first)
# ```
#
# Layer 0's head 0 became a previous-token head a little before: it writes "the token
# before me" into each position, which is what layer 1's heads then match their queries
# against. Before and after, on the pattern sequence:

# %%
figures.induction_patterns(result, None)

# %% [markdown]
# ## 6. Switch heads off
#
# Module 5's test of a claim about a head: set its output to zero and measure. Switching off
# the previous-token head in layer 0 undoes most of the copying, though it never looks at
# the earlier copy itself (cross-check: results.log [S24] lines 1-3):
#
# ```text
# [S24] the trained model through the workshop's tools: heads by pattern, and switched off
#   induction heads (Module 4's ranking): L1 H1 = 0.94, L1 H0 = 0.92
#   previous heads (Module 4's ranking): L0 H0 = 0.57, L1 H0 = 0.08
# ```

# %%
section(24)

# %% [markdown]
# ## 7. Your turn: train again
#
# Change the seed, the width, the segment or the number of steps, and train again (a few
# seconds). Does the phase change come at the same step? With `segment=2`, is there still
# something to copy?

# %%
SEED, STEPS, SEGMENT = 1, 300, induction.SEGMENT
config = transformer.Config(n_vocab=32, n_ctx=16, d_model=32, n_layer=2, n_head=2)


def progress(s):
    print(f"step {s.step:3d}: second-copy loss {s.second_copy:.2f}, induction "
          f"{s.induction[1].max():.2f}, previous {s.previous[0].max():.2f}")


params, snaps = induction.train(config, STEPS, seed=SEED, every=50, say=progress,
                                segment=SEGMENT)

# %% [markdown]
# And the toy: the learned head on a sentence of your own from the table's words.

# %%
X = embed("a fish by the bank")
weights, _ = wiring.bank_weights(result.W_Q, result.W_K, X[None])
wired, _ = wiring.bank_weights(W_Q_WIRED, W_K_WIRED, X[None])
print("bank over (a, fish, by, the, bank)")
print("learned:", weights[0, 4])
print("wired:  ", wired[0, 4])

# %% [markdown]
# ## Quiz
#
# Module 6's questions, from `attention-workshop quiz 6`:

# %%
from attention_workshop.quiz.module6 import questions as quiz_questions
from attention_workshop.quiz.session import graded, question_lines

title, questions = module6.TITLE, quiz_questions({module6.Result: result})
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
got, total = graded([("6", title, questions)],
                    {("6", n): a for n, a in answers.items() if a.strip()})
