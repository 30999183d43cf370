"""Inline the page's template, style, scripts and data into one offline HTML file; and the one
home of the escaping every page uses (json_for_script, fill, csp_hash; head_view.py too).

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
           "real.js", "decoder.js", "main.js")


def asset(name):  # a file shipped beside this module (package data)
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def json_for_script(data):  # -> JSON text that cannot close or comment out its <script>
    """Example: {"w": "</script>"} -> '{"w":"\\u003c/script\\u003e"}'."""
    text = json.dumps(data, allow_nan=False, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def csp_hash(text):  # the Content-Security-Policy source that allows exactly this inline text
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def fill(template, values):  # str with __NAME__ placeholders, {NAME: text} -> str
    """Every named placeholder filled in ONE pass: a value is never searched again, so a token
    or a title reading "__DATA__" stays text. Used by every page (explorer, head_view.py).
    Example: fill("<h1>__TITLE__</h1>__DATA__", {"TITLE": "__DATA__", "DATA": "[1]"}) ->
    "<h1>__DATA__</h1>[1]"."""
    names = re.compile("__(" + "|".join(map(re.escape, values)) + ")__")
    return names.sub(lambda match: values[match.group(1)], template)


def explorer_html(data):  # dict (see data.py) -> the whole page as one string
    script = '(() => {\n"use strict";\n' + "\n".join(asset(n) for n in SCRIPTS) + "})();\n"
    style = asset("explorer.css")
    for tag, text in (("script", script), ("style", style)):
        if f"</{tag}" in text.lower() or "<!--" in text:
            raise ValueError(f"the page's own {tag} must not contain '</{tag}' or '<!--'")
    values = {"TITLE": html.escape(data["title"]), "CSS": style, "JS": script,
              "DATA": json_for_script(data), "SCRIPT_HASH": csp_hash(script),
              "STYLE_HASH": csp_hash(style)}
    return fill(asset("page.html"), values)
