"""`agxfuzz report`: the findings of a directory as one self-contained HTML page; and the
page `run --html` and `zoo --html` write at the end of a campaign.

Graphviz's `dot` draws the CFGs: without it the command stops with a one-line error (exit
2) before replaying anything, and `run`/`zoo` with `--html` refuse to start, rather than
spend a campaign and then fail to write its report.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fuzz.commands.errors import UsageError
from fuzz.findings import write_atomically
from fuzz.html_report import DotMissing, build_report, dot_program


def require_dot(flag: str = "agxfuzz report") -> None:
    """UsageError (exit 2) naming `dot` when graphviz is missing."""
    try:
        dot_program()
    except DotMissing as error:
        raise UsageError(f"{flag}: {error}") from None


def report_command(args) -> int:
    directory = Path(args.directory)
    if not directory.exists():
        raise UsageError(f"{directory}: no such directory")
    if not directory.is_dir():
        raise UsageError(f"{directory}: not a directory (give the findings directory)")
    require_dot()
    write_report(args.output, directory, pass_timeout=args.pass_timeout,
                 title=args.title or "agxfuzz findings", verbose=True)
    return 0


def write_report(output: str | Path, directory: str | Path, *, records=None,
                 title: str = "agxfuzz findings", pass_timeout: float = 10.0,
                 verbose: bool = False) -> None:
    """Build the report of `directory` (only `records`, when given) and write it to
    `output` atomically; one line says what was written."""
    def progress(done: int, total: int, name: str) -> None:
        print(f"  [{done}/{total}] {name}", file=sys.stderr, flush=True)

    try:
        report = build_report(directory, records=records, title=title,
                              pass_timeout=pass_timeout, progress=progress if verbose else None)
    except DotMissing as error:
        raise UsageError(f"agxfuzz report: {error}") from None
    try:
        write_atomically(Path(output), report.html)
    except OSError as error:
        raise UsageError(f"{output}: cannot write: {error.strerror or error}") from None
    size = len(report.html.encode())
    replayed = "" if report.replayed == report.findings else (
        f", {report.findings - report.replayed} not replayable")
    skipped = f", {report.skipped} other JSON files skipped" if report.skipped else ""
    count = f"{report.findings} finding{'' if report.findings == 1 else 's'}"
    print(f"report: {output}: {count}{replayed}{skipped}, "
          f"{report.pictures} CFG pictures, {size / 1024:.0f} KB in {report.seconds:.1f} s")
