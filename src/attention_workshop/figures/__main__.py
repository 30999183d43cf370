"""`python -m attention_workshop.figures FOLDER NAME...`: recompute Modules 0-2, draw the named
toy figures into FOLDER. Used by figures.background; deterministic like `run` itself."""

import sys
from pathlib import Path

from attention_workshop.figures import toy
from attention_workshop.report import Log
from attention_workshop.workshop import compute

folder, names = Path(sys.argv[1]), sys.argv[2:]
toy.draw_all(compute(Log(), real=False), folder, names)
