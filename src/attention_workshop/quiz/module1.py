"""Module 1's quiz: the simplest attention (scores X @ X.T, row softmax, blend).

Every answer is one Module 1 measured for results.log (modules/module1.py); questions 6
and 7 are about the money-sentence slow-motion table the lesson asks the learner to
rebuild, laid out by `explore`'s slow_motion.
"""

import numpy as np

from attention_workshop.embeddings import AXES, SENT_MONEY, SENT_RIVER, tokenize
from attention_workshop.explore import slow_motion
from attention_workshop.modules import module1
from attention_workshop.quiz.by_hand import added_up, products_text, terms
from attention_workshop.quiz.question import Question, choice
from attention_workshop.report import fmt_list


def questions(results):  # {Result class: Result} -> [Question]
    m1 = results[module1.Result]
    X_river, X_money = m1.X_river, m1.X_money  # [3, 4] each
    out_river, W_river = m1.outputs_river, m1.weights_river  # [3, 4], [3, 3]
    out_money, W_money = m1.outputs_money, m1.weights_money
    S_river = m1.scores_river  # [3, 3]
    words_river, words_money = tokenize(SENT_RIVER), tokenize(SENT_MONEY)
    average = m1.average_river  # [4]
    self_top = bool((W_river.argmax(axis=1) == np.arange(3)).all())
    scaled_money, sums_money = slow_motion(W_money[2], X_money)  # [3, 4], [4]
    money = AXES.index("money")
    top_money = int(scaled_money[:, money].argmax())
    water_river = terms(W_river[2], X_river[:, 0])  # by hand: printed shares x printed rows
    money_terms = terms(W_money[2], X_money[:, money])
    money_text = products_text(money_terms, words_money)

    return [
        Question(
            f'Attempt 1, the equal average: add the three rows of "{SENT_RIVER}" and divide '
            "by 3. What is the water value of the result?",
            float(average[0]),
            f"({' + '.join(f'{v:.1f}' for v in X_river[:, 0])}) / 3 = {average[0]:.2f}; the "
            f"whole average is "
            f"{fmt_list(average, 2)}. It knows the topic, but every word gets this same vector.",
            decimals=2),
        choice(
            f'In the raw score table for "{SENT_RIVER}", how does river\'s score for bank '
            "compare with bank's score for river?",
            ["they are always equal", "river's is larger", "bank's is larger"],
            0 if np.array_equal(S_river, S_river.T) else 1,
            f"Both are {S_river[1, 2]:.3f}: a dot product does not care about order, so "
            "X @ X.T is symmetric. Module 2 breaks this with separate queries and keys."),
        Question(
            f'Bank\'s raw scores in "{SENT_RIVER}" are {fmt_list(S_river[2])}. After softmax, '
            "what share of bank's blend comes from river?",
            float(W_river[2, 1]),
            f"Bank's recipe is {fmt_list(W_river[2])} over {', '.join(words_river)}: "
            f"{W_river[2, 1]:.3f} from river, with the largest share ({W_river[2, 2]:.3f}) "
            "still kept for itself."),
        choice(
            f'In the raw weight table for "{SENT_RIVER}", which column holds each row\'s '
            "largest share?",
            ["the word's own column (the diagonal)", "always 'the'", "always 'bank'",
             "a different one in each row, with no pattern"],
            0 if self_top else 3,
            f"The diagonal: {fmt_list(np.diag(W_river))}. Raw scores peak on the diagonal "
            "(the self-match fact), and softmax keeps the order of the scores."),
        Question(
            f'Bank\'s recipe in "{SENT_RIVER}" is {fmt_list(W_river[2])} over '
            f"{', '.join(words_river)}. What is the water value of bank's output?",
            float(out_river[2, 0]),
            f"Scale each row's water by its weight and add: "
            f"{products_text(water_river[1:], words_river[1:])}, nothing from 'the': "
            f"{added_up(water_river, out_river[2, 0])}; against money {out_river[2, 1]:.3f}. "
            "The answer is the unrounded value; one unit off in the last decimal counts too."),
        Question(
            f'Rebuild the slow-motion table for "{SENT_MONEY}": bank\'s recipe '
            f"{fmt_list(W_money[2])} over {', '.join(words_money)}, applied to the rows of "
            "X_money. What is the sum of the money column (bank's new money value)?",
            float(sums_money[money]),
            f"Money column, term by term: {money_text}; "
            f"{added_up(money_terms, sums_money[money])}. The answer is the unrounded sum; one "
            f"unit off in the last decimal counts too. Bank's whole output: "
            f"{fmt_list(out_money[2])}."),
        choice(
            f'In that same table for "{SENT_MONEY}", which ingredient contributes the most '
            "money-ness to bank's output?",
            list(words_money),
            top_money,
            f"{money_text}. '{words_money[top_money]}' gives the most: a smaller share "
            f"({W_money[2, 1]:.3f}) of a big money value ({X_money[1, money]:.1f}) beats a "
            f"bigger share ({W_money[2, 2]:.3f}) of bank's own {X_money[2, money]:.1f}."),
    ]
