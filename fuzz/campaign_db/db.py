"""The campaign database: corpus entries and findings shared by every process of a campaign
and by every machine that runs a shard of it, in a directory or on a Redis server.

`open_db(spec)` opens one: `spec` is `redis://HOST:PORT/N` (also `rediss://`, `unix://`) or
a directory path. `agxfuzz run` uses `OUT/.agxfuzz-db` (beside the findings it writes) unless
`--db` names another; N machines share a campaign by naming one Redis database.

What is stored where:

- Values (corpus entries, finding records) go through Hypothesis's example databases,
  `DirectoryBasedExampleDatabase` for a directory (under `DIR/examples/`) and
  `RedisExampleDatabase` for Redis, as sets of byte strings under the keys
  `agxfuzz/campaign_db/v<GENERATOR_VERSION>` (one per generator version, so a change of encoding
  never replays old choices as new ones, nor drops them), `agxfuzz/campaign_db/versions` (the
  versions present) and `agxfuzz/findings`.
- Claims ("who writes this finding's files") need an atomic test-and-set, which Hypothesis's
  databases do not have (`save` says nothing of whether the value was there), so they use the
  store directly: Redis `SET key owner NX` through the `redis` client, and in a directory a
  file made exclusive by `os.link` of a finished temporary file onto the claim's name (atomic
  like `O_CREAT|O_EXCL`, and the claim file is never seen empty or half written). A claim
  holds its owner's name, so a run restarted on the same findings directory can finish what
  it claimed before being killed.

Finding records are opaque bytes here; `fuzz.findings` says what is in them.
"""

from __future__ import annotations

import functools
import hashlib
import os
import socket
import tempfile
from datetime import timedelta
from pathlib import Path

from hypothesis.database import DirectoryBasedExampleDatabase, ReadOnlyDatabase

from fuzz.campaign_db.entry import CorpusEntry, EntryError
from fuzz.generate import GENERATOR_VERSION

FINDINGS_KEY = b"agxfuzz/findings"
VERSIONS_KEY = b"agxfuzz/campaign_db/versions"
DEFAULT_DB_NAME = ".agxfuzz-db"  # inside the findings directory, when --db is not given
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
# Hypothesis's Redis database lets keys expire unused; a campaign's corpus and findings
# should outlive a quiet month (each write and read renews the time).
REDIS_EXPIRY = timedelta(days=365)


class DBError(Exception):
    """A database that cannot be opened or used: reported in one line."""


def corpus_key(version: int) -> bytes:
    return b"agxfuzz/campaign_db/v%d" % version


def default_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def open_db(spec: str, *, owner: str | None = None, read_only: bool = False) -> CampaignDB:
    """The database `spec` names. `owner` names who holds the claims this handle takes
    (`agxfuzz run` passes its findings directory's identity); by default host and pid.
    `read_only` (for listing and export): values are read through Hypothesis's
    ReadOnlyDatabase, nothing is claimed or marked, and a directory must already exist."""
    owner = owner or default_owner()
    if spec.startswith(REDIS_SCHEMES):
        db = RedisDB(spec, owner)
    elif "://" in spec:
        raise DBError(f"{spec}: not a database: give a directory or redis://HOST:PORT/N")
    elif read_only and not (Path(spec) / "marks").is_dir():
        raise DBError(f"{spec}: no campaign database here")
    else:
        db = DirectoryDB(Path(spec), owner)
    if read_only:
        db.examples = ReadOnlyDatabase(db.examples)
        db.read_only = True
    return db


