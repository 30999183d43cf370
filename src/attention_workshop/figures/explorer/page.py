"""Inline the page's template, style, scripts and data into one offline HTML file; and the one
home of the escaping every page uses (one_file_page: the explorer, head_view.py and
generation_view.py).

The data goes in as JSON inside <script type="application/json"> with <, > and & written as
\\u003c, \\u003e, \\u0026, so no string in it (a token like "</script><svg onload=...>") can end
the script element; every placeholder is filled in one pass, so text that looks like a
placeholder ("__DATA__") stays text; and the page's Content-Security-Policy lets only its own
script and style run (by their sha256) and fetches nothing.
"""

import base64
import hashlib
import html
import json
import re
from importlib import resources

# The page's scripts, run in this order: registry.js first (AW, the one name they share), then
# each script as one AW.define / AW.panel call in its own scope, taking what earlier scripts
# export; panels appear in this order; main.js (which starts the page) last. Adding a panel is
# its script plus its name here (docs/contributing.md).
SCRIPTS = ("registry.js", "engine.js", "format.js", "dom.js", "save.js", "sentence.js",
           "plane.js", "module1.js", "wiring.js", "module2.js", "strip.js", "scaling.js",
           "real.js", "decoder.js", "module5.js", "training.js", "main.js")


def asset(name, folder="explorer"):  # a file shipped in figures/<folder>/ (package data)
    return resources.files("attention_workshop.figures").joinpath(folder, name).read_text(
        encoding="utf-8")


def json_for_script(data):  # -> JSON text that cannot close or comment out its <script>
    """Example: {"w": "</script>"} -> '{"w":"\\u003c/script\\u003e"}'."""
    text = json.dumps(data, allow_nan=False, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def csp_hash(text):  # the Content-Security-Policy source that allows exactly this inline text
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def fill(template, values):  # str with __NAME__ placeholders, {NAME: text} -> str
    """Every named placeholder filled in ONE pass: a value is never searched again, so a token
    or a title reading "__DATA__" stays text. Used by every page (one_file_page).
    Example: fill("<h1>__TITLE__</h1>__DATA__", {"TITLE": "__DATA__", "DATA": "[1]"}) ->
    "<h1>__DATA__</h1>[1]"."""
    names = re.compile("__(" + "|".join(map(re.escape, values)) + ")__")
    return names.sub(lambda match: values[match.group(1)], template)


def one_file_page(template, title, style, script, data):  # -> the page as one string
    """A template's __TITLE__ (escaped), __STYLE__, __SCRIPT__, __DATA__ (json_for_script)
    and the two CSP hashes filled; the page's own style and script are refused if they could
    end their element. Every page here is made by it: the explorer, the head view
    (head_view.py), the generation page (generation_view.py)."""
    for tag, text in (("script", script), ("style", style)):
        if f"</{tag}" in text.lower() or "<!--" in text:
            raise ValueError(f"the page's own {tag} must not contain '</{tag}' or '<!--'")
    return fill(template, {"TITLE": html.escape(title), "STYLE": style, "SCRIPT": script,
                           "DATA": json_for_script(data), "SCRIPT_HASH": csp_hash(script),
                           "STYLE_HASH": csp_hash(style)})


def explorer_html(data):  # dict (see data.py) -> the whole page as one string
    script = '(() => {\n"use strict";\n' + "\n".join(asset(n) for n in SCRIPTS) + "})();\n"
    return one_file_page(asset("page.html"), data["title"], asset("explorer.css"), script,
                         data)
