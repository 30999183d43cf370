"""The exceptions the command line turns into a one-line message (and an exit code)."""

import signal


class WorkshopError(Exception):
    """Bad input the user can fix: the message names the problem and what to do next."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) or SIGTERM, carrying what the interrupted command left behind.

    Example: Interrupted(signal.SIGTERM, "'out' is as it was") -> the command line prints
    "interrupted; 'out' is as it was" and exits with 128 + 15. `left` None: the command line
    says what it knows (interrupts.noted(), else that nothing was written)."""

    def __init__(self, signum=signal.SIGINT, left=None):
        super().__init__(left)
        self.signum = int(signum)
        self.left = left
