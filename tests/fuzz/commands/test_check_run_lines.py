"""A finding's reproducer is a lit test: its RUN lines replay the finding (the input set
inside the file), fail while the bug is there and pass once the pass is fixed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fuzz.cli import main
from tests.lit_inprocess import RunFailed, run_file, run_lit
from tests.test_golden import GOLDEN

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

INVERTED_COMPARE = """func @inverted(u0:32, u1:32) {
block0:
  %tid:32 = get_sr sr=thread_id
  %t:16 = icmp %tid, u0 cond=ult inv=1
  %r:32 = icmpsel %t, #0, u1, #100 cond=ueq
  export %r slot=0
  stop
}
"""

WRONG = f"""import sys
sys.path.insert(0, {str(EXAMPLES)!r})
from wrong_cmpsel import wrong_cmpsel as fuse
"""

FIXED = """from agxir.passes import get_pass

def fuse(fn):
    return get_pass("cmpsel").run(fn)
"""


def test_a_reproducer_fails_under_lit_until_the_pass_is_fixed(tmp_path, capsys):
    program = tmp_path / "inverted.agx"
    program.write_text(INVERTED_COMPARE)
    fusion = tmp_path / "fusion.py"
    fusion.write_text(WRONG)
    findings = tmp_path / "findings"
    status = main(["check", str(program), "--pass", f"{fusion}:fuse", "--threads", "4",
                   "--seed", "1", "--out", str(findings)])
    capsys.readouterr()
    assert status == 1
    (reproducer,) = findings.glob("*.agx")
    run_lines = [line for line in reproducer.read_text().splitlines() if "RUN:" in line]
    assert run_lines[0].startswith("; RUN: echo '[{\"threads\":")
    assert run_lines[0].endswith("' > %t.json")
    assert run_lines[1] == f"; RUN: agxfuzz check %s --pass {fusion}:fuse --inputs %t.json"
    shutil.copy(GOLDEN / "lit.cfg.py", findings / "lit.cfg.py")

    with pytest.raises(RunFailed, match="agxfuzz check"):
        run_file(reproducer)
    fusion.write_text(FIXED)
    run_file(reproducer)
    done = run_lit(reproducer)
    assert done.returncode == 0, done.stdout + done.stderr


def test_run_lines_name_pass_files_absolutely(monkeypatch):
    """lit runs a RUN line in its own directory, not where the campaign ran."""
    from fuzz.findings import _run_lines

    monkeypatch.chdir(EXAMPLES.parent)
    (line,) = _run_lines(["--pass", "examples/wrong_cmpsel.py:wrong_cmpsel",
                          "--pass", "agxir.passes.dce:run", "--passes", "dce"], None)
    assert line == (f"; RUN: agxfuzz check %s --pass {EXAMPLES}/wrong_cmpsel.py:wrong_cmpsel "
                    "--pass agxir.passes.dce:run --passes dce")
