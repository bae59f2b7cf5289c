"""`agxfuzz corpus`: a campaign database's corpus listed, exported and imported, and the
findings every machine sharing it recorded (listed, or written out with `--out DIR`).

Export writes one entry per line, the entry's own bytes (`CorpusEntry.to_bytes`, a JSON
object), for every generator version; import reads the same and adds each entry under its
version. An import checks the whole file first: a malformed line is reported as FILE:LINE
and nothing is imported.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fuzz.campaign_db.db import DBError, open_db
from fuzz.campaign_db.entry import CorpusEntry, EntryError
from fuzz.commands.errors import UsageError
from fuzz.commands.loaders import read_text
from fuzz.findings import FindingStore, finding_from_record, write_atomically
from fuzz.generate import GENERATOR_VERSION


def run_corpus(args) -> int:
    try:
        db = open_db(args.db, read_only=args.action != "import")
    except DBError as error:
        raise UsageError(f"agxfuzz: {error}") from None
    try:
        return {"list": _list, "export": _export, "import": _import,
                "findings": _findings}[args.action](db, args)
    except DBError as error:
        raise UsageError(f"agxfuzz: {error}") from None
    finally:
        db.close()


def _list(db, args) -> int:
    entries = db.corpus_entries()
    print(f"corpus in {db.location}: {len(entries)} entries of generator version "
          f"{GENERATOR_VERSION}")
    if entries:
        print(f"  {'key':<16}  {'version':>7}  {'features':>8}  origin")
    for entry in entries:
        print(f"  {entry.key:<16}  {entry.generator_version:>7}  {len(entry.features):>8}  "
              f"{entry.origin}")
    others = {v: n for v, n in db.corpus_versions().items() if v != GENERATOR_VERSION}
    if others:
        print("other generator versions (kept, not replayed): "
              + ", ".join(f"v{v}: {n} entries" for v, n in sorted(others.items())))
    return 0


def _all_entries(db) -> list:
    return [entry for version in db.corpus_versions() for entry in db.corpus_entries(version)]


def _export(db, args) -> int:
    entries = _all_entries(db)
    text = "".join(entry.to_bytes().decode() + "\n" for entry in entries)
    if args.out == "-":
        sys.stdout.write(text)
        return 0

    try:
        write_atomically(Path(args.out), text)
    except OSError as error:
        raise UsageError(f"agxfuzz: {args.out}: cannot write: {error.strerror}") from None
    print(f"exported {len(entries)} entries from {db.location} to {args.out}")
    return 0


def _import(db, args) -> int:
    entries = []
    for number, line in enumerate(read_text(args.file).splitlines(), 1):
        if not line.strip():
            continue
        try:
            entries.append(CorpusEntry.from_bytes(line.encode()))
        except EntryError as error:
            raise UsageError(f"{args.file}:{number}: {error}") from None
    new = sum(db.corpus_add(entry) for entry in entries)
    print(f"imported {new} new entries of {len(entries)} into {db.location} "
          f"({len(entries) - new} already there)")
    return 0


def _findings(db, args) -> int:
    records = db.finding_records()
    print(f"findings in {db.location}: {len(records)}")
    for signature, record in records:
        try:
            data = json.loads(record)
            line = f"{data['pass']}: {data['oracle']}: {data['message']}"
            where = (f"seed {data.get('seed')} program {data.get('program_index')}, "
                     f"shard {data.get('shard')}")
        except (ValueError, KeyError, TypeError):
            line, where = signature, "a record this version cannot read"
        written = "written" if db.written(signature) else "not written yet"
        print(f"  {line}")
        print(f"    {where}; {written} by {db.claimant(signature) or 'nobody (unclaimed)'}")
    if args.out:
        _write_findings(records, args.out)
    return 0


def _write_findings(records, out: str) -> None:
    """A local copy of the shared findings: each record's files, as its run wrote them (its
    replay flags kept). Claims are not touched: the copy is nobody's to own."""
    store = FindingStore(out, lambda finding: [])
    count = 0
    for _, record in records:
        try:
            finding, data = finding_from_record(record)
        except (ValueError, KeyError, TypeError):
            continue  # listed above as unreadable
        try:
            store.write(finding, seed=data.get("seed"), index=data.get("program_index"),
                        shard=data.get("shard"), flags=data.get("flags") or [])
        except OSError as error:
            raise UsageError(f"agxfuzz: {out}: cannot write: {error.strerror}") from None
        count += 1
    print(f"wrote {count} findings to {out}")
