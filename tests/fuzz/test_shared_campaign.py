"""Many machines, one campaign: `--shard K/N` slices of one seed's programs, and campaigns
sharing one real Redis database, where no finding is lost, none is written twice, and a
process killed anywhere loses nothing it already reported."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fuzz.campaign_db.db import open_db
from tests.redis_server import redis_server

ROOT = Path(__file__).resolve().parents[2]

# A pass with two bugs: it refuses loops with an exception (one crash signature, which
# every shard finds within its first programs) and flips integer compares elsewhere.
TWO_BUGS = '''
def two_bugs(fn):
    if any(ins.name == "phi" for ins in fn.instructions()):
        raise ValueError("loops are not supported")
    changed = False
    for ins in fn.instructions():
        if ins.name == "icmp":
            ins.attrs["inv"] = 1 - ins.attrs.get("inv", 0)
            changed = True
    return changed
'''
CRASH = "two_bugs:two_bugs|crash|ValueError: loops are not supported"


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def db_url(redis_url):
    import redis

    url = redis_url.rsplit("/", 1)[0] + "/2"
    redis.Redis.from_url(url).flushdb()
    return url


@pytest.fixture
def wrong_pass(tmp_path):
    path = tmp_path / "two_bugs.py"
    path.write_text(TWO_BUGS)
    return f"{path}:two_bugs"


def agxfuzz(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "fuzz", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)


def written(directory: Path) -> list[str]:
    """The signatures of the findings written in `directory`, one per record file."""
    return [json.loads(path.read_text())["signature"] for path in directory.glob("*.json")
            if not path.name.endswith(".inputs.json")]


def test_shards_split_the_programs_of_a_seed_and_replay_them(tmp_path, monkeypatch):
    """Shard K of N checks programs K-1, K-1+N, ...; its workers share that slice; the
    shards together check what one unsharded run does, each program once."""
    import fuzz.campaign as campaign
    import fuzz.campaign_db.guided as guided
    from fuzz.passes_under_test import registered

    log = tmp_path / "indices"
    original = guided.build_case

    def logging_build_case(seed, index, config):  # runs in the forked workers
        with open(log, "a") as stream:
            stream.write(f"{config.shard[0]} {index}\n")
        return original(seed, index, config)

    monkeypatch.setattr(guided, "build_case", logging_build_case)
    for shard, jobs in (((1, 3), 2), ((2, 3), 1), ((3, 3), 2), ((2, 3), 2)):
        config = campaign.CampaignConfig(seed=4, pipelines=[[registered("dce")]], examples=20,
                                         jobs=jobs, shard=shard, reduce_seconds=0)
        result = campaign.run_campaign(config, None)
        assert result.internal_error is None
    by_shard: dict[int, list[int]] = {}
    for line in log.read_text().splitlines():
        k, index = map(int, line.split())
        by_shard.setdefault(k, []).append(index)
    assert sorted(by_shard[1]) == list(range(0, 20, 3))
    assert sorted(by_shard[3]) == list(range(2, 20, 3))
    # Shard 2 ran twice (one worker, then two): the same programs both times.
    assert sorted(by_shard[2]) == sorted(2 * list(range(1, 20, 3)))


def test_two_campaigns_on_one_redis_write_each_finding_once(tmp_path, db_url, wrong_pass):
    runs = {
        k: agxfuzz("run", "--pass", wrong_pass, "--examples", "40", "--seed", "11",
                   "--jobs", "1", "--no-reduce", "--shard", f"{k}/2", "--db", db_url,
                   "--out", str(tmp_path / f"out{k}"))
        for k in (1, 2)
    }
    outputs = {k: run.communicate(timeout=600)[0] for k, run in runs.items()}
    for k, run in runs.items():
        assert run.returncode == 1, outputs[k]  # a finding, here or claimed elsewhere
    with open_db(db_url) as db:
        recorded = [signature for signature, _ in db.finding_records()]
        shards = {json.loads(record)["shard"] for record in db.findings()}
    one, two = written(tmp_path / "out1"), written(tmp_path / "out2")
    assert CRASH in recorded and shards <= {"1/2", "2/2"}
    # Nothing lost, nothing twice: every recorded signature written in exactly one place.
    assert sorted(one + two) == sorted(recorded)
    # Both shards found the crash; the one that did not write it says who did.
    loser = 2 if CRASH in one else 1
    assert "claimed and written by another run sharing the database: " in outputs[loser]
    assert "ValueError: loops are not supported (by " in outputs[loser]
    for k in (1, 2):
        for path in (tmp_path / f"out{k}").glob("*.json"):
            if not path.name.endswith(".inputs.json"):
                assert json.loads(path.read_text())["shard"] == f"{k}/2"


def _killed_inside_write_claimed(spec: str, out: Path, finding, where: str) -> None:
    """In a forked child: report `finding` and die by SIGKILL at `where` (a CampaignDB or
    FindingStore method), as a parent killed mid-write would."""
    from fuzz.campaign_db.db import CampaignDB
    from fuzz.findings import FindingStore, write_claimed

    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    owner_class, method = where.split(".")
    setattr({"CampaignDB": CampaignDB, "FindingStore": FindingStore}[owner_class], method, die)
    store = FindingStore(out, lambda f: ["--passes", "cmpsel"])
    with open_db(spec, owner=store.identity()) as db:
        write_claimed(db, store, finding, seed=1, index=7, shard="1/1")


def test_findings_a_killed_run_recorded_are_written_by_the_next_run(tmp_path, db_url):
    """Killed between claim and write: the next run on the same findings directory writes
    it (and a run elsewhere leaves it alone). Killed between record and claim: the next run
    anywhere claims and writes it. Each is written once."""
    import multiprocessing

    from fuzz.harness import Finding

    program = "func @f() {\nblock0:\n  stop\n}\n"
    claimed = Finding("cmpsel", "refinement", "claimed, not written", ("cmpsel",), program)
    unclaimed = Finding("dce", "verifier", "recorded, not claimed", ("dce",), program)
    context = multiprocessing.get_context("fork")
    for finding, where in ((claimed, "FindingStore.write"), (unclaimed, "CampaignDB.claim")):
        child = context.Process(target=_killed_inside_write_claimed,
                                args=(db_url, tmp_path / "a", finding, where))
        child.start()
        child.join(timeout=600)
        assert child.exitcode == -signal.SIGKILL
    assert written(tmp_path / "a") == []

    def rerun(out: str) -> str:
        run = agxfuzz("run", "--passes", "dce", "--examples", "1", "--seed", "1", "--jobs", "1",
                      "--db", db_url, "--out", str(tmp_path / out))
        output = run.communicate(timeout=600)[0]
        assert run.returncode == 0, output
        return output

    assert "written at start: 1 findings" in rerun("b")  # the unclaimed one only
    assert written(tmp_path / "b") == [unclaimed.signature]
    assert "written at start: 1 findings" in rerun("a")  # its own claim
    assert written(tmp_path / "a") == [claimed.signature]
    record = json.loads(next((tmp_path / "a").glob("cmpsel-*.json")).read_text())
    assert record["command"].endswith("--passes cmpsel")  # the killed run's replay flags
    assert "written at start" not in rerun("a")  # nothing left to write


def test_a_database_gone_mid_run_never_costs_a_finding(tmp_path, capsys):
    """Redis stops between opening and the finding: the files are written unclaimed, with
    a one-line warning, and a restore at start warns instead of failing the run."""
    from fuzz.findings import FindingStore, restore_unwritten, write_claimed
    from fuzz.harness import Finding

    finding = Finding("dce", "verifier", "gone", ("dce",), "func @f() {\nblock0:\n  stop\n}\n")
    store = FindingStore(tmp_path / "out", lambda f: ["--passes", "dce"])
    with redis_server(tmp_path) as url:
        db = open_db(url, owner=store.identity())
    files = write_claimed(db, store, finding, seed=1, index=0, shard="1/1")
    assert files is not None and files.reproducer.exists()
    assert written(tmp_path / "out") == [finding.signature]
    assert restore_unwritten(db, store) == []
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith(f"agxfuzz: warning: {url}: ") for line in err)
    assert "writing this finding unclaimed" in err[0]


def _children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def test_a_campaign_killed_mid_run_loses_nothing_it_reported(tmp_path, db_url, wrong_pass):
    """SIGKILL a worker, then the whole campaign, while findings come in: every finding
    the database holds has its files once the next run on that directory has started."""
    run = agxfuzz("run", "--pass", wrong_pass, "--examples", "1000000", "--seed", "3",
                  "--jobs", "2", "--no-reduce", "--db", db_url, "--out", str(tmp_path / "out"),
                  start_new_session=True)
    deadline = time.monotonic() + 600  # a hang guard: the first finding comes in a few programs
    with open_db(db_url) as db:
        while not db.findings() and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.05)
        assert db.findings(), "no finding reported"
        workers = _children(run.pid)
        assert workers
        os.kill(workers[0], signal.SIGKILL)
        time.sleep(0.5)
        os.killpg(run.pid, signal.SIGKILL)
        run.communicate(timeout=600)
        recorded = sorted(signature for signature, _ in db.finding_records())
    rerun = agxfuzz("run", "--passes", "dce", "--examples", "1", "--seed", "1", "--jobs", "1",
                    "--db", db_url, "--out", str(tmp_path / "out"))
    output = rerun.communicate(timeout=600)[0]
    assert rerun.returncode == 0, output
    assert sorted(written(tmp_path / "out")) == recorded


@pytest.mark.parametrize("flags, status, message", [
    (["--shard", "3/2"], 2, "agxfuzz: --shard 3/2: expected K/N with 1 <= K <= N, e.g. 2/4"),
    (["--shard", "1"], 2, "agxfuzz: --shard 1: expected K/N with 1 <= K <= N, e.g. 2/4"),
    (["--db", "redis://127.0.0.1:1/0"], 2, "agxfuzz: redis://127.0.0.1:1/0: cannot reach Redis"),
])
def test_bad_shard_or_database_flags_are_one_line(tmp_path, capsys, flags, status, message):
    from fuzz.cli import main

    assert main(["run", "--examples", "1", "--passes", "dce", "--out", str(tmp_path / "out"),
                 *flags]) == status
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
