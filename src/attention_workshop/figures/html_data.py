"""A page's data and text, put into HTML so that no input can change the page: the one home
of this escaping, for every page the workshop writes (head_view.py; the explorer page).

- `json_for_script(data)`: JSON for a <script type="application/json"> element, with <, >
  and & written as \\u003c, \\u003e, \\u0026: no string in it (a token "</script><svg
  onload=...>" or "<!--<script>") can end the element, open a comment or start a script.
  JSON.parse reads the same strings back. NaN and infinity are refused (JSON has neither).
- `fill(template, values)`: every __NAME__ placeholder replaced in ONE pass, so a value
  that looks like a placeholder (a token "__DATA__") stays text.
- `text(s)`: text for between tags or inside an attribute value (html.escape).
- `csp_hash(code)`: the Content-Security-Policy source that lets exactly this inline script
  or style run, and no other (an injected one would not match its hash).
The page's script then sets text with textContent, never innerHTML with data.
"""

import base64
import hashlib
import html
import json
import re

PLACEHOLDER = re.compile(r"__([A-Z][A-Z_]*[A-Z])__")


def json_for_script(data):  # -> JSON text that cannot close or comment out its <script>
    """Example: {"w": "</script>"} -> '{"w":"\\u003c/script\\u003e"}'."""
    code = json.dumps(data, allow_nan=False, separators=(",", ":"), ensure_ascii=False)
    return code.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def fill(template, values):  # str with __NAME__ placeholders, {NAME: str} -> str
    """One pass: a value is never searched for placeholders. Example:
    fill("<h1>__TITLE__</h1>__DATA__", {"TITLE": "__DATA__", "DATA": "1"}) ->
    "<h1>__DATA__</h1>1". A placeholder without a value is a KeyError (the page is wrong)."""
    return PLACEHOLDER.sub(lambda match: values[match.group(1)], template)


def text(value):  # any text -> safe between tags and in a quoted attribute value
    return html.escape(str(value), quote=True)


def csp_hash(code):  # inline script or style text -> "sha256-..." for Content-Security-Policy
    digest = hashlib.sha256(code.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")
