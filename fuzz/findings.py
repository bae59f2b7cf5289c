"""Writing findings: a reproducer `.agx`, its input set, a JSON record and a replay command.

Every file is written to a temporary name in the same directory and renamed into place, so
an interrupted campaign never leaves half a finding behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fuzz.harness import Finding


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes 0600; findings are for sharing
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


@dataclass
class FindingFiles:
    reproducer: Path
    inputs: Path
    record: Path
    command: str


class FindingStore:
    """A directory of findings; `replay_flags(finding)` gives the flags naming its pipeline."""

    def __init__(self, directory: str | Path, replay_flags):
        self.directory = Path(directory)
        self.replay_flags = replay_flags

    def write(self, finding: Finding, *, seed: int | None = None, index: int | None = None):
        digest = hashlib.sha256(finding.signature.encode()).hexdigest()[:10]
        stem = f"{_slug(finding.pass_name)}-{finding.oracle}-{digest}"
        reproducer = self.directory / f"{stem}.agx"
        inputs = self.directory / f"{stem}.inputs.json"
        record = self.directory / f"{stem}.json"
        flags = list(self.replay_flags(finding))
        command = shlex.join(
            ["agxfuzz", "check", str(reproducer), *flags]
            + (["--inputs", str(inputs)] if finding.input_set else [])
        )
        header = [
            f"; agxfuzz finding: {finding.pass_name} failed the {finding.oracle} oracle",
            f"; {finding.message}",
            f"; pipeline: {', '.join(finding.pipeline) or '(none)'}",
            f"; replay: {command}",
        ]
        write_atomically(reproducer, "\n".join(header) + "\n" + finding.program)
        if finding.input_set:
            write_atomically(inputs, json.dumps([finding.input_set.to_json()], indent=1) + "\n")
        data = {
            "pass": finding.pass_name,
            "oracle": finding.oracle,
            "message": finding.message,
            "signature": finding.signature,
            "pipeline": list(finding.pipeline),
            "file": str(reproducer),
            "inputs": str(inputs) if finding.input_set else None,
            "command": command,
            "flags": flags,
            "seed": seed,
            "program_index": index,
        }
        write_atomically(record, json.dumps(data, indent=1) + "\n")
        return FindingFiles(reproducer, inputs, record, command)


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name).strip("_") or "pass"
