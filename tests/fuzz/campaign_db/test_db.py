"""The campaign database's contract, on a directory and on a real Redis server alike:
claims are exclusive (also among racing processes), findings and corpus entries are kept
once, entries of other generator versions are kept apart and counted."""

from __future__ import annotations

import multiprocessing

import pytest

from fuzz.campaign_db.db import DBError, DirectoryDB, RedisDB, open_db
from fuzz.campaign_db.entry import CorpusEntry
from fuzz.generate import GENERATOR_VERSION
from tests.redis_server import redis_server


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(params=["directory", "redis"])
def spec(request, tmp_path):
    """A fresh, empty database of each kind (Redis: a flushed database 1)."""
    if request.param == "directory":
        return str(tmp_path / "db")
    url = request.getfixturevalue("redis_url").rsplit("/", 1)[0] + "/1"
    import redis

    redis.Redis.from_url(url).flushdb()
    return url


def entry(choices: bytes, version: int = GENERATOR_VERSION, **kwargs) -> CorpusEntry:
    return CorpusEntry(choices=choices, generator_version=version, **kwargs)


def test_open_db_picks_the_backend_from_the_spec(spec):
    with open_db(spec) as db:
        assert isinstance(db, RedisDB if spec.startswith("redis://") else DirectoryDB)
        assert db.location == spec


def test_a_claim_is_taken_once_and_names_its_owner(spec):
    with open_db(spec, owner="machine-a") as a, open_db(spec, owner="machine-b") as b:
        assert a.claimant("pass|refinement|N") is None
        assert a.claim("pass|refinement|N")
        assert not b.claim("pass|refinement|N")
        assert not a.claim("pass|refinement|N")
        assert b.claimant("pass|refinement|N") == "machine-a"
        assert b.claim("other|verifier|a long message with / and \n in it")


def test_findings_are_recorded_once_per_signature_and_seen_by_every_handle(spec):
    with open_db(spec, owner="a") as a, open_db(spec, owner="b") as b:
        a.record_finding("s1", b'{"n": 1}')
        b.record_finding("s1", b'{"n": 2}')  # the same bug found again: not a second record
        b.record_finding("s2", b"binary\n\x00record")
        assert a.findings() == [b'{"n": 1}', b"binary\n\x00record"]
        assert b.finding_records() == [("s1", b'{"n": 1}'), ("s2", b"binary\n\x00record")]
        assert not a.written("s1")
        b.mark_written("s1")
        assert a.written("s1") and not a.written("s2")


def test_corpus_add_says_whether_the_choices_were_new(spec):
    with open_db(spec) as db:
        first = entry(b"\x01\x02", features=frozenset({"pass:dce"}), origin="seed 1 program 0")
        assert db.corpus_add(first)
        # Same choices, other features or origin: the same program, not a new entry.
        assert not db.corpus_add(entry(b"\x01\x02", features=frozenset({"x"}), origin="other"))
        assert db.corpus_add(entry(b"\x03"))
        assert db.corpus_entries() == sorted([first, entry(b"\x03")], key=lambda e: e.key)


def test_other_generator_versions_are_kept_apart_and_counted(spec):
    with open_db(spec) as db:
        db.corpus_add(entry(b"\x01"))
        db.corpus_add(entry(b"\x01", version=GENERATOR_VERSION - 1))
        db.corpus_add(entry(b"\x02", version=GENERATOR_VERSION - 1))
        assert [e.choices for e in db.corpus_entries()] == [b"\x01"]
        assert {e.choices for e in db.corpus_entries(GENERATOR_VERSION - 1)} == {b"\x01", b"\x02"}
        assert db.corpus_versions() == {GENERATOR_VERSION - 1: 2, GENERATOR_VERSION: 1}


def test_an_entry_stored_without_its_mark_is_read_once_and_added_again(spec):
    """A process killed between storing an entry and marking it: nothing lost, no double."""
    with open_db(spec) as db:
        kept = entry(b"\x07", origin="killed before the mark")
        db.examples.save(b"agxfuzz/campaign_db/v%d" % GENERATOR_VERSION, kept.to_bytes())
        assert db.corpus_entries() == [kept]
        assert db.corpus_add(entry(b"\x07", origin="found again"))
        assert [e.choices for e in db.corpus_entries()] == [b"\x07"]


def test_junk_in_the_corpus_key_is_a_one_line_error(spec):
    with open_db(spec) as db:
        db.examples.save(b"agxfuzz/campaign_db/v%d" % GENERATOR_VERSION, b"not json")
        with pytest.raises(DBError, match=r"agxfuzz/campaign_db/v\d+ holds a value that is not a "):
            db.corpus_entries()


def test_a_read_only_handle_reads_and_refuses_to_write(spec):
    with open_db(spec) as db:
        db.corpus_add(entry(b"\x05"))
        db.record_finding("s", b"r")
    with open_db(spec, read_only=True) as db:
        assert [e.choices for e in db.corpus_entries()] == [b"\x05"]
        assert db.findings() == [b"r"]
        with pytest.raises(DBError, match="opened read-only"):
            db.claim("s")
        with pytest.raises(DBError, match="opened read-only"):
            db.corpus_add(entry(b"\x06"))
    with open_db(spec) as db:
        assert [e.choices for e in db.corpus_entries()] == [b"\x05"]
        assert db.claim("s")


def _race(spec: str, signature: str, start, results) -> None:
    db = open_db(spec)
    start.wait()
    results.put(db.claim(signature))
    db.close()


def test_claim_is_exclusive_among_racing_processes(spec):
    context = multiprocessing.get_context("fork")
    start, results = context.Event(), context.Queue()
    racers = [context.Process(target=_race, args=(spec, "raced|signature", start, results))
              for _ in range(12)]
    for racer in racers:
        racer.start()
    start.set()
    outcomes = [results.get(timeout=600) for _ in racers]
    for racer in racers:
        racer.join(timeout=600)
    assert sorted(outcomes) == [False] * 11 + [True]


def test_bad_specs_are_one_line_errors(tmp_path):
    (tmp_path / "a-file").write_text("")
    with pytest.raises(DBError, match="cannot use as a database"):
        open_db(str(tmp_path / "a-file"))
    with pytest.raises(DBError, match="not a database"):
        open_db("http://example.com/db")
    with pytest.raises(DBError, match="cannot reach Redis"):
        open_db("redis://127.0.0.1:1/0")
