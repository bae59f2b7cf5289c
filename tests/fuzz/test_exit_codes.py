"""Bad usage and unreadable input exit 2 with one line, everywhere: a typo in CI must not
look like a reproduced bug (exit 1) or a clean run (exit 0)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"


def agxfuzz(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzz", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize(
    "args, message",
    [
        (("verify", "no/such.agx"), "no/such.agx: cannot read: No such file or directory"),
        (("check", "no/such.agx"), "no/such.agx: cannot read: No such file or directory"),
        (("verify", "tests"), "tests: cannot read: Is a directory"),
        (("repro", "no/such.json"), "no/such.json: cannot read: No such file or directory"),
        (("tv", "no/such.agx", "no/such.agx"), "no/such.agx: cannot read"),
        (("reduce", "no/such.agx", "--passes", "dce"), "no/such.agx: cannot read"),
        (("run", "--examples", "1", "--pass-cmd", '"unterminated'),
         "agxfuzz: --pass-cmd: No closing quotation"),
        (("run", "--examples", "1", "--pass-cmd", "/nonexistent/prog"),
         "agxfuzz: --pass-cmd: no such program: /nonexistent/prog"),
        (("opt", str(GOLDEN / "loop_prefix_sum.agx"), "-p", "nosuch"),
         "agxfuzz: unknown pass 'nosuch'"),
        (("run", "--examples", "1", "--with-fixes"),
         "agxfuzz: --with-fixes: only with --mesa"),
    ],
)
def test_bad_usage_exits_2_with_one_line(args, message):
    result = agxfuzz(*args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.agx"
    path.write_bytes(b"\xef\xbb\xbf" + (GOLDEN / "loop_prefix_sum.agx").read_bytes())
    result = agxfuzz("verify", str(path))
    assert result.returncode == 0, result.stderr


def test_a_buffer_over_the_limit_is_refused_before_interpreting_and_the_limit_can_be_raised(tmp_path):
    path = tmp_path / "big.agx"
    path.write_text("func @big(u0:ptr[134217728]) {\nb0:\n  stop\n}\n")
    assert agxfuzz("verify", str(path)).returncode == 0  # the format allows it
    refused = agxfuzz("interp", str(path), "--threads", "1", "--seed", "1")
    assert refused.returncode == 2
    assert "over the interpreter's limit of 64 MB per buffer" in refused.stderr
    raised = agxfuzz("--max-buffer", "256", "interp", str(path), "--threads", "1", "--seed", "1")
    assert raised.returncode == 0, raised.stderr


@pytest.mark.parametrize("command", [
    ("check",), ("interp",), ("reduce", "--passes", "dce"), ("tv", "SAME"),
])
def test_a_program_that_does_not_parse_is_bad_input_where_1_means_fails(command):
    """`check` exit 1 means "a pass fails": a file that does not parse is not that."""
    bad = str(GOLDEN / "parse_unknown_opcode.agx")
    args = [bad if part == "SAME" else part for part in command[1:]]
    result = agxfuzz(command[0], bad, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "unknown opcode 'iadx'" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["verify", "fmt"])
def test_for_verify_and_fmt_a_parse_error_is_the_verdict(command):
    result = agxfuzz(command, str(GOLDEN / "parse_unknown_opcode.agx"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "parse_unknown_opcode.agx:6:11: unknown opcode 'iadx'" in result.stderr


def test_a_program_that_does_not_verify_is_bad_input_for_check():
    result = agxfuzz("check", str(GOLDEN / "verify_use_not_dominated.agx"), "--passes", "dce")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "not dominated" in result.stderr


def test_a_malformed_inputs_file_is_bad_input_for_check(tmp_path):
    path = tmp_path / "inputs.json"
    path.write_text("[")
    result = agxfuzz("check", str(GOLDEN / "loop_prefix_sum.agx"), "--passes", "dce",
                     "--inputs", str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "not a list of input sets" in result.stderr


def test_check_with_every_pass_by_default_is_green_on_a_valid_golden():
    """By default `check` runs the campaign's pipelines: machine passes after the steps that
    bring a program to their level, not all passes chained into a false crash."""
    result = agxfuzz("check", str(GOLDEN / "device_load_formats.agx"), "--seed", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "every oracle agrees" in result.stdout


def test_an_endless_file_is_refused_not_read_into_memory():
    result = agxfuzz("verify", "/dev/zero")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "/dev/zero: larger than 64 MB" in result.stderr


# --- issue 19: every row of docs/guarantees.md, one line each, prefixed --------------------

SAXPY = str(ROOT / "examples" / "saxpy.agx")
LOOP = str(GOLDEN / "pass_dce_phi_cycle.agx")


def _records(tmp_path) -> dict[str, str]:
    files = {"list": "[]", "object": '{"x": 1}'}
    paths = {}
    for name, text in files.items():
        path = tmp_path / f"{name}.json"
        path.write_text(text)
        paths[name] = str(path)
    return paths


@pytest.mark.parametrize("args, status, message", [
    # No green without checking: an empty pass list is bad usage.
    (("run", "--examples", "1", "--passes", ""), 2, "agxfuzz: --passes '' names no pass"),
    (("run", "--examples", "1", "--passes", ","), 2, "agxfuzz: --passes ',' names no pass"),
    (("run", "--examples", "1", "--passes", " "), 2, "agxfuzz: --passes ' ' names no pass"),
    (("check", SAXPY, "--passes", ""), 2, "agxfuzz: --passes '' names no pass"),
    (("reduce", SAXPY, "--passes", ","), 2, "agxfuzz: --passes ',' names no pass"),
    (("opt", SAXPY, "-p", ""), 2, "agxfuzz: -p '' names no pass"),
    # The campaign's database and findings directory.
    (("run", "--examples", "1", "--passes", "dce", "--db", "bogus://x"), 2,
     "agxfuzz: bogus://x: not a database"),
    (("run", "--examples", "1", "--passes", "dce", "--db", "redis://127.0.0.1:1/0"), 2,
     "agxfuzz: redis://127.0.0.1:1/0: cannot reach Redis"),
    (("run", "--examples", "1", "--passes", "dce", "--out", "/dev/null/x"), 2,
     "agxfuzz: /dev/null/x: Not a directory"),
    (("run", "--examples", "1", "--passes", "dce", "--json-report", "/dev/null/x.json"), 2,
     "agxfuzz: --json-report /dev/null/x.json: cannot write: /dev/null is not a directory"),
    (("run", "--examples", "1", "--passes", "dce", "--sarif", "/"), 2,
     "agxfuzz: --sarif /: cannot write: a directory"),
    (("check", SAXPY, "--passes", "dce", "--out", "/dev/null/x"), 2,
     "agxfuzz: --out /dev/null/x: not a directory"),
    # A record that is not one.
    (("repro", "LIST"), 2, "not a finding record"),
    (("repro", "OBJECT"), 2, "not a finding record"),
    (("repro", SAXPY), 2, "saxpy.agx: not a finding record"),
    # Limits: --pass-memory's floor, threads and input sets.
    (("run", "--examples", "1", "--pass-memory", "10"), 2,
     "agxfuzz: --pass-memory 10: below the floor of 32 MB"),
    (("check", SAXPY, "--pass-memory", "31"), 2, "agxfuzz: --pass-memory 31: below the floor"),
    (("reduce", SAXPY, "--pass-memory", "1"), 2, "agxfuzz: --pass-memory 1: below the floor"),
    (("interp", SAXPY, "--threads", "100000000"), 2,
     "agxfuzz: --threads: 100000000 threads per input set is over the limit of 65536"),
    (("interp", SAXPY, "--input", "threads=100000000"), 2, "is over the limit of 65536"),
    (("check", SAXPY, "--sets", "5000"), 2, "agxfuzz: --sets: 5000 input sets is over"),
    (("interp", SAXPY, "--threads", "65536", "--sets", "17"), 2,
     "agxfuzz: --threads and --sets: 17 input sets of 65536 threads are over the limit of "
     "1048576 threads in all"),
    (("tv", SAXPY, SAXPY, "--threads", "70000"), 2, "agxfuzz: --threads: 70000 threads"),
    # Issue 19 item 6: prefixed errors.
    (("interp", SAXPY, "--inputs", "/nonexistent.json"), 2,
     "agxfuzz: /nonexistent.json: cannot read: No such file or directory"),
    (("report", "/nonexistent"), 2, "agxfuzz: /nonexistent: no such directory"),
    (("opt", SAXPY, "-p", "nosuch"), 2, "agxfuzz: unknown pass 'nosuch'; known passes: dce"),
    (("interp", SAXPY, "--threads", "0"), 2,
     "agxfuzz interp: argument --threads: must be at least 1: 0"),
    (("nosuch",), 2, "agxfuzz: argument COMMAND: invalid choice: 'nosuch'"),
    # reduce's 1: its own failure, a file that does not fail (nothing written).
    (("reduce", SAXPY, "--seed", "1", "-o", "OUT"), 1,
     "pipelines `check` runs at the ssa level: nothing to reduce"),
])
def test_every_error_is_its_documented_status_in_one_prefixed_line(
        tmp_path, monkeypatch, capsys, args, status, message):
    from fuzz.cli import main

    records = _records(tmp_path)
    out = tmp_path / "saxpy.reduced.agx"
    args = [records["list"] if a == "LIST" else records["object"] if a == "OBJECT" else
            str(out) if a == "OUT" else a for a in args]
    monkeypatch.chdir(tmp_path)  # a run's default ./findings lands here
    if args[0] == "nosuch" or "--threads" in args and "0" in args:  # argparse exits itself
        with pytest.raises(SystemExit) as exited:
            main(args)
        assert exited.value.code == status
    else:
        assert main(args) == status
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("agxfuzz")
    assert not out.exists()


def test_opt_lists_every_pass_a_list_may_hold_when_one_is_unknown(capsys):
    from agxir.machine.pipeline import MACHINE_PASSES
    from agxir.passes import PASSES
    from fuzz.cli import main

    assert main(["opt", SAXPY, "-p", "nosuch"]) == 2
    err = capsys.readouterr().err
    for name in [*PASSES, *MACHINE_PASSES]:
        assert f" {name}," in err or err.rstrip().endswith(name), name


def test_tv_on_a_loop_cannot_decide_exit_3():
    """A function with a loop is a question tv cannot answer, like a z3 timeout: exit 3
    ("unknown"), not bad usage and never "counterexample"."""
    result = agxfuzz("tv", LOOP, LOOP)
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith("unknown: tv decides loop-free functions only; BEFORE has")


def test_a_record_names_its_pass_file_absolutely_so_repro_works_from_elsewhere(tmp_path):
    """Issue 19: `--pass wrong.py:f` relative to where `check` ran; `repro` elsewhere."""
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (work / "wrong.py").write_text("def breaks(fn):\n    raise ValueError('boom')\n")
    (work / "prog.agx").write_text(Path(SAXPY).read_text())
    found = subprocess.run(
        [sys.executable, "-m", "fuzz", "check", "prog.agx", "--pass", "wrong.py:breaks",
         "--seed", "1", "--out", "findings"],
        cwd=work, capture_output=True, text=True, timeout=120)
    assert found.returncode == 1, found.stdout + found.stderr
    [record] = (work / "findings").glob("*.json")
    import json

    data = json.loads(record.read_text())
    assert data["flags"] == ["--pass", f"{work / 'wrong.py'}:breaks"]
    again = subprocess.run([sys.executable, "-m", "fuzz", "repro", str(record)], cwd=elsewhere,
                           capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert again.returncode == 1, again.stdout + again.stderr
    assert "still fails" in again.stdout


# --- a test per row of the table in docs/guarantees.md --------------------------------------

BREAKS = "def breaks(fn):\n    raise ValueError('boom')\n"


def _main(*args: str) -> int:
    from fuzz.cli import main

    return main(list(args))


def test_check_row_0_1_2_3(tmp_path, monkeypatch, capsys):
    module = tmp_path / "breaks.py"
    module.write_text(BREAKS)
    assert _main("check", SAXPY, "--passes", "dce", "--seed", "1") == 0
    assert _main("check", SAXPY, "--pass", f"{module}:breaks", "--seed", "1") == 1
    assert _main("check", str(GOLDEN / "parse_unknown_opcode.agx")) == 2
    from fuzz.harness import Harness

    def harness_bug(self, fn, pipelines):
        raise RuntimeError("a harness bug")

    monkeypatch.setattr(Harness, "check", harness_bug)
    assert _main("check", SAXPY, "--passes", "dce", "--seed", "1") == 3
    assert "agxfuzz: internal error (a harness bug, please report): RuntimeError: a harness " \
        "bug" in capsys.readouterr().err


def test_repro_row_0_1_2_4(tmp_path, capsys):
    module = tmp_path / "breaks.py"
    module.write_text(BREAKS)
    assert _main("check", SAXPY, "--pass", f"{module}:breaks", "--seed", "1",
                 "--out", str(tmp_path / "f")) == 1
    [record] = [p for p in (tmp_path / "f").glob("*.json") if ".inputs." not in p.name]
    assert _main("repro", str(record)) == 1  # still fails the same way
    module.write_text("def breaks(fn):\n    raise KeyError('other')\n")
    assert _main("repro", str(record)) == 4  # fails differently now
    module.write_text("def breaks(fn):\n    return False\n")
    assert _main("repro", str(record)) == 0  # no longer fails
    record.write_text("[]")
    assert _main("repro", str(record)) == 2


def test_run_row_0_1(tmp_path):
    """Row 2 is the table above; row 3 below and `test_campaign_hostile.py`'s outside kill."""
    module = tmp_path / "breaks.py"
    module.write_text(BREAKS)
    common = ["run", "--examples", "2", "--seed", "1", "--jobs", "1", "--guidance", "off",
              "--coverage-every", "0", "--no-reduce"]
    green = agxfuzz(*common, "--passes", "dce", "--out", str(tmp_path / "a"))
    assert green.returncode == 0, green.stdout + green.stderr
    found = agxfuzz(*common, "--pass", f"{module}:breaks", "--out", str(tmp_path / "b"))
    assert found.returncode == 1, found.stdout + found.stderr
    assert "breaks:breaks: crash: ValueError: boom" in found.stdout


