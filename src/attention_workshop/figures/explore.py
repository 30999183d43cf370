"""`explore --out DIR`: one exploration as figures, so a learner's own sentence can be seen too.

explore_weights.png: the raw and the wired head's weights side by side.
explore_WORD.png (with --word): that word's lookup row and its two outputs on the named axes.
"""

import re

from attention_workshop.explore import positions
from attention_workshop.figures.toy import three_lives, weight_grid


def draw_exploration(ex, out, word=None):  # Exploration, Path, str | None -> [Path]
    sentence = " ".join(ex.tokens)
    d_k = ex.wired["queries"].shape[1]
    panels = [("simple attention: softmax(X @ X.T)", ex.tokens, ex.raw["weights"]),
              (f"wired head: softmax(Q @ K.T / sqrt({d_k}))", ex.tokens, ex.wired["weights"])]
    paths = [weight_grid(panels, f'Attention weights for "{sentence}" (rows sum to 1)',
                         out / "explore_weights.png")]
    if word:
        i = positions(ex.tokens, word)[0]  # the first occurrence, as the text report shows first
        lives = [("lookup row", ex.X[i]), ("simple attention", ex.raw["outputs"][i]),
                 ("wired head", ex.wired["outputs"][i])]
        name = re.sub(r"[^\w-]", "_", word.lower())  # a safe file name for any table word
        paths.append(three_lives(word.lower(), sentence, ex.axes, lives,
                                 out / f"explore_{name}.png"))
    return paths
