"""Build the notebooks from their sources, run each from a clean kernel, store the outputs.

    .venv/bin/python notebooks/build.py          # every notebook
    .venv/bin/python notebooks/build.py 02       # the notebooks whose name starts with 02

notebooks/sources/NN_name.py holds one notebook's cells in the "percent" format that jupytext
also reads: `# %% [markdown]` starts a markdown cell (its lines are comments, "# " dropped),
`# %%` a code cell, and `# %% tags=["answers"]` a code cell with tags. A code line
`# %matplotlib inline` becomes the magic itself. The sources stay plain Python, linted by
ruff like the rest of the project.

Cells tagged "answers" are run but stored without their outputs, so a quiz's answers stay
hidden until the learner runs that cell. tests/test_notebooks.py runs every notebook again
and fails when a text output differs from the stored one.
"""

import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "sources"
HIDDEN = "answers"  # the tag of cells whose outputs are not stored
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MAGIC = re.compile(r"# (%\w+.*)")
TIMEOUT = 120  # seconds per cell before nbclient gives up
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}  # the notebooks never download
KERNEL = "attention-workshop"
# what a notebook says about its language: the kernel's own answer without its Python version,
# so the file is the same whichever Python 3.11+ ran it
LANGUAGE = {"name": "python", "codemirror_mode": {"name": "ipython", "version": 3},
            "file_extension": ".py", "mimetype": "text/x-python", "pygments_lexer": "ipython3",
            "nbconvert_exporter": "python"}


def read_cells(path):  # Path -> [(kind, text, tags)]
    """Example: "# %% [markdown]\\n# # Title\\n# %%\\nx = 1\\n" ->
    [("markdown", "# Title", []), ("code", "x = 1", [])]."""
    cells = []
    for chunk in re.split(r"^(?=# %%)", path.read_text(encoding="utf-8"), flags=re.M):
        if not chunk.startswith("# %%"):
            continue
        header, _, body = chunk.partition("\n")
        tags = json.loads(header.split("tags=", 1)[1]) if "tags=" in header else []
        lines = body.rstrip("\n").split("\n")
        if "[markdown]" in header:
            text = "\n".join(line.removeprefix("#").removeprefix(" ") for line in lines)
            cells.append(("markdown", text, tags))
        else:
            text = "\n".join(MAGIC.sub(r"\1", line) for line in lines)
            cells.append(("code", text, tags))
    return cells


def build(path):  # a source file -> an nbformat notebook, not yet run
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                  "language": "python"},
                   "language_info": LANGUAGE}
    for n, (kind, text, tags) in enumerate(read_cells(path)):
        new = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        cell = new(text, id=f"{path.stem}-{n:02d}")  # fixed ids: a rebuild changes no line
        if tags:
            cell.metadata["tags"] = tags
        nb.cells.append(cell)
    return nb


def kernel_manager(folder):
    """A kernel that is this very Python (the project's .venv), whatever kernels Jupyter has
    registered elsewhere on the machine."""
    from jupyter_client import AsyncKernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    spec = Path(folder) / "kernels" / KERNEL
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python ({sys.executable})", "language": "python",
        "env": {**OFFLINE, "IPYTHONDIR": str(Path(folder) / "ipython")}}))
    specs = KernelSpecManager(kernel_dirs=[str(Path(folder) / "kernels")])
    if os.name != "posix":  # Windows has no local sockets for the kernel: TCP on localhost
        return AsyncKernelManager(kernel_name=KERNEL, kernel_spec_manager=specs)
    # local sockets in the temporary folder: no open port (and no ipykernel warning about one)
    return AsyncKernelManager(kernel_name=KERNEL, kernel_spec_manager=specs, transport="ipc",
                              ip=str(Path(folder) / "socket"))


def execute(nb, cwd=HERE):  # notebook -> the same notebook, run top to bottom in a new kernel
    """Raises nbclient's CellExecutionError on the first cell that fails."""
    from nbclient import NotebookClient

    class Client(NotebookClient):
        async def async_start_new_kernel_client(self):
            kc = await super().async_start_new_kernel_client()
            kc.shell_channel.get_msg = _in_slices(kc.shell_channel.get_msg)
            return kc

    with tempfile.TemporaryDirectory() as folder:
        client = Client(nb, km=kernel_manager(folder), timeout=TIMEOUT, record_timing=False,
                        coalesce_streams=True, resources={"metadata": {"path": str(cwd)}})
        client.execute(cleanup_kc=True)  # shut the kernel down before its folder goes
    nb.metadata["language_info"] = LANGUAGE
    return nb


