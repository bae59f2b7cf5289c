"""`agxfuzz opt --expect-unchanged`: a golden of a pass that must leave a program alone
fails when a pass reports a change, and when it changes the program without saying so."""

from __future__ import annotations

from pathlib import Path

import fuzz.commands.opt
from fuzz.cli import main
from fuzz.passes_under_test import PassUnderTest

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
UNCHANGED = str(GOLDEN / "pass_cmpsel_uniform_compare_unchanged.agx")
CHANGED = str(GOLDEN / "pass_cmpsel_icmp_swap.agx")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_a_pass_that_leaves_the_program_alone_passes(capsys):
    status, out, err = run(capsys, "opt", UNCHANGED, "-p", "cmpsel-uniform-compare",
                           "--expect-unchanged")
    assert (status, err) == (0, "")
    assert out.startswith("; cmpsel-uniform-compare: no change\nfunc @uniform_compare")


def test_a_reported_change_fails(capsys):
    status, out, err = run(capsys, "opt", CHANGED, "-p", "dce,cmpsel", "--expect-unchanged")
    assert status == 1
    assert "; cmpsel: changed" in out  # the result is still printed for FileCheck's report
    assert err.endswith("--expect-unchanged, but cmpsel reported a change\n")


def test_an_unreported_change_fails(capsys, monkeypatch, tmp_path):
    def lying(fn) -> bool:
        fn.blocks[0].instructions.pop(0)  # the unused get_sr... and says nothing
        return False

    monkeypatch.setattr(fuzz.commands.opt, "registered",
                        lambda name: PassUnderTest("liar", lying, ("--passes", name)))
    text = "func @f(u0:32) {\nb0:\n  %t:32 = get_sr sr=thread_id\n  export u0 slot=0\n  stop\n}\n"
    path = tmp_path / "unused.agx"
    path.write_text(text)
    status, _, err = run(capsys, "opt", str(path), "-p", "liar", "--expect-unchanged")
    assert status == 1
    assert "no pass reported a change, but the program printed differently" in err
