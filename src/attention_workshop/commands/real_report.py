"""What `attention-workshop real` prints: the tokens and the weight tables of the heads that
matter; with --from/--to, one word's weight on another in every layer and head; with --vs,
how far a word's vector moves between two sentences, layer by layer.

Tables use report.matrix_lines, the same style as the lessons' results.log.
"""

import json
import textwrap
from typing import NamedTuple

import numpy as np

from attention_workshop.real.analysis.drift import drift
from attention_workshop.real.analysis.head_patterns import PREVIOUS_HEAD
from attention_workshop.real.analysis.head_search import (
    content_heads,
    neighbour_head,
    rest_positions,
    top_heads,
)
from attention_workshop.real.analysis.words import word_tokens
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


def heads_lines(found, left_out, causal=False):  # -> the line saying how the heads were picked
    """Example: 'the 3 heads with the strongest look from one word to another, by content:
    left out 2 position heads (each word looks at its neighbour: L0 H2, L1 H8) and 30 resting
    heads (most words look at [CLS], [SEP] or themselves); pick one with --layer L --head H'."""
    pos, rest = left_out["position"], left_out["resting"]
    named = ", ".join(f"L{lay} H{h}" for lay, h in pos[:4]) + (", ..." if len(pos) > 4 else "")
    what = ("on random tokens each looks at the token just before" if causal else
            "each word looks at its neighbour")
    parts = [f"{len(pos)} position head{'s' * (len(pos) != 1)} ({what}"
             f"{': ' + named if pos else ''})",
             f"{len(rest)} resting head{'s' * (len(rest) != 1)} (most words look at "
             + ("the first token or themselves)" if causal else "[CLS], [SEP] or themselves)")]
    return textwrap.wrap(
        f"the {len(found)} head{'s' * (len(found) != 1)} with the strongest look from one word "
        f"to another, by content: left out {parts[0]} and {parts[1]}; pick one with --layer L "
        "--head H:", 100)


def previous_scores(model):  # -> [L, H] each head's previous score on random tokens, or None
    """A decoder's heads scored on the random repeated sequence (head_patterns, the [S14]
    score): above PREVIOUS_HEAD a head looks at the token just before whatever the words, so
    its look there is position. A short sentence cannot tell (in "the river bank" only bank
    has a word before it to look at). An encoder's heads are told apart on the sentence
    itself (head_search.head_kinds): None. So is a decoder too small to be scored (fewer
    ordinary tokens than the random sequence needs, or a context shorter than it): its heads
    are then shown without the label, not refused."""
    from attention_workshop.errors import WorkshopError
    from attention_workshop.real.analysis.head_patterns import heads

    if not model.config.causal:
        return None
    try:
        return heads(model, "previous", top=1).scores
    except WorkshopError:  # the sentence itself still runs; only the label is left out
        return None


def chosen_heads(model, result, layer=None, head=None, previous=None):
    # -> ([(layer, head)], [lines]); previous: previous_scores(model), for a decoder
    """The heads worth showing: the one asked for, else the strongest by content (position
    and resting heads left out), else the strongest at all; with the lines saying how they
    were picked. The text report and the figures of `real --out` show these same heads."""
    rest = rest_positions(result.special, model.config.causal)  # [CLS], [SEP]; the sink
    if layer is not None and head is not None:
        return [(layer, head)], []
    if previous is None and model.config.causal:
        previous = previous_scores(model)
    flags = None if previous is None else previous > PREVIOUS_HEAD
    found, left_out = content_heads(result.attentions, rest, SHOWN, layer, head, flags)
    if found:
        lines = heads_lines(found, left_out, model.config.causal)
    else:  # a one-word sentence, or every head positional or resting
        found = top_heads(result.attentions, rest, SHOWN, layer, head)
        lines = [f"no head looks by content here; the {len(found)} heads where a word looks "
                 "hardest at another word (pick one with --layer L --head H):"]
    return [(lay, h) for lay, h, *_ in found], lines


def text_report(model, result, chosen, how=(), previous=None):  # -> list of lines
    """The tokens, then one table per chosen head (each row: where that token looks), each
    labelled by the rule chosen_heads picked by: a decoder's by `previous` (previous_scores),
    an encoder's by the sentence."""
    T, causal = len(result.tokens), model.config.causal
    rest = rest_positions(result.special, causal)
    lines = [describe(model), f"tokens ({T}): {' '.join(result.tokens)}"]
    if causal:
        lines.append("a decoder: each token sees only itself and the tokens before it (the "
                     "causal mask), and many heads rest on the first token")
    lines += how
    for lay, h in chosen:
        w = result.attentions[lay, h]
        ((_, _, q, k, top),) = top_heads(result.attentions, rest, 1, lay, h)
        lines.append("")
        lines.append(f"layer {lay}, head {h}: row = looking token, column = looked at (rows sum "
                     f"to 1){head_kind(w, rest, None if previous is None else previous[lay, h])}")
        lines.extend(weight_table(result.tokens, w))
        if top > 0:
            lines.append(f"  strongest word-to-word look: {result.tokens[q]!r} -> "
                         f"{result.tokens[k]!r} {top:.3f}")
    return lines


