"""Checking passes on one program in a child process, so a pass that hangs, crashes or eats
memory becomes a finding (for `check`, `repro` and `reduce`), never the command's own
death: `fuzz.processes.check_supervised`, its harness bugs reported as internal errors."""

from __future__ import annotations

from fuzz.commands.errors import InternalError, UsageError
from fuzz.processes import HANG_GRACE, PASS_MEMORY_FLOOR_MB, HarnessError, check_supervised

PASS_MEMORY_MB = 4096  # what a pass may add to its process's address space (check, repro)


def check_isolated(harness, fn, pipelines, *, memory_mb: int | None = PASS_MEMORY_MB) -> list:
    """`harness.check` in a forked child: a pass that exits, kills its process, defeats
    its deadline or outgrows its memory is a finding, never a green check nor a `check`
    that exits with the pass's status."""
    try:
        return check_supervised(harness, fn, pipelines, memory_mb=memory_mb,
                                hang_grace=HANG_GRACE)
    except HarnessError as error:
        raise InternalError(f"agxfuzz: internal error (a harness bug, please report): "
                            f"{error}") from None


def pass_memory(args) -> int:
    """--pass-memory, refused (exit 2) below the floor: the limit is what a pass may add to
    its process's address space, and no pass runs in less."""
    megabytes = getattr(args, "pass_memory", None) or PASS_MEMORY_MB
    if megabytes < PASS_MEMORY_FLOOR_MB:
        raise UsageError(f"agxfuzz: --pass-memory {megabytes}: below the floor of "
                         f"{PASS_MEMORY_FLOOR_MB} MB a pass needs to run at all")
    return megabytes
