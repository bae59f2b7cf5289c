"""Finding records as the report reads them: found under a directory, loaded leniently.

A findings directory (`agxfuzz run --out`) holds, per finding, `STEM.json` (the record
`fuzz.findings.FindingStore` writes), `STEM.agx` (the reproducer) and `STEM.inputs.json`;
a zoo run's directory holds one such directory per variant. A record's reproducer and
inputs are the files of those names beside it, or where the record says they are.
A JSON file that is not a finding record is listed as skipped, never fatal: the report is
for reading what there is.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

MAX_RECORD_BYTES = 4 << 20  # far more than a record; a stray large JSON file is skipped unread
MAX_REPRODUCER_BYTES = 16 << 20
REQUIRED = ("pass", "oracle", "message")


@dataclass
class Record:
    """One finding: its record's fields, the reproducer's text and where its inputs are."""

    path: Path
    data: dict
    reproducer: Path | None = None
    reproducer_text: str | None = None
    inputs: Path | None = None
    problems: list[str] = field(default_factory=list)  # what could not be read, for the page

    @property
    def pass_name(self) -> str:
        return str(self.data.get("pass", "?"))

    @property
    def oracle(self) -> str:
        return str(self.data.get("oracle", "?"))

    @property
    def message(self) -> str:
        return str(self.data.get("message", ""))

    @property
    def pipeline(self) -> list[str]:
        pipeline = self.data.get("pipeline") or []
        return [str(name) for name in pipeline] if isinstance(pipeline, list) else []

    @property
    def flags(self) -> list[str]:
        flags = self.data.get("flags") or []
        return [str(flag) for flag in flags] if isinstance(flags, list) else []

    @property
    def command(self) -> str:
        return str(self.data.get("command") or "")


@dataclass
class Skipped:
    path: Path
    reason: str


def record_paths(directory: Path) -> list[Path]:
    """Every `*.json` under `directory` but the input sets, in path order. Hidden files and
    directories are not looked into: the campaign database (`.agxfuzz-db`) lives there, and
    temporary files being written."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        found += [Path(root) / name for name in files
                  if name.endswith(".json") and not name.endswith(".inputs.json")
                  and not name.startswith(".")]
    return sorted(found)


def load_record(path: Path) -> Record | Skipped:
    try:
        if path.stat().st_size > MAX_RECORD_BYTES:
            return Skipped(path, "larger than any finding record")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        return Skipped(path, f"cannot read: {getattr(error, 'strerror', None) or error}")
    except ValueError as error:
        return Skipped(path, f"not JSON: {error}")
    if not isinstance(data, dict) or any(key not in data for key in REQUIRED):
        return Skipped(path, "not a finding record (no pass, oracle and message)")
    record = Record(path, data)
    file = data.get("file")
    if isinstance(file, str) and file:
        record.reproducer = _beside(file, path.parent)
        if record.reproducer is None:
            record.problems.append(f"reproducer {file} not found")
        else:
            record.reproducer_text = _read(record.reproducer, record.problems)
    else:
        record.problems.append("the record names no reproducer")
    inputs = data.get("inputs")
    if isinstance(inputs, str) and inputs:
        record.inputs = _beside(inputs, path.parent)
        if record.inputs is None:
            record.problems.append(f"input set {inputs} not found")
    return record


def load_records(directory: Path, paths: list[Path] | None = None) -> tuple[list[Record], list[Skipped]]:
    """The records under `directory` (or just `paths`), and the JSON files skipped."""
    records, skipped = [], []
    for path in record_paths(directory) if paths is None else paths:
        loaded = load_record(Path(path))
        (records if isinstance(loaded, Record) else skipped).append(loaded)
    return records, skipped


def _beside(name: str, base: Path) -> Path | None:
    """The file of `name`'s name next to the record, else `name` itself: a copied or moved
    findings directory keeps its files together, while the recorded path may be relative
    to where the campaign ran or point at the old copy."""
    path = Path(name)
    beside = base / path.name
    if beside.is_file():
        return beside
    return path if path.is_file() else None


def _read(path: Path, problems: list[str]) -> str | None:
    try:
        if path.stat().st_size > MAX_REPRODUCER_BYTES:
            problems.append(f"{path}: larger than {MAX_REPRODUCER_BYTES >> 20} MB, not shown")
            return None
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        problems.append(f"{path}: cannot read: {getattr(error, 'strerror', None) or error}")
        return None
