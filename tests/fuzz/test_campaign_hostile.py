"""Passes that fight the campaign: a KeyboardInterrupt or GeneratorExit from a pass in a
worker, a pass that defeats its deadline (ignores SIGALRM, stops itself), a worker killed
from outside the run, and a pass that exits while it is being reduced in the parent."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from fuzz.campaign import CampaignConfig, run_campaign
from fuzz.findings import FindingStore
from fuzz.passes_under_test import PassUnderTest
from fuzz.processes import dies, in_child

ROOT = Path(__file__).resolve().parents[2]


def _unit(name, run):
    return PassUnderTest(name, run, ("--pass", f"x:{name}"))


def _interrupts(fn):
    raise KeyboardInterrupt


def _generator_exit(fn):
    raise GeneratorExit


def _ignores_its_deadline(fn):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)  # the wall-clock backstop
    signal.signal(signal.SIGPROF, signal.SIG_IGN)  # the CPU-time limit
    while True:
        pass


def _stops_itself(fn):
    os.kill(os.getpid(), signal.SIGSTOP)


def _campaign(run, examples=4, **options):
    config = CampaignConfig(seed=5, pipelines=[[_unit(run.__name__, run)]], examples=examples,
                            jobs=2, reduce_seconds=0, **options)
    return run_campaign(config, None)


def test_a_keyboard_interrupt_from_a_pass_in_a_worker_is_a_crash_finding():
    """Workers ignore SIGINT: a KeyboardInterrupt there can only come from the pass."""
    result = _campaign(_interrupts)
    assert result.internal_error is None and not result.worker_deaths
    assert result.stats.programs == 4
    assert [f.message for f, _ in result.findings] == ["KeyboardInterrupt: "]


def test_any_base_exception_from_a_pass_is_a_crash_finding():
    result = _campaign(_generator_exit)
    assert result.stats.programs == 4 and not result.worker_deaths
    assert [f.oracle for f, _ in result.findings] == ["crash"]


def test_a_pass_that_defeats_its_deadline_is_a_timeout_and_the_run_ends():
    # The pass never returns: the run ending at all, with both its workers killed as hung,
    # is the deadline at work (no elapsed-time bound: that would measure the machine's load).
    result = _campaign(_ignores_its_deadline, examples=2, pass_timeout=0.5, hang_grace=1.0)
    assert result.hung_workers == 2
    assert [(f.pass_name, f.oracle) for f, _ in result.findings] == [
        ("_ignores_its_deadline", "timeout")
    ]
    assert "did not stop at its deadline" in result.findings[0][0].message


def test_a_pass_that_stops_its_process_is_a_timeout(tmp_path):
    store = FindingStore(tmp_path / "f", lambda finding: ["--pass", "x:y"])
    config = CampaignConfig(seed=5, pipelines=[[_unit("_stops_itself", _stops_itself)]],
                            examples=1, jobs=1, reduce_seconds=0, pass_timeout=0.5,
                            hang_grace=1.0)
    result = run_campaign(config, store)
    assert result.hung_workers == 1
    assert result.findings[0][0].oracle == "timeout"
    assert result.findings[0][1].reproducer.exists()


def test_a_worker_killed_from_outside_is_not_blamed_on_a_pass_and_not_green(tmp_path):
    """The kill lands once the run reports progress (its workers are checking), never after
    a sleep racing the machine's load; 600 programs keep it running well past that."""
    process = subprocess.Popen(
        [sys.executable, "-m", "fuzz", "run", "--examples", "600", "--seed", "1", "--jobs", "2",
         "--passes", "dce", "--guidance", "off", "--out", str(tmp_path / "f")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    seen = []
    for line in process.stdout:  # the header, then a progress line a second
        seen.append(line)
        if line.startswith("["):
            break
    assert seen and seen[-1].startswith("["), "".join(seen)
    workers = [int(p.name) for p in Path("/proc").glob("[0-9]*")
               if _parent(p) == process.pid]
    assert workers
    os.kill(workers[0], signal.SIGKILL)
    stdout, stderr = process.communicate(timeout=600)
    stdout = "".join(seen) + stdout
    assert process.returncode == 3, stdout + stderr
    assert "killed from outside the run: worker" in stdout
    assert "findings: 0" in stdout
    assert "not a green run" in stderr and "Traceback" not in stderr


def _parent(proc: Path) -> int | None:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _exits_zero(fn):
    os._exit(0)


def test_a_pass_that_exits_0_in_a_worker_is_its_finding_not_an_outside_kill():
    result = _campaign(_exits_zero, examples=2)
    assert not result.outside_deaths and result.worker_deaths == 2
    assert [f.message for f, _ in result.findings] == [
        "the pass took its process down (exited with status 0)"
    ]


def test_in_child_returns_the_result_or_none_when_the_child_dies_or_hangs():
    assert in_child(sum, [1, 2, 3], seconds=10) == 6
    assert in_child(os._exit, 3, seconds=10) is None
    assert in_child(time.sleep, 60, seconds=0.5) is None  # "hung", not slept: see dies below


def test_dies_says_how_a_child_died():
    assert dies(lambda: None, seconds=10) is None
    status = dies(lambda: os._exit(3), seconds=10)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3
    assert dies(lambda: time.sleep(60), seconds=0.5) == "hung"


def test_a_pass_that_exits_during_reduction_does_not_take_the_campaign_down(tmp_path):
    """The pass raises on the generated program and exits on smaller ones: the reducer,
    which runs in a forked child, meets the exit; the campaign carries on."""
    module = tmp_path / "sly.py"
    module.write_text(
        "import os\n\n"
        "def sly(fn):\n"
        "    if sum(len(b.instructions) for b in fn.blocks) > 20:\n"
        "        raise RuntimeError('big')\n"
        "    os._exit(7)\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "fuzz", "run", "--examples", "3", "--seed", "2", "--jobs", "1",
         "--pass", f"{module}:sly", "--out", str(tmp_path / "f")],
        cwd=ROOT, capture_output=True, text=True, timeout=200,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "programs checked: " in result.stdout and "findings: " in result.stdout
    assert "RuntimeError: big" in result.stdout


def test_check_with_a_pass_that_exits_0_is_a_finding_not_green(tmp_path):
    """os._exit(0) skips every handler: `check` runs the passes in a child to see it."""
    module = tmp_path / "leaves.py"
    module.write_text("import os\n\ndef leaves(fn):\n    os._exit(0)\n")
    result = subprocess.run(
        [sys.executable, "-m", "fuzz", "check", "tests/golden/diverging_branches.agx",
         "--pass", f"{module}:leaves"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "leaves: crash: the pass took its process down (exited with status 0)" in result.stdout


def test_check_of_a_pass_that_defeats_its_deadline_is_a_timeout(monkeypatch):
    from agxir.text import parse_function
    from fuzz.commands import isolation
    from fuzz.harness import Harness
    from oracles.inputs import random_input_sets

    monkeypatch.setattr(isolation, "HANG_GRACE", 0.5)
    fn = parse_function((ROOT / "tests" / "golden" / "diverging_branches.agx").read_text())
    harness = Harness(random_input_sets(fn, 4, 1, 1), pass_timeout=0.3)
    unit = _unit("_ignores_its_deadline", _ignores_its_deadline)
    [finding] = isolation.check_isolated(harness, fn, [[unit]])
    assert (finding.pass_name, finding.oracle) == ("_ignores_its_deadline", "timeout")


def _leaves_garbage(fn):
    fn.blocks[0].instructions[0].dest = 5
    return True


def test_a_pass_that_leaves_something_unprintable_is_its_crash_not_the_harness():
    from agxir.text import parse_function
    from fuzz.harness import Harness
    from oracles.inputs import random_input_sets

    fn = parse_function((ROOT / "tests" / "golden" / "f16_arith.agx").read_text())
    harness = Harness(random_input_sets(fn, 2, 1, 1))
    [finding] = harness.check(fn, [[_unit("_leaves_garbage", _leaves_garbage)]])
    assert finding.oracle == "crash"
    assert finding.message.startswith("the pass left an unprintable function: AttributeError")


def _sigkills_on_iadd(fn):
    if any(ins.name == "iadd" for ins in fn.instructions()):
        os.kill(os.getpid(), signal.SIGKILL)
    return False


def test_a_pass_that_takes_its_worker_down_is_reduced_in_supervised_children():
    """Issue 19: such findings were written unreduced. Each candidate runs in a child of the
    reducing child; interesting when it dies the same way. The budget only caps the reducer,
    which reaches its fixed point long before it."""
    from agxir.text import parse_function

    config = CampaignConfig(seed=5, pipelines=[[_unit("_sigkills_on_iadd", _sigkills_on_iadd)]],
                            examples=3, jobs=1, reduce_seconds=600)
    result = run_campaign(config, None)
    [(finding, _)] = result.findings
    assert finding.message == "the pass took its process down (killed by SIGKILL)"
    reduced = parse_function(finding.program)
    assert [ins.name for ins in reduced.instructions()] == ["iadd", "stop"]
    assert finding.input_set is not None and finding.input_set.threads == 1
