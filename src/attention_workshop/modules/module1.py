"""Module 1: the simplest attention that works (scores X @ X.T, row softmax, blend).

Writes log lines 27-52; lessons cite 28, 29-34, 35-44 and 45-49.
"""

from dataclasses import dataclass

import numpy as np

from attention_workshop.attention import simple_attention
from attention_workshop.embeddings import AXES, SENT_MONEY, SENT_RIVER, embed, tokenize
from attention_workshop.report import fmt_list, matrix_lines, named_vector

TITLE = "Module 1: the simplest attention that works"


@dataclass(frozen=True)
class Result:
    """Simple attention on both lesson sentences; rows and columns are the, river|money, bank."""

    X_river: np.ndarray  # [3, 4] the embedding rows of "the river bank"
    X_money: np.ndarray  # [3, 4] the embedding rows of "the money bank"
    scores_river: np.ndarray  # [3, 3] X @ X.T, symmetric
    weights_river: np.ndarray  # [3, 3] each row of scores softmaxed
    weights_money: np.ndarray  # [3, 3]
    outputs_river: np.ndarray  # [3, 4] weights @ X: row 2 is bank's new vector
    outputs_money: np.ndarray  # [3, 4]
    average_river: np.ndarray  # [4] the equal average of the rows, the ruled-out attempt


def run(log, earlier):
    """Log Module 1 (it reads no earlier module); return both sentences' attention."""
    log.section(3, "Module 1: the simplest attention (scores X @ X.T, row softmax, blend)")
    X_river, X_money = embed(SENT_RIVER), embed(SENT_MONEY)  # [3, 4] each
    same = bool(np.array_equal(X_river[2], X_money[2]))
    log.expect_line(28)
    log(f"  input check: 'bank' row identical in both sentences -> {same}")

    out_river, W_river = simple_attention(X_river)
    out_money, W_money = simple_attention(X_money)
    S_river = X_river @ X_river.T  # [3, 3]
    words_river, words_money = tokenize(SENT_RIVER), tokenize(SENT_MONEY)

    log(f'  score matrix S = X @ X.T for "{SENT_RIVER}":')
    log.extend(matrix_lines(words_river, words_river, S_river))
    symmetric = bool(np.array_equal(S_river, S_river.T))
    log(f"  symmetric? {symmetric} (S[i,j] always equals S[j,i] here)")

    log.expect_line(35)
    log(f'  attention weights (each row softmaxed) for "{SENT_RIVER}":')
    log.extend(matrix_lines(words_river, words_river, W_river))
    log(f'  attention weights for "{SENT_MONEY}":')
    log.extend(matrix_lines(words_money, words_money, W_money))

    log.expect_line(45)
    log(f"  bank's output vector ({', '.join(AXES)}):")
    for sentence, out in ((SENT_RIVER, out_river), (SENT_MONEY, out_money)):
        log(f'    in "{sentence}": {named_vector(AXES, out[2])}')
    for name, out in (("river", out_river), ("money", out_money)):
        log(f"  water vs money, {name} sentence: {out[2, 0]:.3f} vs {out[2, 1]:.3f}")

    # The failed first attempt: an equal average forgets who is asking.
    average = {SENT_RIVER: X_river.mean(axis=0), SENT_MONEY: X_money.mean(axis=0)}  # [4] each
    for sentence, mean in average.items():
        log(f'  equal average of all rows, "{sentence}": {fmt_list(mean, 2)}')
    log("  an equal average hands every word the same vector: the words become indistinguishable")
    return Result(X_river=X_river, X_money=X_money, scores_river=S_river, weights_river=W_river,
                  weights_money=W_money, outputs_river=out_river, outputs_money=out_money,
                  average_river=average[SENT_RIVER])
