"""The package's imports point one way: no module reaches itself again through the modules
it imports (at module level or inside a function), and real/fast/ is imported by
real/accelerator.py alone (the accelerator is removable: test_accelerator_removable.py).

Read from the source with ast, so an import inside a function counts as much as one at the
top. Example of what this catches: catalog -> gguf_checkpoint -> checkpoint -> catalog.
"""

import ast
from pathlib import Path

import attention_workshop

ROOT = Path(attention_workshop.__file__).parent


def modules():  # -> {dotted name: Path}
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = ("attention_workshop", *path.relative_to(ROOT).with_suffix("").parts)
        found[".".join(parts).removesuffix(".__init__")] = path
    return found


def imports(path, known):  # -> {dotted names of the package's modules that `path` imports}
    deps = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attention_"):
            subs = {f"{node.module}.{a.name}" for a in node.names} & known
            deps |= subs or {node.module}
            if len(subs) < len(node.names):  # names from the module itself, too
                deps.add(node.module)
        elif isinstance(node, ast.Import):
            deps |= {a.name for a in node.names if a.name.startswith("attention_workshop")}
    return deps & known


def graph():
    found = modules()
    known = set(found)
    return {name: imports(path, known) - {name} for name, path in found.items()}


def test_no_import_circles():
    edges = graph()
    state = {}  # name -> "open" while on the path, "done" after

    def visit(name, path):
        state[name] = "open"
        for dep in sorted(edges[name]):
            if state.get(dep) == "open":
                circle = path[path.index(dep):] + [dep]
                raise AssertionError("import circle: " + " -> ".join(circle))
            if dep not in state:
                visit(dep, path + [dep])
        state[name] = "done"

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])


def test_only_the_accelerator_door_imports_real_fast():
    fast = "attention_workshop.real.fast"
    importers = {name for name, deps in graph().items() if not name.startswith(fast)
                 and any(d == fast or d.startswith(fast + ".") for d in deps)}
    assert importers == {"attention_workshop.real.accelerator"}