def head_kind(weights, rest, previous=None):  # [T, T], [T] bool, its previous score -> text
    """What the head does, by the rule that picked the heads: with a decoder's `previous`
    score, '; a previous-token head (0.91 on random tokens)' above PREVIOUS_HEAD, else '; it
    looks by content (previous score 0.12 on random tokens)'; an encoder's from the sentence,
    '; a previous-token head' or ''."""
    if previous is not None:
        return (f"; a previous-token head ({previous:.2f} on random tokens)"
                if previous > PREVIOUS_HEAD else
                f"; it looks by content (previous score {previous:.2f} on random tokens)")
    kind = neighbour_head(weights, rest, 0.75)
    return f"; a {kind}-token head" if kind else ""


def from_to(result, source, target):  # RunResult, [positions], [positions] -> [L, H]
    """The share of attention the word at `source` gives the word at `target`, every layer and
    head: summed over target's tokens, averaged over source's (a word split in pieces)."""
    return result.attentions[:, :, source][..., target].sum(axis=-1).mean(axis=-1)


def from_to_lines(result, words, positions, grid, count=SHOWN, previous=None):
    # ("bank", "river"), ([3], [2]), [L, H] -> lines; previous: previous_scores(model)
    """A layer x head table of one word's weight on another, then the strongest heads (each
    marked if it is a position head: a decoder's by `previous`, as chosen_heads marks them)
    and the mean beside an even spread."""
    (a, b), (pa, pb) = words, positions
    L, H = grid.shape
    lines = [f'"{a}" (token {", ".join(map(str, pa))}) -> "{b}" (token '
             f'{", ".join(map(str, pb))}): its share of attention in every layer and head',
             *matrix_lines([f"layer {lay}" for lay in range(L)], [f"H{h}" for h in range(H)],
                           grid, indent=2, label_width=8, width=7)]
    order = np.argsort(-grid, axis=None, kind="stable")[:count]
    best = []
    for lay, h in zip(*np.unravel_index(order, grid.shape), strict=True):
        kind = (neighbour_head(result.attentions[lay, h], result.special, 0.75)
                if previous is None else "previous" if previous[lay, h] > PREVIOUS_HEAD else None)
        best.append(f"L{lay} H{h} = {grid[lay, h]:.3f}{f' ({kind}-token head)' if kind else ''}")
    T = len(result.tokens)
    lines += [f"  strongest: {', '.join(best)}",
              f"  mean over all {grid.size} heads: {grid.mean():.3f} (even spread over {T} "
              f"tokens: {len(pb) / T:.3f})"]
    return lines


def drift_lines(word, sentences, positions, cosines):  # -> lines, results.log [S8]'s style
    (s1, s2), (p1, p2) = sentences, positions
    lines = [f'"{word}" in "{s1}" (token {", ".join(map(str, p1))}) vs "{s2}" (token '
             f'{", ".join(map(str, p2))}): cosine similarity of its vector, layer by layer',
             f"  embeddings (before layer 0): cosine {cosines[0]:.3f}"]
    lines += [f"  after layer {i}: cosine {c:.3f}" for i, c in enumerate(cosines[1:])]
    low = int(np.argmin(cosines[1:]))
    lines.append(f"  furthest apart after layer {low} ({cosines[1 + low]:.3f}); 1.000 would "
                 "mean the context changed nothing")
    return lines


class Asked(NamedTuple):
    """One question `real` was asked (--from/--to, or --vs/--word), answered."""

    lines: list  # what the text report prints
    json: dict  # its part of the JSON report
    words: tuple = ()  # --from/--to: the two words, lower case
    grid: object = None  # --from/--to: [L, H] the first word's share on the second


def asked_for(model, result, sentence, pair, versus, previous=None, ablate=None):
    # Model, RunResult, str, (from, to), (other sentence, word) -> {"from_to" | "vs": Asked}
    """What `real --from A --to B` and `--vs OTHER --word W` ask, computed (OTHER's forward
    pass included, with the `ablate` heads off as in `result`); None pairs are skipped.
    previous: previous_scores(model), for a decoder."""
    asked = {}
    source, target = pair
    other_sentence, word = versus
    if source is not None:
        pa = word_tokens(model.tokenizer, sentence, source)[0]  # its first occurrence
        pb = word_tokens(model.tokenizer, sentence, target)[0]
        grid = from_to(result, pa, pb)  # [L, H]
        words = (source.lower(), target.lower())
        asked["from_to"] = Asked(
            lines=from_to_lines(result, words, (pa, pb), grid, previous=previous), grid=grid,
            words=words,
            json={"from": words[0], "to": words[1], "from_tokens": pa, "to_tokens": pb,
                  "weights": grid.tolist()})
    if other_sentence is not None:
        p1 = word_tokens(model.tokenizer, sentence, word)[0]
        p2 = word_tokens(model.tokenizer, other_sentence, word)[0]
        other = model.run(other_sentence, ablate=ablate)
        cosines = drift(result, p1, other, p2)
        asked["vs"] = Asked(
            lines=drift_lines(word.lower(), (sentence, other_sentence), (p1, p2), cosines),
            json={"word": word.lower(), "other": other_sentence, "other_tokens": other.tokens,
                  "positions": p1, "other_positions": p2, "cosines": cosines})
    return asked


def json_report(model, result, extra=None):  # -> str
    """Every layer's weights at full precision: attentions[layer][head][query][key]; `extra`
    (from_to, drift) is added beside them."""
    c = model.config
    return json.dumps({
        "model": model.name, "tokens": result.tokens, "ids": result.ids,
        "layers": c.n_layer, "heads": c.n_head, "d_head": c.d_head,
        "attentions": result.attentions.astype(float).tolist(), **(extra or {}),
    }, allow_nan=False)  # never a bare NaN, which JSON readers refuse (model.run refuses them)
