"""Fixtures shared by the explorer page's browser tests (tests/browser.py has the helpers)."""

import contextlib
import io

import pytest
from browser import launch


@pytest.fixture(scope="module")
def browser():
    driver, chromium = launch()
    yield chromium
    chromium.close()
    driver.stop()


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):  # the page `explorer` writes, with MiniLM when it is installed
    from attention_workshop import cli

    folder = tmp_path_factory.mktemp("page")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["explorer", "--out", str(folder)]) == 0
    return folder / "explorer.html"
