"""What the tests compare output folders with: every path under a folder and its bytes."""

import os


def tree(folder):  # {relative path: bytes, or "folder"} of everything under `folder`
    """Example: a folder holding a.txt ("hi") and sub/ -> {"a.txt": b"hi", "sub": "folder"}."""
    seen = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            seen[os.path.relpath(os.path.join(root, name), folder)] = "folder"
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                seen[os.path.relpath(path, folder)] = f.read()
    return seen
