"""Runs every golden `.agx` file under tests/golden (and tests/golden/machine): its `; RUN:`
lines, whose FileCheck `CHECK` lines must match (docs/goldens.md).

lit's own machinery finds each file's RUN lines and applies its substitutions (%s, %t, ...)
with the suite's lit.cfg.py, and lit's shell parser splits each into pipelines; the
pipelines then run in this process, `agxfuzz` through fuzz.cli.main and `filecheck`
through the filecheck package's matcher, so the 90-odd files cost about a second rather
than a few hundred process start-ups (`lit tests/golden` runs the same lines in
subprocesses; a test below runs real lit on one file of each kind, and shows that a wrong
CHECK fails both ways). Anything else a RUN line names runs as a subprocess.

Every golden that parses and verifies must also print back to itself once comments are
removed (kept here rather than as a RUN line: it needs every line of the program).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest

from agxir.text import ParseError, parse_function, print_function
from agxir.verifier import verify

GOLDEN = Path(__file__).parent / "golden"
FILES = sorted(GOLDEN.glob("*.agx")) + sorted((GOLDEN / "machine").glob("*.agx"))
CHECK_LINE = re.compile(r"; (?!RUN:|COM:)[A-Z]+(-(NEXT|NOT|DAG|LABEL|SAME|EMPTY))?: ")


@dataclass
class Step:
    """What one command of a pipeline did."""

    argv: list[str]
    status: int
    stderr: str


class RunFailed(AssertionError):
    """A RUN line failed: the line, each command's status and stderr (FileCheck's names the
    CHECK that did not match)."""


_LIT_TESTS: dict[Path, object] = {}


def _lit_test(path: Path):
    """The lit Test for `path`, found through its suite's lit.cfg.py as `lit` finds it (a
    directory at a time: the suite's configuration is loaded once, not once a file)."""
    import lit.discovery
    import lit.LitConfig

    path = path.resolve()
    if path not in _LIT_TESTS:
        config = lit.LitConfig.LitConfig(
            progname="lit", path=[], diagnostic_level="error", useValgrind=False,
            valgrindLeakCheck=False, valgrindArgs=[], noExecute=False, debug=False,
            isWindows=False, order="lexical", params={},
        )
        for test in lit.discovery.find_tests_for_inputs(config, [str(path.parent)]):
            _LIT_TESTS[Path(test.getSourcePath()).resolve()] = test
    return _LIT_TESTS[path]


def run_lines(path: Path) -> list[str]:
    """The file's RUN lines as lit would execute them: continuations joined and
    substitutions applied."""
    import lit.Test
    import lit.TestRunner as runner

    test = _lit_test(path)
    script = runner.parseIntegratedTestScript(test, require_script=True)
    if isinstance(script, lit.Test.Result):
        raise RunFailed(f"{path}: {script.output}")
    tmp_dir, tmp_base = runner.getTempPaths(test)
    os.makedirs(tmp_dir, exist_ok=True)
    substitutions = runner.getDefaultSubstitutions(test, tmp_dir, tmp_base)
    script = runner.applySubstitutions(
        script, substitutions, recursion_limit=test.config.recursiveExpansionLimit
    )
    lines = []
    for line in script:
        match = re.fullmatch(runner.kPdbgRegex, line)
        lines.append((match.group(2) if match else line).strip())
    return lines


@functools.cache
def _parser():
    import fuzz.cli

    return fuzz.cli.build_parser()


def _agxfuzz(argv: list[str], stdin: str) -> tuple[int, str, str]:
    import fuzz.cli

    out, err = io.StringIO(), io.StringIO()
    with tempfile.NamedTemporaryFile("w", suffix=".agx", delete=False) as piped:
        piped.write(stdin)
    # /dev/stdin in this process would be pytest's: the piped text goes through a file.
    argv = [piped.name if arg in ("/dev/stdin", "-") else arg for arg in argv]
    try:
        # Building the parser is most of a command's cost here: it is built once.
        parser = _parser()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                mock.patch.object(fuzz.cli, "build_parser", lambda: parser):
            try:
                status = fuzz.cli.main(argv)
            except SystemExit as exit_:  # argparse's usage errors
                status = exit_.code if isinstance(exit_.code, int) else 2
    finally:
        os.unlink(piped.name)
    return status, out.getvalue(), err.getvalue()


