"""`python -m attention_workshop` runs the same command line as `attention-workshop`."""

import sys

from attention_workshop.cli import program

sys.exit(program())