def _reported(method):
    """The method, its store's errors (a Redis server gone, a full disk) raised as DBError
    naming the database, so a caller handles one kind of failure."""

    @functools.wraps(method)
    def reported(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except DBError:
            raise
        except self._store_errors as error:
            raise DBError(f"{self.location}: {type(error).__name__}: {error}") from None

    return reported


def _mark(kind: str, name: str) -> str:
    """A fixed-length, file-name-safe name for a mark: signatures hold any characters."""
    return f"{kind}/{hashlib.sha256(name.encode()).hexdigest()[:32]}"


class CampaignDB:
    """What a campaign keeps and shares. Backends give `examples` (a Hypothesis example
    database) and three primitives on named marks: `_take` (atomic set-if-absent; True for
    exactly one caller), `_holder` (who took it, or None) and `close`."""

    location: str
    owner: str
    examples: object  # hypothesis.database.ExampleDatabase
    read_only: bool = False
    _store_errors: tuple = (OSError,)

    def _take(self, name: str) -> bool:
        raise NotImplementedError

    def _holder(self, name: str) -> str | None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> CampaignDB:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"

    # Findings

    @_reported
    def claim(self, signature: str) -> bool:
        """True for exactly one caller per signature, across processes and machines: the
        one that writes the finding's files."""
        return self._take_mark(_mark("claim", signature))

    def _take_mark(self, name: str) -> bool:
        if self.read_only:
            raise DBError(f"{self.location}: opened read-only")
        return self._take(name)

    @_reported
    def claimant(self, signature: str) -> str | None:
        """The owner holding the claim on `signature`, or None if nobody claimed it."""
        return self._holder(_mark("claim", signature))

    @_reported
    def record_finding(self, signature: str, record: bytes) -> None:
        """Keep the finding's record (once per signature: a later record of the same
        signature is not stored). Stored before the claim, so a process killed between the
        two leaves a record the next run can write out."""
        mark = _mark("recorded", signature)
        if self._holder(mark) is not None:
            return
        envelope = signature.encode() + b"\n" + record
        self.examples.save(FINDINGS_KEY, envelope)
        self._check_saved(FINDINGS_KEY, envelope)
        self._take_mark(mark)

    def findings(self) -> list[bytes]:
        """Every finding record of every machine, one per signature, in signature order."""
        return [record for _, record in self.finding_records()]

    @_reported
    def finding_records(self) -> list[tuple[str, bytes]]:
        """(signature, record) for every recorded finding, one per signature (two machines
        racing on one signature may both store a record: the first in byte order stands)."""
        records: dict[str, bytes] = {}
        for envelope in sorted(self.examples.fetch(FINDINGS_KEY)):
            signature, _, record = envelope.partition(b"\n")
            records.setdefault(signature.decode(errors="replace"), record)
        return sorted(records.items())

    @_reported
    def mark_written(self, signature: str) -> None:
        """The finding's files are written (somewhere): nothing is left to re-materialize."""
        self._take_mark(_mark("written", signature))

    @_reported
    def written(self, signature: str) -> bool:
        return self._holder(_mark("written", signature)) is not None

    # The corpus

    @_reported
    def corpus_add(self, entry: CorpusEntry) -> bool:
        """Add `entry` under its generator version's key; True if no entry with its choices
        was there (exactly one of several machines adding it at once gets True)."""
        mark = _mark(f"corpus/v{entry.generator_version}", entry.key)
        if self._holder(mark) is not None:
            return False
        # Saved before the mark is taken: a process killed in between leaves the entry
        # stored and unmarked, and the next add of it is a harmless second copy that
        # `corpus_entries` folds into one (never an entry marked but missing).
        self.examples.save(corpus_key(entry.generator_version), entry.to_bytes())
        self.examples.save(VERSIONS_KEY, str(entry.generator_version).encode())
        return self._take_mark(mark)

    @_reported
    def corpus_entries(self, version: int | None = None) -> list[CorpusEntry]:
        """The entries of one generator version (default: the current one), one per choice
        sequence, in key order."""
        if version is None:
            version = GENERATOR_VERSION
        key = corpus_key(version)
        entries: dict[str, CorpusEntry] = {}
        for data in sorted(self.examples.fetch(key)):
            try:
                entry = CorpusEntry.from_bytes(data)
            except EntryError as error:
                raise DBError(f"{self.location}: {key.decode()} holds a value that is "
                              f"{error}") from None
            entries.setdefault(entry.key, entry)
        return [entries[k] for k in sorted(entries)]

    @_reported
    def corpus_versions(self) -> dict[int, int]:
        """Entries per generator version, for every version stored (the current included)."""
        versions = sorted({int(v) for v in self.examples.fetch(VERSIONS_KEY) if v.isdigit()})
        return {version: len(self.corpus_entries(version)) for version in versions}

    def _check_saved(self, key: bytes, value: bytes) -> None:
        """Hypothesis's directory database swallows OSError on save: a finding must not
        vanish silently, so its record is read back."""


class DirectoryDB(CampaignDB):
    """A directory: `examples/` is a Hypothesis DirectoryBasedExampleDatabase, `marks/`
    holds one file per claim or mark, taken by `os.link` (exclusive and atomic)."""

    def __init__(self, path: Path, owner: str):
        self.path = path
        self.location = str(path)
        self.owner = owner
        try:
            (path / "marks").mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise DBError(f"{path}: cannot use as a database: {error.strerror}") from None
        self.examples = DirectoryBasedExampleDatabase(path / "examples")

    def _take(self, name: str) -> bool:
        target = self.path / "marks" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".take.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(self.owner)
            os.link(temporary, target)
            return True
        except FileExistsError:
            return False
        finally:
            os.unlink(temporary)

    def _holder(self, name: str) -> str | None:
        try:
            return (self.path / "marks" / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def _check_saved(self, key: bytes, value: bytes) -> None:
        if value not in set(self.examples.fetch(key)):
            raise DBError(f"{self.location}: could not store a finding record (disk full? "
                          "permissions?)")

    def close(self) -> None:
        pass  # nothing held open: every operation opens and closes its files


class RedisDB(CampaignDB):
    """A Redis database: Hypothesis's RedisExampleDatabase for the sets (keys without a
    prefix, so `redis-cli smembers agxfuzz/findings` shows them), `SET NX` for the marks
    under `agxfuzz/mark/...`."""

    def __init__(self, url: str, owner: str):
        try:
            import redis  # loaded late: optional, only for a redis:// database
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError:
            raise DBError(f"{url}: the redis client package is not installed "
                          "(pip install redis)") from None

        self.location = url
        self.owner = owner
        try:
            self.client = redis.Redis.from_url(url, socket_connect_timeout=5)
            self.client.ping()
        except ValueError as error:
            raise DBError(f"{url}: not a Redis URL: {error}") from None
        except redis.RedisError as error:
            raise DBError(f"{url}: cannot reach Redis: {error}") from None
        self.examples = RedisExampleDatabase(self.client, expire_after=REDIS_EXPIRY,
                                             key_prefix=b"")
        self._store_errors = (redis.RedisError, OSError)

    def _take(self, name: str) -> bool:
        return bool(self.client.set(f"agxfuzz/mark/{name}", self.owner, nx=True))

    def _holder(self, name: str) -> str | None:
        value = self.client.get(f"agxfuzz/mark/{name}")
        return None if value is None else value.decode(errors="replace")

    def close(self) -> None:
        self.client.close()