def _filecheck(argv: list[str], stdin: str) -> tuple[int, str, str]:
    from filecheck.matcher import Matcher
    from filecheck.options import parse_argv_options

    err = io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
            status = Matcher.from_opts(parse_argv_options(["filecheck", *argv])).run()
    finally:
        sys.stdin = saved
    return status, "", err.getvalue()


def _command(argv: list[str], stdin: str, env: dict) -> tuple[int, str, str]:
    negate = argv[:1] == ["not"]
    if negate:
        argv = argv[1:]
    if argv[0] == "agxfuzz":
        status, out, err = _agxfuzz(argv[1:], stdin)
    elif argv[0] == "filecheck":
        status, out, err = _filecheck(argv[1:], stdin)
    elif argv[0] == "echo":
        status, out, err = 0, " ".join(argv[1:]) + "\n", ""
    else:
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env)
        status, out, err = done.returncode, done.stdout, done.stderr
    if negate:
        status = 0 if status else 1
    return status, out, err


def _pipeline(pipeline, env: dict, steps: list[Step]) -> int:
    from lit.ShCommands import Pipeline, Seq

    if isinstance(pipeline, Seq):
        status = _pipeline(pipeline.lhs, env, steps)
        if (pipeline.op == "&&" and status) or (pipeline.op == "||" and not status):
            return status
        return _pipeline(pipeline.rhs, env, steps)
    assert isinstance(pipeline, Pipeline), pipeline
    text, codes = "", []
    for command in pipeline.commands:
        merge, target = False, None
        for op, where in command.redirects:
            if op == (">&", 2) and where == "1":
                merge = True
            elif op in ((">",), (">>",)):
                target = (where, "a" if op == (">>",) else "w")
            elif op == ("<",):
                text = Path(where).read_text()
            else:
                raise RunFailed(f"redirect {op} {where} is not run in-process: use lit")
        code, out, err = _command(command.args, text, env)
        steps.append(Step(command.args, code, err))
        codes.append(code)
        text = out + err if merge else out
        if target:
            with open(target[0], target[1], encoding="utf-8") as handle:
                handle.write(text)
            text = ""
    # lit's pipefail: the last failing command's status, else the last command's.
    status = next((code for code in reversed(codes) if code), 0) if pipeline.pipe_err else codes[-1]
    if pipeline.negate:
        status = 0 if status else 1
    return status


def run_golden(path: Path) -> None:
    """Every RUN line of `path`, in this process; RunFailed names the first that fails."""
    from lit.ShUtil import ShParser

    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    for line in run_lines(path):
        steps: list[Step] = []
        status = _pipeline(ShParser(line, pipefail=True).parse(), env, steps)
        if status:
            report = "\n".join(
                f"  $ {shlex.join(step.argv)}  (exit {step.status})"
                + "".join(f"\n    {text}" for text in step.stderr.splitlines())
                for step in steps
            )
            raise RunFailed(f"{path}: RUN: {line}\n{report}")


def _without_comments(text: str) -> str:
    kept = []
    for line in text.splitlines():
        code = line.split(";", 1)[0].rstrip()
        if code:
            kept.append(code)
    return "\n".join(kept) + "\n"


def test_there_are_enough_golden_files():
    assert len(FILES) >= 80


def missing_lines(text: str) -> list[str]:
    """What a golden lacks of its minimum: a RUN line and a FileCheck line."""
    lines = text.splitlines()
    missing = []
    if not any(line.startswith("; RUN: ") for line in lines):
        missing.append("no RUN line")
    if not any(CHECK_LINE.match(line) for line in lines):
        missing.append("no CHECK line")
    return missing


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(GOLDEN)))
def test_golden(path: Path):
    text = path.read_text()
    lines = [line for line in text.splitlines() if line.startswith(";")]
    assert missing_lines(text) == []
    run_golden(path)
    try:
        fn = parse_function(text, filename=path.name)
        valid = not verify(fn)
    except ParseError:
        valid = False
    if valid:
        assert print_function(fn) == _without_comments(text)
    else:  # an invalid program is a golden of the error: what its RUN lines check
        assert any(re.match(r"; RUN: not agxfuzz verify %s\b", line) for line in lines)


def run_lit(*paths: Path) -> subprocess.CompletedProcess:
    lit = shutil.which("lit", path=str(Path(sys.executable).parent))
    assert lit, f"lit is not installed beside {sys.executable} (the test extra has it)"
    return subprocess.run([lit, "-v", *map(str, paths)], capture_output=True, text=True,
                          timeout=300)


