"""What `attention-workshop real` prints: the tokens and the weight tables of the heads that matter.

Tables use report.matrix_lines, the same style as the lessons' results.log.
"""

import json

from attention_workshop.real.head_search import top_heads
from attention_workshop.report import matrix_lines

SHOWN = 3  # heads shown when the user picks none


def describe(model):  # Model -> str
    """Example: 'minilm: bert, 6 layers x 12 heads, d_model 384, d_head (d_k) 32'."""
    c = model.config
    return (f"{model.name}: {c.family}, {c.n_layer} layers x {c.n_head} heads, "
            f"d_model {c.d_model}, d_head (d_k) {c.d_head}")


def weight_table(tokens, weights):  # list[str], [T, T] -> list of lines
    """matrix_lines with columns wide enough for the longest token."""
    width = max(8, max(len(t) for t in tokens) + 2)
    return matrix_lines(tokens, tokens, weights, indent=2, label_width=width - 1, width=width)


def text_report(model, result, layer=None, head=None):  # -> list of lines
    """The tokens, then one table per chosen head (each row: where that token looks)."""
    T = len(result.tokens)
    lines = [describe(model), f"tokens ({T}): {' '.join(result.tokens)}"]
    if layer is not None and head is not None:
        chosen = [(layer, head)]
    else:
        found = top_heads(result.attentions, result.special, SHOWN, layer, head)
        chosen = [(lay, h) for lay, h, *_ in found]
        lines.append(f"the {len(chosen)} heads where a word looks hardest at another word "
                     "(pick one with --layer L --head H):")
    for lay, h in chosen:
        w = result.attentions[lay, h]
        ((_, _, q, k, top),) = top_heads(result.attentions, result.special, 1, lay, h)
        lines.append("")
        lines.append(f"layer {lay}, head {h}: row = looking token, column = looked at "
                     "(rows sum to 1)")
        lines.extend(weight_table(result.tokens, w))
        if top > 0:
            lines.append(f"  strongest word-to-word look: {result.tokens[q]!r} -> "
                         f"{result.tokens[k]!r} {top:.3f}")
    return lines


def json_report(model, result):  # -> str
    """Every layer's weights at full precision: attentions[layer][head][query][key]."""
    c = model.config
    return json.dumps({
        "model": model.name, "tokens": result.tokens, "ids": result.ids,
        "layers": c.n_layer, "heads": c.n_head, "d_head": c.d_head,
        "attentions": result.attentions.astype(float).tolist(),
    })
