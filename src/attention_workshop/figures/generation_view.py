"""generation.html: the tokens a decoder wrote, stepped through one at a time; for a chosen
layer and head, the new token's attention over everything before it (numbers and bars).

One offline file: the weights are embedded as JSON (whole thousandths, what the tables
print), the page sets every token with textContent, and its Content-Security-Policy lets only
its own script and style run (explorer/page.py's helpers, as every page here).
"""

import numpy as np

from attention_workshop.figures.explorer.page import asset, one_file_page

FILENAME = "generation.html"
MAX_NUMBERS = 3_000_000  # weights embedded at most (~12 MB of JSON); later steps are left out
STYLE = """
 body { font: 15px/1.4 system-ui, sans-serif; margin: 16px; color: #222; max-width: 60em; }
 h1 { font-size: 18px; overflow-wrap: anywhere; } h2 { font-size: 16px; }
 .note, .scrolls { color: #444; } .controls { display: flex; flex-wrap: wrap; gap: 8px 16px;
 align-items: center; position: sticky; top: 0; background: #fff; padding: 6px 0; }
 button, select, input { font: inherit; min-height: 32px; } select { width: auto; }
 .pair { display: inline-flex; align-items: center; gap: 6px; white-space: nowrap; }
 .wide { overflow-x: auto; } table { border-collapse: collapse; }
 td, th { padding: 2px 8px; text-align: left; font-family: ui-monospace, monospace; }
 caption { text-align: left; }
 tr.top td { font-weight: 700; } .bar { display: inline-block; height: 10px;
 background: #0072b2; } td:last-child { width: 12em; }
 .text span, .text button { font-family: ui-monospace, monospace; margin: 0 2px; }
 .text .prompt { color: #444; } .text button.new { border: 1px solid #0072b2; background: #fff;
 color: #003f6b; border-radius: 4px; } .text button.chosen { background: #0072b2; color: #fff; }
"""


def strongest_head(steps):  # [Step] -> (layer, head) whose look away from sink and self is largest
    """Example: SmolLM2 writing " Paris" after "The capital of France is" -> a head of the
    middle layers whose row puts most weight on a word before the newest token."""
    from attention_workshop.real.decode import by_content

    best = None
    for s in steps:
        rows = s.attention  # [L, H, S]
        if rows.shape[-1] < 3:
            continue
        look = np.where(by_content(rows), rows[..., 1:-1].max(axis=-1), 0.0)  # [L, H]
        best = look if best is None else best + look
    if best is None:
        return 0, 0
    layer, head = np.unravel_index(int(np.argmax(best)), best.shape)
    return int(layer), int(head)


def generation_html(model, generation):  # -> the page as a string
    steps, kept = [], 0
    for s in generation.steps:
        kept += s.attention.size
        if kept > MAX_NUMBERS:
            break
        steps.append({"token": s.token, "attention": np.rint(
            np.asarray(s.attention, dtype=float) * 1000).astype(int).tolist()})
    layer, head = strongest_head(generation.steps[:len(steps)])
    data = {"prompt": generation.prompt_tokens, "steps": steps, "layers": model.config.n_layer,
            "heads": model.config.n_head, "start_layer": layer, "start_head": head}
    title = f"{model.name} writes: {len(steps)} new tokens, and where each looked"
    return one_file_page(asset("page.html", "generation"), title, STYLE,
                         asset("view.js", "generation"), data)


def write_generation_view(model, generation, folder):  # -> Path of the page written
    from attention_workshop.writing import write_atomic

    return write_atomic(folder / FILENAME, generation_html(model, generation))