def _in_slices(get_msg, step=0.5):
    """A shell channel's get_msg that waits in slices of `step` seconds up to its timeout.

    After a cell that shows widgets, the wait for its execute_reply sometimes sleeps through
    the reply's arrival and wakes only at the timeout, with the reply (nbclient issue 312,
    seen here about once in six runs: 2 minutes lost). A short wait that finds nothing is
    simply repeated, so the reply is picked up within `step`.
    """
    from queue import Empty

    async def patient(timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = step if deadline is None else min(step, deadline - time.monotonic())
            try:
                return await get_msg(timeout=max(left, 0.0))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    return patient


def stable_widget_ids(nb, name):  # -> the same notebook with widget ids that a rerun keeps
    """Widget model ids are random; renumber them in the order a reader meets them (each
    displayed widget, then the widgets its state refers to, depth first), so a rebuild that
    changed nothing leaves the file as it was. Example: id '05820dcc...' -> md5('02_x:0')."""
    import hashlib

    import nbformat

    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    order = []

    def visit(model_id):
        if model_id in state and model_id not in order:
            order.append(model_id)
            for ref in re.findall(r"IPY_MODEL_(\w+)", json.dumps(state[model_id]["state"],
                                                                 sort_keys=True)):
                visit(ref)

    for cell in nb.cells:
        for out in cell.get("outputs", []):
            visit(out.get("data", {}).get(WIDGET_VIEW, {}).get("model_id"))
    order += sorted(set(state) - set(order), key=lambda m: json.dumps(state[m], sort_keys=True))
    text = nbformat.writes(nb)
    for n, old in enumerate(order):
        text = text.replace(old, hashlib.md5(f"{name}:{n}".encode()).hexdigest())
    return nbformat.reads(text, as_version=4)


def hide_answers(nb):  # the stored form: cells tagged "answers" keep no output
    for cell in nb.cells:
        if HIDDEN in cell.metadata.get("tags", []):
            cell.outputs, cell.execution_count = [], None
    return nb


def same_pixels(a, b):  # two base64 PNGs -> whether they show the same image
    import base64
    import io

    from PIL import Image

    def pixels(data):
        image = Image.open(io.BytesIO(base64.b64decode(data)))
        return image.size, image.convert("RGBA").tobytes()

    return a == b or pixels(a) == pixels(b)


def keep_stored_images(nb, old):  # -> nb, each PNG that shows what the stored one showed kept
    """A rebuild encodes every figure again, and another matplotlib, zlib or Pillow writes
    other bytes (a version in the metadata, another compression) for the same pixels. Such a
    PNG keeps the stored notebook's bytes (same cell id, same output), so a rebuild that
    changed nothing a reader sees leaves git clean. Example: a stored PNG and a new one of
    the same pixels with another 'Software' text chunk -> the stored bytes."""
    stored = {cell.get("id"): cell.get("outputs", []) for cell in (old.cells if old else [])}
    for cell in nb.cells:
        before = stored.get(cell.get("id"), [])
        for n, out in enumerate(cell.get("outputs", [])):
            png = out.get("data", {}).get("image/png")
            was = before[n].get("data", {}).get("image/png") if n < len(before) else None
            if png and was and same_pixels(png, was):
                out["data"]["image/png"] = was
    return nb


def main(argv=None):
    import nbformat

    prefixes = (argv if argv is not None else sys.argv[1:]) or [""]
    os.chdir(HERE)
    for source in sorted(SOURCES.glob("*.py")):
        if not any(source.stem.startswith(p) for p in prefixes):
            continue
        start = time.perf_counter()
        nb = stable_widget_ids(hide_answers(execute(build(source))), source.stem)
        target = HERE / f"{source.stem}.ipynb"
        old = nbformat.read(target, as_version=4) if target.is_file() else None
        nbformat.write(keep_stored_images(nb, old), target)
        print(f"wrote notebooks/{source.stem}.ipynb (ran in {time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
