"""The errors a command reports in one line, and the exit status each means. `fuzz.cli.main`
prints them; the commands raise them."""

from __future__ import annotations

import re


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


_LOCATED = re.compile(r"^[^\s:][^:]*:\d+(:\d+)?: ")  # file:line: or file:line:col:


def one_line_errors(message: str) -> str:
    """The message as printed: every line prefixed `agxfuzz:` unless it already is or
    starts with the `file:line:col:` (or `file:line:`) it is about."""
    lines = message.splitlines() or [""]
    return "\n".join(
        line if line.startswith("agxfuzz") or _LOCATED.match(line) else f"agxfuzz: {line}"
        for line in lines
    )
