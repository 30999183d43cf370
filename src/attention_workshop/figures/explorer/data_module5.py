"""What the explorer's Module 5 panel embeds: module5.Result's head sets as it measured them
(nothing is recomputed here). For each set: its heads, the loss on each half of [S14]'s
sequence (full precision: the page prints them to 2 decimals, as [S18]-[S19] do) and
SmolLM2's greedy continuation of module5.PANEL_PROMPT with those heads off; and [S19]'s sink
heads: the length of their value vector at position 0 against the other positions'.

Example: switch_section(m5)["choices"][0]["name"] -> "every head on" (its "loss" [14.13...,
1.99...]); ["sinks"][0] -> {"head": [18, 8], "kv": 2, "at0": 0.85..., "rest": 12.24...,
"weight": 1.0...}.
"""


def switch_section(m5, m4):  # module5.Result, module4.Result -> the page's Module 5, or None
    from attention_workshop.modules import module4, module5
    from attention_workshop.real.analysis.head_patterns import HALF

    if m5 is None or m5.choices is None or m4 is None:
        return None
    s, cfg = m5.smollm2, m4.model.config
    plain = m5.choices[0].continuation
    return {"model": module4.MODEL_NAME, "prompt": module5.PANEL_PROMPT,
            "prompt_tokens": list(plain.prompt_tokens), "new_tokens": module5.PANEL_TOKENS,
            "half": HALF,  # [S14]'s sequence: this many random tokens, then the same again
            "choices": [{"name": c.name, "heads": [[int(lay), int(h)] for lay, h in c.heads],
                         "loss": [float(c.loss["first"]), float(c.loss["repeat"])],
                         "ids": [int(i) for i in c.continuation.new_ids],
                         "tokens": [step.token for step in c.continuation.steps]}
                        for c in m5.choices],
            "sinks": [{"head": [int(lay), int(h)], "kv": int(h // (cfg.n_head // cfg.n_kv_head)),
                       "at0": float(at0), "rest": float(rest),
                       "weight": float(s.sink_moved[(lay, h)][0])}
                      for (lay, h), (at0, rest) in s.sink_norms.items()],
            "sink_text": module5.SINK_TEXT}  # where "weight" (on position 0) was measured
