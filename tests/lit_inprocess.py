"""lit's RUN lines run in this process, for pytest: lit's own machinery finds a file's RUN
lines and applies its suite's substitutions (%s, %t, ... from the lit.cfg.py above it), and
lit's shell parser splits each line into pipelines; `agxfuzz` then runs through
fuzz.cli.main and `filecheck` through the filecheck package's matcher, so a file costs
milliseconds rather than a process start-up per command (`lit DIR` runs the same lines in
subprocesses). `not`, `&&`, `||`, `2>&1`, `>`, `>>` and `<` work as in lit's shell; `echo`
runs here and any other command as a subprocess.
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


def run_file(path: Path) -> None:
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


def run_lit(*paths: Path) -> subprocess.CompletedProcess:
    lit = shutil.which("lit", path=str(Path(sys.executable).parent))
    assert lit, f"lit is not installed beside {sys.executable} (the test extra has it)"
    return subprocess.run([lit, "-v", *map(str, paths)], capture_output=True, text=True,
                          timeout=300)
