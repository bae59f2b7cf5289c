"""`agxfuzz corpus` as a user runs it (through fuzz.cli.main): list, export, import (all or
nothing, a bad line named FILE:LINE, exit 2) and the shared findings."""

from __future__ import annotations

import json

from fuzz.campaign_db.db import open_db
from fuzz.campaign_db.entry import CorpusEntry
from fuzz.cli import main
from fuzz.findings import FindingStore, write_claimed
from fuzz.generate import GENERATOR_VERSION
from fuzz.harness import Finding

CURRENT = CorpusEntry(b"\x01\x02\x03", GENERATOR_VERSION, frozenset({"pass:dce", "rule:x"}),
                      "seed 1 program 4")
OLD = CorpusEntry(b"\x09", GENERATOR_VERSION - 1, frozenset(), "an older generator")


def test_list_shows_each_entry_and_counts_other_versions(tmp_path, capsys):
    with open_db(str(tmp_path / "db")) as db:
        db.corpus_add(CURRENT)
        db.corpus_add(OLD)
    assert main(["corpus", "list", "--db", str(tmp_path / "db")]) == 0
    out = capsys.readouterr().out
    assert f"1 entries of generator version {GENERATOR_VERSION}" in out
    row = next(line for line in out.splitlines() if CURRENT.key in line)
    assert row.split()[1:4] == [str(GENERATOR_VERSION), "2", "seed"]
    assert f"v{GENERATOR_VERSION - 1}: 1 entries" in out


def test_export_then_import_moves_every_version_to_another_database(tmp_path, capsys):
    with open_db(str(tmp_path / "a")) as db:
        db.corpus_add(CURRENT)
        db.corpus_add(OLD)
    exported = tmp_path / "corpus.jsonl"
    assert main(["corpus", "export", "--db", str(tmp_path / "a"), "-o", str(exported)]) == 0
    lines = exported.read_text().splitlines()
    assert {CorpusEntry.from_bytes(line.encode()) for line in lines} == {CURRENT, OLD}
    assert main(["corpus", "import", "--db", str(tmp_path / "b"), str(exported)]) == 0
    assert "imported 2 new entries of 2" in capsys.readouterr().out
    assert main(["corpus", "import", "--db", str(tmp_path / "b"), str(exported)]) == 0
    assert "imported 0 new entries of 2" in capsys.readouterr().out
    with open_db(str(tmp_path / "b")) as db:
        assert db.corpus_entries() == [CURRENT]
        assert db.corpus_versions() == {GENERATOR_VERSION - 1: 1, GENERATOR_VERSION: 1}


def test_a_malformed_line_is_named_and_nothing_is_imported(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(CURRENT.to_bytes().decode() + "\n\n" + '{"v": 5, "choices": "!!"}\n')
    assert main(["corpus", "import", "--db", str(tmp_path / "db"), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:3: not a corpus entry") and err.count("\n") == 1
    with open_db(str(tmp_path / "db")) as db:
        assert db.corpus_entries() == []


def test_an_unreachable_database_is_one_line(tmp_path, capsys):
    assert main(["corpus", "list", "--db", "redis://127.0.0.1:1/0"]) == 2
    err = capsys.readouterr().err
    assert "cannot reach Redis" in err and err.count("\n") == 1


def test_findings_lists_what_every_owner_recorded(tmp_path, capsys):
    finding = Finding("cmpsel", "refinement", "buffer u5 byte 0: input 00, output 01",
                      ("cmpsel",), "func @f() {\nblock0:\n  stop\n}\n")
    spec = str(tmp_path / "db")
    with open_db(spec, owner="machine-a") as a:
        store = FindingStore(tmp_path / "out", lambda f: ["--passes", "cmpsel"])
        assert write_claimed(a, store, finding, seed=3, index=8, shard="1/2") is not None
    assert main(["corpus", "findings", "--db", spec]) == 0
    out = capsys.readouterr().out
    assert "findings in" in out and ": 1" in out.splitlines()[0]
    assert "cmpsel: refinement: buffer u5 byte 0" in out
    assert "seed 3 program 8, shard 1/2; written by machine-a" in out
    record = json.loads((tmp_path / "out").glob("*.json").__next__().read_text())
    assert record["shard"] == "1/2" and record["program_index"] == 8
    # A copy of every shared finding, for a machine whose findings directory is gone.
    assert main(["corpus", "findings", "--db", spec, "--out", str(tmp_path / "copy")]) == 0
    assert "wrote 1 findings to" in capsys.readouterr().out
    copied = json.loads((tmp_path / "copy").glob("*.json").__next__().read_text())
    assert copied["command"].endswith("--passes cmpsel")
    assert (copied["message"], copied["shard"]) == (record["message"], "1/2")


def test_listing_a_database_that_is_not_there_says_so_and_creates_nothing(tmp_path, capsys):
    assert main(["corpus", "list", "--db", str(tmp_path / "typo")]) == 2
    assert capsys.readouterr().err == f"agxfuzz: {tmp_path / 'typo'}: no campaign database here\n"
    assert not (tmp_path / "typo").exists()
