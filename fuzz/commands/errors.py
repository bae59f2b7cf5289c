"""The errors a command reports in one line, and the exit status each means. `fuzz.cli.main`
prints them; the commands raise them."""

from __future__ import annotations


class UserError(Exception):
    """A problem with what the user gave us: reported in one line, exit status 1."""

    exit_status = 1


class UsageError(UserError):
    """A bad flag value argparse cannot see (an unknown pass, say): exit status 2."""

    exit_status = 2


class InternalError(UserError):
    """A harness bug, not a verdict on the passes: exit status 3."""

    exit_status = 3


class InvalidProgram(UsageError):
    """A file that does not parse or verify: bad input (exit 2) for the commands that judge
    passes or run the program, where 1 means "fails"; `verify` and `fmt` exit 1, their
    verdict."""