# One golden of each kind: opt and interp before and after the passes, liveness, machine
# passes on the wave interpreter, verify errors (`not`, `2>&1`).
UNDER_LIT = ["pass_cmpsel_icmp_swap.agx", "liveness_loop_back_edge.agx",
             "machine/lower_copies_Swap.agx", "verify_operand_rules.agx"]


def test_real_lit_runs_the_same_lines():
    """What runs in-process above runs under lit too (`lit tests/golden` runs them all)."""
    done = run_lit(*(GOLDEN / name for name in UNDER_LIT))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASS: agxfuzz-golden :: ") == len(UNDER_LIT), done.stdout


def _copy_golden(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A golden with one line changed, in a suite of its own (its own lit.cfg.py)."""
    shutil.copy(GOLDEN / "lit.cfg.py", tmp_path / "lit.cfg.py")
    text = (GOLDEN / name).read_text()
    assert text.count(old) == 1, old
    path = tmp_path / Path(name).name
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize(
    "name, old, new, reported",
    [
        # an output of the interpreter, before and after the passes
        ("pass_cmpsel_icmp_swap.agx", "slot 0: 0x64, 0x64, 0x7, 0x7",
         "slot 0: 0x64, 0x64, 0x7, 0x8", "slot 0: 0x64, 0x64, 0x7, 0x8"),
        # a line of the pass's result
        ("pass_cmpsel_icmp_swap.agx", "; CHECK: %r:32 = icmpsel %tid, u0, #100, u1 cond=ult",
         "; CHECK: %r:32 = icmpsel %tid, u0, #100, u1 cond=ugt", "cond=ugt"),
        # a prefix of a line is not the line
        ("pass_cmpsel_icmp_swap.agx", "; CHECK: %r:32 = icmpsel %tid, u0, #100, u1 cond=ult",
         "; CHECK: %r:32 = icmpsel %tid, u0, #100, u1", "u0, #100, u1"),
        # a pass that changes the program fails --expect-unchanged
        ("pass_cmpsel_icmp_swap.agx", "; CHECK: ; {{.*}}: changed",
         "; RUN: agxfuzz opt %s -p cmpsel --expect-unchanged\n; CHECK: ; {{.*}}: changed",
         "--expect-unchanged, but cmpsel reported a change"),
        # a live set
        ("liveness_loop_back_edge.agx", "; LIVE: live-out head: %tid %i %acc",
         "; LIVE: live-out head: %tid %i", "live-out head: %tid %i"),
        # where a parse error is
        ("parse_bad_minifloat.agx", "[[FILE]]:6:20:", "[[FILE]]:6:21:", ":6:21:"),
    ],
    ids=["output", "result-line", "line-prefix", "unchanged", "live-set", "parse-error"],
)
def test_a_wrong_check_fails(tmp_path, name, old, new, reported):
    path = _copy_golden(tmp_path, name, old, new)
    with pytest.raises(RunFailed) as failed:
        run_golden(path)
    assert path.name in str(failed.value) and reported in str(failed.value), failed.value


def test_a_wrong_check_fails_under_lit_with_the_check_named(tmp_path):
    path = _copy_golden(tmp_path, "pass_cmpsel_icmp_swap.agx", "slot 0: 0x64, 0x64, 0x7, 0x7",
                        "slot 0: 0x64, 0x64, 0x7, 0x8")
    done = run_lit(path)
    assert done.returncode == 1
    assert "FAIL: agxfuzz-golden :: pass_cmpsel_icmp_swap.agx" in done.stdout
    assert "slot 0: 0x64, 0x64, 0x7, 0x8" in done.stdout, done.stdout


def test_a_golden_without_run_or_check_lines_is_refused(tmp_path):
    text = (GOLDEN / "out_of_fuel.agx").read_text()
    assert missing_lines(text) == []
    no_check = text.replace("; INTERP-LABEL: input set 0 (2 threads): out of fuel{{.*}}\n", "")
    assert missing_lines(no_check) == ["no CHECK line"]
    no_run = "\n".join(line for line in text.splitlines() if not line.startswith("; RUN:"))
    assert missing_lines(no_run) == ["no RUN line"]
    # and FileCheck itself refuses a RUN line whose prefix has no CHECK lines
    path = tmp_path / "out_of_fuel.agx"
    shutil.copy(GOLDEN / "lit.cfg.py", tmp_path / "lit.cfg.py")
    path.write_text(no_check)
    with pytest.raises(RunFailed, match="INTERP"):
        run_golden(path)
