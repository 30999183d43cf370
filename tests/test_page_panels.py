"""The explorer page's shape for a new panel: one script (AW.panel) plus its name in
page.py's SCRIPTS, nothing else; and each script in its own scope, so a second script that
exports a name already taken stops the page with an error naming both."""

import pytest
from browser import open_page

from attention_workshop.figures.explorer import page as page_module
from attention_workshop.figures.explorer import write_explorer
from attention_workshop.figures.explorer.data import explorer_data
from attention_workshop.modules.module2 import scaling_experiment

MODULE4 = """// module4.js: a panel plugged in by a test: the sentence's words, kept in step.
AW.panel("module4.js", ({h, panel, text}) => ctx => {
  const {section, body} = panel("module4", "Module 4: a test panel", "It lists the words.");
  const list = h("p", {id: "m4-words"});
  body.append(list);
  return {section, update(change) {
    if (change !== "follow") text(list, ctx.current.tokens.join("|"));
  }};
});
"""
CLASH = """// clash.js: exports a name format.js already exports.
AW.define("clash.js", () => ({fixed: x => String(x)}));
"""


def page_with(monkeypatch, tmp_path, name, script):  # the page with one more script
    asset = page_module.asset
    monkeypatch.setattr(page_module, "asset", lambda n: script if n == name else asset(n))
    scripts = list(page_module.SCRIPTS)
    monkeypatch.setattr(page_module, "SCRIPTS", (*scripts[:-1], name, scripts[-1]))
    return write_explorer(tmp_path, explorer_data(scaling_experiment()))


def test_a_new_panel_is_its_script_and_one_line(browser, tmp_path, monkeypatch):
    path = page_with(monkeypatch, tmp_path, "module4.js", MODULE4)
    page = (opened := open_page(browser, path)).page
    ids = page.eval_on_selector_all("#panels > section", "ss => ss.map(s => s.id)")
    assert ids == ["sentence", "module1", "module2", "scaling", "module3", "module4"]
    assert page.eval_on_selector_all("#nav a", "as => as.map(a => a.textContent)")[-1] == \
        "Module 4"
    assert page.text_content("#m4-words") == "the|river|bank"
    page.fill("#sentence-text", "a boat")
    assert page.text_content("#m4-words") == "a|boat"
    assert not opened.errors


def test_a_name_exported_twice_stops_the_page_naming_both(browser, tmp_path, monkeypatch):
    path = page_with(monkeypatch, tmp_path, "clash.js", CLASH)
    opened = open_page(browser, path)
    assert any("clash.js exports fixed, which format.js already exports" in e
               for e in opened.errors), opened.errors


@pytest.mark.parametrize("name", page_module.SCRIPTS[1:])
def test_every_script_is_one_call_in_its_own_scope(name):
    """Each script, past its opening comment, is one AW.define or AW.panel call: nothing it
    declares reaches another script except what it returns."""
    lines = [line for line in page_module.asset(name).splitlines() if line.strip()]
    code = [line for line in lines if not line.startswith("//")]
    calls = [line for line in code if not line.startswith((" ", "}", ")"))]
    assert all(line.startswith(("AW.define(", "AW.panel(")) for line in calls), calls
    assert lines[0].startswith(f"// {name}:")  # it says what it holds
