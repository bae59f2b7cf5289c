"""Building the report: records found, each replayed, its pictures drawn, the page laid out.

Replays run one after another, each in its own forked child (`fuzz.html_report.replay`); the
pictures are drawn here by running graphviz's `dot` on each replay's dot text. A missing
`dot` is found before anything else runs (`DotMissing`); a `dot` that fails on one picture
leaves a note in its place.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fuzz import VERSION
from fuzz.html_report.cfg_dot import dot_program, svg
from fuzz.html_report.records import load_records
from fuzz.html_report.render import Entry, render_page
from fuzz.html_report.replay import NOT_REPLAYED, replay


@dataclass
class Report:
    html: str
    findings: int
    replayed: int  # findings the replay could run (whatever it then showed)
    skipped: int  # JSON files under the directory that are not finding records
    pictures: int
    seconds: float


def build_report(directory: str | Path, *, records: list[Path] | None = None,
                 title: str = "agxfuzz findings", pass_timeout: float = 10.0,
                 progress: Callable[[int, int, str], None] | None = None) -> Report:
    """The report of every finding record under `directory` (or only `records`, the paths
    of a campaign's own). `progress(done, total, name)` is called after each finding."""
    dot_program()
    started = time.monotonic()
    directory = Path(directory)
    found, skipped = load_records(directory, records)
    entries, pictures = [], 0
    for number, record in enumerate(found, 1):
        entry = Entry(record, replay(record, pass_timeout=pass_timeout))
        for side in ("before", "after"):
            picture = getattr(entry.replay, side)
            if picture is None or picture.dot is None:
                continue
            try:
                entry.svgs[side] = svg(picture.dot, graph_id=f"f{number}_{side}")
                pictures += 1
            except RuntimeError as error:
                entry.svg_notes[side] = str(error)
        entries.append(entry)
        if progress:
            progress(number, len(found), record.pass_name)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    count = f"{len(entries)} finding{'s' if len(entries) != 1 else ''}"
    subtitle = f"{count} in {directory} · generated {stamp} by agxfuzz {VERSION}"
    page = render_page(title, subtitle, entries, skipped)
    return Report(page, len(entries), sum(e.replay.status != NOT_REPLAYED for e in entries),
                  len(skipped), pictures, time.monotonic() - started)
