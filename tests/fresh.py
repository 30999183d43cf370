"""A fresh Python for the tests that look at what a process imports: nothing the test process
has loaded already can hide an import."""

import subprocess
import sys


def fresh_python(code):  # Python source -> its stdout, stripped; fails if it fails
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    return done.stdout.strip()
