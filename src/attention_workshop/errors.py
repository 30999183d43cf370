"""The one exception the command line turns into a one-line message and exit code 2."""


class WorkshopError(Exception):
    """Bad input the user can fix: the message names the problem and what to do next."""
