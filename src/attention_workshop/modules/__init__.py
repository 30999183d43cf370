"""One file per module of the workshop: each computes, then logs, then returns its results."""
