"""Module 1: the simplest attention that works (scores X @ X.T, row softmax, blend).

Writes log lines 27-52; lessons cite 28, 29-34, 35-44 and 45-49.
"""

import numpy as np

from attention_workshop.attention import simple_attention
from attention_workshop.embeddings import AXES, SENT_MONEY, SENT_RIVER, embed, tokenize
from attention_workshop.report import fmt_list, matrix_lines, named_vector


def run(log):
    """Log Module 1; return both sentences' inputs, weights and outputs for the figures."""
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
    for sentence, X in ((SENT_RIVER, X_river), (SENT_MONEY, X_money)):
        log(f'  equal average of all rows, "{sentence}": {fmt_list(X.mean(axis=0), 2)}')
    log("  an equal average hands every word the same vector: the words become indistinguishable")
    return {
        "X": {SENT_RIVER: X_river, SENT_MONEY: X_money},
        "weights": {SENT_RIVER: W_river, SENT_MONEY: W_money},
        "outputs": {SENT_RIVER: out_river, SENT_MONEY: out_money},
    }
