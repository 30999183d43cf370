"""The JSON view (`explore --format json`): every number at full precision, one matrix row a line.

    {"tokens": [...], "raw": {"scores", "weights", "outputs", "looks_most"},
     "wired": {"queries", "keys", "scores", "weights", "outputs", "values", "looks_most"},
     "sentence": as typed, "table": {"source", "added", "changed"},
     "notes": {"rows", "queries_keys", "raw": {...}, "wired": {...}}, "claims": [...]}

The first three keys are the original document; the others were added beside them. With
`--word`, each head also gets "slow_motion": one entry per occurrence of the word.
With --no-scale, --causal or --wv, the document also gets "settings": {"scale", "causal",
"w_v"} (W_V's source, or "identity"). "wired" always has "values", V = X @ W_V: X itself
while W_V is the identity, a choice the learner sees too.
"""

import json

from attention_workshop.explore.claims import CLAIMS, check
from attention_workshop.explore.compute import ingredients, positions, slow_motion
from attention_workshop.explore.notes import notes
from attention_workshop.explore.ties import looks


def render(ex, word=None):  # Exploration, str | None -> str
    """The whole document. Example: render(explore("bank")).splitlines()[:2] ->
    ['{', '  "tokens": ["bank"],']."""
    return dumps(as_json(ex, word))


def as_json(ex, word=None):  # -> dict of plain lists of floats (json.dumps keeps full precision)
    """{"tokens", "raw": {...}, "wired": {...}}; with `word`, each head also gets "slow_motion"."""
    doc = {"tokens": ex.tokens,
           "raw": {k: ex.raw[k].tolist() for k in ("scores", "weights", "outputs")},
           "wired": {k: ex.wired[k].tolist()
                     for k in ("queries", "keys", "scores", "weights", "outputs")}}
    opt = ex.options
    if not opt.scale or opt.causal or opt.w_v is not None:  # not Module 2's head: say how
        doc["settings"] = {"scale": opt.scale, "causal": opt.causal,
                           "w_v": "identity" if opt.w_v is None else opt.w_v.source}
    doc["wired"]["values"] = ex.wired["values"].tolist()  # X itself under the identity W_V
    for head in ("raw", "wired"):
        doc[head]["looks_most"] = [_look_doc(ex, head, look) for look in looks(ex, head)]
    table = ex.table
    broken = {b.claim: b.why for b in check(ex)}
    doc |= {"sentence": ex.typed or " ".join(ex.tokens),
            "table": {"source": ex.sources[0], "added": list(getattr(table, "added", ())),
                      "changed": list(getattr(table, "replaced", ()))},
            "notes": notes(ex),
            "claims": [{"claim": c, "holds": c not in broken, "why": broken.get(c)}
                       for c in CLAIMS]}
    if word is not None:
        for head in ("raw", "wired"):
            doc[head]["slow_motion"] = [_blend_doc(ex, head, i) for i in positions(ex.tokens, word)]
    return doc


def _look_doc(ex, head, look):  # ties.Look -> {"word", "position", "top": [...], "reason"}
    """Every word tied (at three decimals) for `look`'s largest share, with its exact weight."""
    weights = getattr(ex, head)["weights"][look.position]  # [T]
    return {"word": look.word, "position": look.position,
            "top": [{"word": ex.tokens[j], "position": j, "weight": float(weights[j])}
                    for j in look.top],
            "reason": look.reason}


def _blend_doc(ex, head, i):
    recipe = getattr(ex, head)["weights"][i]  # [T]
    scaled, output = slow_motion(recipe, ingredients(ex, head))
    return {"word": ex.tokens[i], "position": i, "recipe": recipe.tolist(),
            "scaled_rows": scaled.tolist(), "output": output.tolist()}


def dumps(doc, indent=0):  # dict | list | scalar -> JSON text, one matrix row per line
    """json.dumps, but a list of plain numbers stays on one line: [[1.0, 0.0], [0.0, 1.0]] prints
    one row per line. Floats keep full precision (Python's repr round-trips)."""
    pad = " " * indent
    if isinstance(doc, dict):
        items = [f'{pad}  {json.dumps(k)}: {dumps(v, indent + 2)}' for k, v in doc.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(doc, list) and any(isinstance(v, list | dict) for v in doc):
        items = [f"{pad}  {dumps(v, indent + 2)}" for v in doc]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    return json.dumps(doc, allow_nan=False)
