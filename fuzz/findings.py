"""Writing findings: a reproducer `.agx`, its input set, a JSON record and a replay command.

Every file is written to a temporary name in the same directory and renamed into place, so
an interrupted campaign never leaves half a finding behind. With a campaign database
(`fuzz.campaign_db.db`), a finding is recorded there, claimed, then written (`write_claimed`),
so machines sharing the database write each finding once, and a run writes at its start
what a killed run recorded but never wrote (`restore_unwritten`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import socket
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from fuzz.campaign_db.db import DBError
from fuzz.harness import Finding
from fuzz.processes import recorded_memory_limit
from oracles.inputs import InputSet


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

    def write(self, finding: Finding, *, seed: int | None = None, index: int | None = None,
              shard: str | None = None, flags: list[str] | None = None):
        """Write the finding's files; `flags` replays its pipeline (default: replay_flags)."""
        digest = hashlib.sha256(finding.signature.encode()).hexdigest()[:10]
        stem = f"{_slug(finding.pass_name)}-{finding.oracle}-{digest}"
        reproducer = self.directory / f"{stem}.agx"
        inputs = self.directory / f"{stem}.inputs.json"
        record = self.directory / f"{stem}.json"
        flags = list(self.replay_flags(finding) if flags is None else flags)
        # A memory-limit finding replays under the limit it was found under.
        limit = recorded_memory_limit(finding.oracle, finding.message)
        options = ["--pass-memory", str(limit)] if limit else []
        command = shlex.join(
            ["agxfuzz", "check", str(reproducer), *flags, *options]
            + (["--inputs", str(inputs)] if finding.input_set else [])
        )
        header = [
            f"; agxfuzz finding: {finding.pass_name} failed the {finding.oracle} oracle",
            f"; {finding.message}",
            f"; pipeline: {', '.join(finding.pipeline) or '(none)'}",
            f"; replay: {command}",
            *_run_lines([*flags, *options], finding.input_set),
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
            "shard": shard,
        }
        write_atomically(record, json.dumps(data, indent=1) + "\n")
        return FindingFiles(reproducer, inputs, record, command)

    def identity(self) -> str:
        """Who this directory is, as the owner of the claims a campaign writing here takes:
        host and path, plus a random tag made once (`.agxfuzz-id`), so a restarted run knows
        its own claims and two machines with the same path do not share them."""
        path = self.directory / ".agxfuzz-id"
        try:
            return path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            pass

        tag = f"{socket.gethostname()}:{self.directory.resolve()}#{uuid.uuid4().hex[:8]}"
        self.directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".agxfuzz-id.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(tag + "\n")
            os.link(temporary, path)  # never seen half written; the first run's tag stands
        except FileExistsError:
            return path.read_text(encoding="utf-8").strip()
        finally:
            os.unlink(temporary)
        return tag


def finding_record(finding: Finding, *, seed, index, shard, flags) -> bytes:
    """What a campaign database keeps of a finding: enough to write its files anywhere."""
    return json.dumps({
        "pass": finding.pass_name, "oracle": finding.oracle, "message": finding.message,
        "signature": finding.signature, "pipeline": list(finding.pipeline),
        "program": finding.program,
        "input_set": finding.input_set.to_json() if finding.input_set else None,
        "seed": seed, "program_index": index, "shard": shard, "flags": list(flags),
        # Only an oracle that builds its signature from structured errors sets one.
        **({"signature_key": finding.signature_key} if finding.signature_key is not None else {}),
    }, sort_keys=True).encode()


def finding_from_record(record: bytes) -> tuple[Finding, dict]:
    """The finding a record holds, and the record (seed, program_index, shard, flags)."""
    data = json.loads(record)
    input_set = InputSet.from_json(data["input_set"]) if data.get("input_set") else None
    finding = Finding(data["pass"], data["oracle"], data["message"], tuple(data["pipeline"]),
                      data["program"], input_set, data.get("signature_key"))
    return finding, data


def write_claimed(db, store: FindingStore, finding: Finding, *, seed, index, shard):
    """Write a new finding's files unless another owner sharing `db` claimed it (then None).
    In this order, so a process killed anywhere loses nothing: the record goes into the
    database, then the claim is taken, then the files are written and marked written; a run
    restarted on this directory writes what was recorded here but not written
    (`restore_unwritten`). With no database, the files are simply written."""
    if db is None:
        return store.write(finding, seed=seed, index=index, shard=shard)

    flags = list(store.replay_flags(finding))
    signature = finding.signature
    try:
        db.record_finding(signature, finding_record(finding, seed=seed, index=index,
                                                    shard=shard, flags=flags))
        # A claim this directory holds already (an earlier run here found it): write again.
        if not db.claim(signature) and db.claimant(signature) != db.owner:
            return None
    except DBError as error:  # the database is gone: a finding is never dropped for that
        _warn(f"{error}; writing this finding unclaimed")
        return store.write(finding, seed=seed, index=index, shard=shard, flags=flags)
    files = store.write(finding, seed=seed, index=index, shard=shard, flags=flags)
    try:
        db.mark_written(signature)
    except DBError as error:
        _warn(f"{error}; the finding is written, its mark is not")
    return files


def _warn(message: str) -> None:
    print(f"agxfuzz: warning: {message}", file=sys.stderr, flush=True)


def restore_unwritten(db, store: FindingStore) -> list[FindingFiles]:
    """Write the findings `db` recorded whose files nobody wrote: those this directory
    claimed (a run here was killed between claim and write) and those nobody claimed (killed
    between record and claim: claimed now). Another machine's claim is left to it."""
    restored = []
    try:
        for signature, record in db.finding_records():
            if db.written(signature):
                continue
            if db.claimant(signature) != db.owner and not db.claim(signature):
                continue
            finding, data = finding_from_record(record)
            restored.append(store.write(finding, seed=data.get("seed"),
                                        index=data.get("program_index"),
                                        shard=data.get("shard"), flags=data.get("flags")))
            db.mark_written(signature)
    except DBError as error:  # the campaign can still run and write what it finds
        _warn(f"{error}; findings recorded there but never written stay unwritten")
    return restored


def _run_lines(flags: list[str], input_set) -> list[str]:
    """The replay as lit runs it (docs/goldens.md), the input set inside the file: `check`
    exits 1 while the bug is there, so the reproducer in a lit suite passes once it is fixed."""
    flags = [_absolute_module(flag) if before == "--pass" else flag
             for before, flag in zip(["", *flags], flags)]  # lit runs elsewhere than here
    check = " ".join(["agxfuzz check %s", shlex.join(flags).replace("%", "%%")]).rstrip()
    if not input_set:
        return [f"; RUN: {check}"]
    sets = json.dumps([input_set.to_json()], separators=(",", ":")).replace("%", "%%")
    return [f"; RUN: echo {shlex.quote(sets)} > %t.json", f"; RUN: {check} --inputs %t.json"]


def _absolute_module(spec: str) -> str:
    module, sep, attribute = spec.rpartition(":")
    if sep and (module.endswith(".py") or "/" in module):
        return f"{os.path.abspath(module)}:{attribute}"
    return spec


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name).strip("_") or "pass"