def test_run_row_3_a_harness_bug(tmp_path, monkeypatch, capsys):
    from fuzz.harness import Harness

    def harness_bug(self, fn, pipelines):
        raise RuntimeError("a harness bug")

    monkeypatch.setattr(Harness, "check", harness_bug)  # the forked workers inherit it
    assert _main("run", "--examples", "2", "--seed", "1", "--jobs", "1", "--passes", "dce",
                 "--guidance", "off", "--coverage-every", "0",
                 "--out", str(tmp_path / "f")) == 3
    err = capsys.readouterr().err
    assert err.startswith("agxfuzz: internal error (a harness bug, please report): program 0: "
                          "RuntimeError: a harness bug")


def test_tv_row_2_functions_that_are_not_a_before_and_after_pair(tmp_path):
    a, b = tmp_path / "a.agx", tmp_path / "b.agx"
    a.write_text("func @a(u0:ptr[16]) {\nentry:\n  stop\n}\n")
    b.write_text("func @a(u0:ptr[8]) {\nentry:\n  stop\n}\n")
    result = agxfuzz("tv", str(a), str(b))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("agxfuzz: ") and "different buffers" in result.stderr


def test_opt_and_interp_rows(tmp_path, capsys):
    assert _main("opt", SAXPY, "-p", "dce") == 0
    assert _main("interp", SAXPY, "--seed", "1") == 0
    module = tmp_path / "x.agx"
    module.write_text(Path(SAXPY).read_text())
    assert _main("opt", str(module), "-p", "dce", "--expect-unchanged") == 0
    assert _main("opt", str(module), "-p", "lower-cf", "--expect-unchanged") == 1  # its own
    assert _main("opt", str(GOLDEN / "parse_unknown_opcode.agx"), "-p", "dce") == 2


def test_liveness_row_0_2(tmp_path):
    """Row 1 (a disagreement) is `tests/fuzz/commands/test_liveness.py`'s."""
    assert _main("liveness", SAXPY) == 0
    lowered = tmp_path / "exec.agx"
    opt = agxfuzz("opt", SAXPY, "-p", "lower-cf")
    assert opt.returncode == 0, opt.stderr
    lowered.write_text("\n".join(line for line in opt.stdout.splitlines()
                                 if not line.startswith(";")) + "\n")
    assert _main("liveness", str(lowered)) == 2
