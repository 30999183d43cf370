"""What the tests compare output folders with: every path under a folder and its bytes."""

import os


def tree(folder):  # {relative path: bytes | "folder" | None} of everything under `folder`
    """Example: a folder holding a.txt ("hi") and sub/ -> {"a.txt": b"hi", "sub": "folder"}.
    A file that cannot be read (chmod 000), a link or a FIFO shows as None."""
    seen = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            key = os.path.relpath(path, folder)
            if os.path.islink(path):
                seen[key] = None
            elif os.path.isdir(path):
                seen[key] = "folder"
            elif os.path.isfile(path) and os.stat(path).st_mode & 0o444:
                with open(path, "rb") as f:
                    seen[key] = f.read()
            else:
                seen[key] = None
    return seen
