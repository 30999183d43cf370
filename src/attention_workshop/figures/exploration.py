"""`explore --out DIR`: one exploration as figures, so a learner's own sentence can be seen too.

explore_weights.png: the raw and the wired head's weights side by side.
explore_WORD.png (with --word): that word's lookup row and its two outputs on the named axes.
(.svg or .pdf instead with --figure-format.)
"""

import hashlib
import re

from attention_workshop.explore import positions
from attention_workshop.figures.canvas import label
from attention_workshop.figures.toy import three_lives, weight_grid


def file_name(word, limit=40):  # a table word -> the part of its figure's file name
    """Safe and short for any word a table may hold. Example: "Bank" -> "bank"; "a/b" -> "a_b";
    a 300-character word -> its first 40 characters (made safe), "-", 8 hex digits of its
    hash, so two long words never share a file and no name is too long for the file system."""
    name = re.sub(r"[^\w-]", "_", word.lower())
    if len(name) <= limit:
        return name
    return f"{name[:limit]}-{hashlib.sha256(word.lower().encode()).hexdigest()[:8]}"


def draw_exploration(ex, out, word=None, fmt="png"):  # Exploration, Path, str | None -> [Path]
    sentence = " ".join(ex.tokens)
    d_k = ex.wired["queries"].shape[1]
    panels = [("simple attention: softmax(X @ X.T)", ex.tokens, ex.raw["weights"]),
              (f"wired head: softmax(Q @ K.T / sqrt({d_k}))", ex.tokens, ex.wired["weights"])]
    paths = [weight_grid(panels, f'Attention weights for "{label(sentence, 60)}" (rows sum to 1)',
                         out / f"explore_weights.{fmt}")]
    if word:
        i = positions(ex.tokens, word)[0]  # the first occurrence, as the text report shows first
        lives = [("lookup row", ex.X[i]), ("simple attention", ex.raw["outputs"][i]),
                 ("wired head", ex.wired["outputs"][i])]
        name = file_name(word)
        paths.append(three_lives(word.lower(), sentence, ex.axes, lives,
                                 out / f"explore_{name}.{fmt}"))
    return paths
