"""Headless Chromium for the page tests: Debian's `chromium`, driven by Playwright, and what
the tests share (reading the page's tables as text; the fixtures `browser` and `page_file`
are in conftest.py).

Playwright's own browser download does not work offline, so the tests launch the system's
chromium. Without it (or without playwright) a test is skipped on a developer's machine and
FAILS under CI=true, so CI can never pass by skipping the browser tests. The same goes for
axe-core (the accessibility checker, from npm: scripts/test.sh installs it into .cache/npm).
"""

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


AXE = Path(__file__).resolve().parents[1] / ".cache/npm/node_modules/axe-core/axe.min.js"
WCAG_A_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def missing(message):  # skip on a developer's machine, fail under CI
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def require_axe():  # -> axe-core's script, or skip (fail under CI)
    if not AXE.is_file():
        missing(f"needs axe-core at {AXE} (npm install --prefix .cache/npm axe-core@4; "
                "scripts/test.sh does it)")
    return AXE.read_text(encoding="utf-8")


def axe_violations(page, impacts=("serious", "critical")):  # -> [(rule, impact, targets)]
    """axe-core's WCAG 2.1 A and AA rules on the page as it is now. The page must come from a
    context with bypass_csp=True (its policy lets only its own script run)."""
    page.add_style_tag(content=".panel { content-visibility: visible !important; }")  # all drawn
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.evaluate(require_axe())
    found = page.evaluate("""tags => axe.run(document, {runOnly: {type: "tag", values: tags}})
        .then(r => r.violations.map(v => [v.id, v.impact,
                                          v.nodes.map(n => n.target.join(" "))]))""", WCAG_A_AA)
    return [tuple(v) for v in found if v[1] in impacts]


def require_browser():  # -> path of chromium, or skip (fail under CI)
    needs = []
    path = shutil.which("chromium")
    if path is None:
        needs.append("Debian's chromium (apt-get install chromium; scripts/test.sh does it)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        needs.append("playwright (pip install -e '.[test]')")
    if needs:
        missing("needs " + " and ".join(needs))
    return path


def launch():  # -> (playwright, browser); the caller closes both
    from playwright.sync_api import sync_playwright

    path = require_browser()
    driver = sync_playwright().start()
    return driver, driver.chromium.launch(executable_path=path, args=ARGS)


@dataclass
class Opened:
    """A page and everything it said on the console (errors and uncaught exceptions)."""

    page: object
    errors: list = field(default_factory=list)


def open_page(browser, path, width=1280, height=800, bypass_csp=False):  # Path -> Opened
    # bypass_csp: let a test add a script (axe-core) the page's own policy would refuse
    page = browser.new_page(viewport={"width": width, "height": height}, bypass_csp=bypass_csp)
    opened = Opened(page)
    page.on("console", lambda m: m.type in ("error", "warning") and opened.errors.append(m.text))
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    page.goto(path.resolve().as_uri())
    return opened


DOCS = Path(__file__).resolve().parents[1] / "docs"


def png_size(path):  # (width, height) from the PNG header
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def doc_screenshots(browser, path, shots, folder, prepare=lambda page, name: None):
    # page Path, {docs/ file name: (width, height)}, a tmp folder, prepare(page, name) -> None
    """The docs' pictures of a page, kept current: each one shot at its size once `prepare`
    has set the page up, with no sideways scroll and no page error; UPDATE_DOCS=1 copies the
    shots into docs/, and the docs' picture must have the shot's size either way."""
    for name, (width, height) in shots.items():
        page = (opened := open_page(browser, path, width, height)).page
        prepare(page, name)
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways
        page.screenshot(path=folder / name)
        assert png_size(folder / name) == (width, height) and not opened.errors
        if os.environ.get("UPDATE_DOCS") == "1":
            shutil.copy(folder / name, DOCS / name)
        assert png_size(DOCS / name) == (width, height)


def shown(x):  # what the page prints for a number: Python's 3 decimals, and no "-0.000"
    text = f"{x:.3f}"
    return "0.000" if float(text) == 0 else text


def shown_matrix(M, mask=None):
    return [["\u2013" if mask is not None and not mask[i][j] else shown(v)
             for j, v in enumerate(row)] for i, row in enumerate(M)]


def cells(page, table):  # the text of every number cell of one of the page's tables
    return page.eval_on_selector_all(
        f"{table} tbody tr", "rows => rows.map(r => [...r.querySelectorAll('td')]"
                             ".map(td => td.textContent))")
