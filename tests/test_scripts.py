"""scripts/*.sh: every script installs the project the same way (editable), so an edit to src/ is
what runs whichever script ran last."""

import re
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "scripts").glob("*.sh"))


def project_installs(text):  # the pip_install lines that install this folder ("." or ".[extra]")
    return [line.strip() for line in text.splitlines()
            if re.match(r"\s*pip_install\b.*\s\"?\.(\[[\w,]+\])?\"?\s*$", line)]


def test_the_pattern_finds_both_forms():
    text = 'pip_install .\npip_install -e ".[test]"\npip_install --no-deps "$MINILM"\n'
    assert project_installs(text) == ["pip_install .", 'pip_install -e ".[test]"']


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_install_of_the_project_is_editable(script):
    for line in project_installs(script.read_text()):
        assert " -e " in f" {line} ", f"{script.name}: {line!r} is not an editable install"


def test_the_three_entry_scripts_install_the_project():
    installing = {p.name for p in SCRIPTS if project_installs(p.read_text())}
    assert installing == {"workshop.sh", "test.sh", "notebooks.sh"}
