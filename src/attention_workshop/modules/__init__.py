"""One file per module of the workshop: each computes, then logs, and returns what its figures need."""
