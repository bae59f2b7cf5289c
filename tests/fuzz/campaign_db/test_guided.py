"""The guided campaign: it replays from its seed with one job, mutates corpus entries, keeps
what reached new features in the campaign database (by generator version), and every
finding's record carries the choice bytes that rebuild its program."""

from __future__ import annotations

import base64
import hashlib
import json

from agxir.text import parse_function, print_function
from fuzz.campaign import CampaignConfig, run_campaign
from fuzz.campaign_db.db import open_db
from fuzz.campaign_db.entry import CorpusEntry
from fuzz.campaign_db.guided import Case, WorkerGuide, case_program
from fuzz.findings import FindingStore
from fuzz.generate import GENERATOR_VERSION
from fuzz.passes_under_test import PassUnderTest, registered


def config(**changes) -> CampaignConfig:
    options = dict(seed=11, pipelines=[[registered("cmpsel")], [registered("copyprop")]],
                   examples=40, size=25, threads=4, sets=2, guidance=True, coverage_every=10,
                   reduce_seconds=0)
    options.update(changes)
    return CampaignConfig(**options)


def test_one_job_replays_the_guided_run_from_its_seed():
    first, second = run_campaign(config(), None), run_campaign(config(), None)
    for result in (first, second):
        assert result.internal_error is None
        stats = result.stats
        assert stats.programs == 40 == stats.fresh_programs + stats.mutant_programs
        assert stats.mutant_programs >= 5 and result.corpus.size >= 3
        assert stats.coverage_programs == 4
    assert first.corpus.features == second.corpus.features
    assert first.stats.mutant_programs == second.stats.mutant_programs
    assert first.stats.pass_changes == second.stats.pass_changes


def test_guidance_off_is_the_blind_stream_and_keeps_no_corpus():
    result = run_campaign(config(guidance=False, coverage_every=0), None)
    assert result.stats.mutant_programs == result.stats.fresh_programs == 0
    assert result.corpus.size == 0 and result.corpus.features  # features are still counted


def test_several_jobs_reach_the_same_features_each_run():
    """Each worker's programs depend on its own corpus only, so the features are the same."""
    runs = [run_campaign(config(jobs=2, examples=30), None) for _ in range(2)]
    assert runs[0].corpus.features == runs[1].corpus.features
    assert runs[0].stats.programs == 30


def test_the_corpus_is_stored_per_generator_version_and_read_when_shared(tmp_path):
    with open_db(str(tmp_path / "db")) as db:
        old = CorpusEntry(b"\x01\x02", GENERATOR_VERSION - 1, frozenset({"rule:x/y"}), "old")
        db.corpus_add(old)
        first = run_campaign(config(db=db), None)
        # An entry's choices are stored once (a program sampled under coverage may bring
        # new arcs on a second visit: the same choices, not a second entry).
        assert 0 < first.corpus.kept <= first.corpus.added
        assert first.corpus.other_versions == {GENERATOR_VERSION - 1: 1}
        stored = db.corpus_entries()
        assert len(stored) == first.corpus.kept
        assert all(e.generator_version == GENERATOR_VERSION and e.features for e in stored)
        # Not shared: the run learns on its own, so the seed replays it whatever is stored;
        # only entries adding to what the database has are stored.
        again = run_campaign(config(db=db), None)
        assert again.corpus.loaded == [] and len(again.corpus.stored) == len(stored)
        assert again.corpus.features == first.corpus.features
        assert again.stats.pass_changes == first.stats.pass_changes
        assert again.corpus.kept == 0 and again.corpus.new_features == 0
        shared = run_campaign(config(db=db, seed=12, shared_corpus=True), None)
        assert len(shared.corpus.loaded) == len(stored)
        # A shared run's workers mutate the stored entries from their first program on.
        guide = WorkerGuide(config(seed=12), shared.corpus.loaded)
        parents = {guide.next(index)[0].parent for index in range(8)}
        assert parents & {entry.key for entry in stored}
        assert db.corpus_entries(GENERATOR_VERSION - 1) == [old]  # left alone


def crashing_pass() -> PassUnderTest:
    """Crashes on every program with an imul, with a message naming the program (in letters,
    which signatures keep), so each such program is a finding of its own."""

    def run(fn):
        text = print_function(fn)
        if " imul " in text:
            name = "".join(chr(97 + b % 26) for b in hashlib.sha256(text.encode()).digest()[:8])
            raise RuntimeError(f"imul in program {name}")
        return False

    return PassUnderTest("imul-hater", run, ("--python-pass", "tests:imul_hater"))


def test_every_finding_record_carries_the_bytes_that_rebuild_its_program(tmp_path):
    cfg = config(pipelines=[[crashing_pass()]], examples=60)
    store = FindingStore(tmp_path / "findings", lambda finding: [])
    result = run_campaign(cfg, store)
    assert len(result.findings) >= 5
    origins = set()
    for finding, files in result.findings:
        record = json.loads(files.record.read_text())["program"]
        assert record["generator_version"] == GENERATOR_VERSION
        choices = base64.b64decode(record["choices"])
        fn, _ = case_program(cfg, Case(0, choices, record["origin"]), 0)
        assert print_function(fn) == finding.program
        origins.add("mutant" if "mutant_of" in record else "fresh")
        if "mutant_of" in record:
            assert record["mutations"] and record["origin"].startswith("mutant of ")
    assert origins == {"mutant", "fresh"}


def test_a_worker_taken_down_on_a_guided_program_is_blamed_on_that_program(tmp_path):
    """The parent rebuilds the program a dead worker was checking from the case it sent
    before checking it, so the death's finding names that program and replays from it."""
    import os

    def run(fn):
        if print_function(fn).count(" imul ") >= 2:
            os._exit(3)
        return False

    # Seed 14: generator version 7's seed 11 draws no fresh program with two imuls where
    # this run checks one.
    cfg = config(pipelines=[[PassUnderTest("imul-killer", run, ("--pass", "x:y"))]],
                 examples=40, seed=14)
    store = FindingStore(tmp_path / "findings", lambda finding: [])
    result = run_campaign(cfg, store)
    assert result.worker_deaths >= 1 and result.stats.programs + result.worker_deaths == 40
    (finding, files), = result.findings
    assert finding.message == "the pass took its process down (exited with status 3)"
    assert print_function(parse_function(finding.program)).count(" imul ") >= 2
    record = json.loads(files.record.read_text())["program"]
    fn, _ = case_program(cfg, Case(0, base64.b64decode(record["choices"]), ""), 0)
    assert print_function(fn) == finding.program
