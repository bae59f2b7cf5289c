"""`agxfuzz liveness` (fuzz.commands.liveness): the sets it prints, and exit 1 when
agxir.liveness and the reference disagree."""

from __future__ import annotations

from pathlib import Path

import agxir.liveness
import fuzz.commands.liveness
from fuzz.cli import main

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
LOOP = str(GOLDEN / "liveness_loop_back_edge.agx")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_prints_each_block_in_and_out_in_definition_order(capsys):
    status, out, err = run(capsys, "liveness", LOOP)
    assert (status, err) == (0, "")
    assert out == (
        "live-in entry: -\n"
        "live-out entry: %tid %zero\n"
        "live-in head: %tid\n"
        "live-out head: %tid %i %acc\n"
        "live-in body: %tid %i %acc\n"
        "live-out body: %tid %acc2 %next\n"
        "live-in exit: %acc\n"
        "live-out exit: -\n"
        "max-pressure: 6\n"
    )


class _Forgetful(agxir.liveness.Liveness):
    """A wrong analysis: forgets that %zero leaves the entry block."""

    def __init__(self, fn, cfg=None):
        super().__init__(fn, cfg)
        entry = fn.blocks[0]
        self.live_out[entry] = frozenset(v for v in self.live_out[entry] if v.name != "zero")


def test_a_difference_from_the_reference_exits_1(capsys, monkeypatch):
    monkeypatch.setattr(fuzz.commands.liveness, "Liveness", _Forgetful)
    status, out, err = run(capsys, "liveness", LOOP)
    assert status == 1
    assert "live-out entry: %tid\n" in out  # what the analysis said is still shown
    assert err.count("\n") == 1
    assert "agxir.liveness disagrees with the reference: live_out[entry]" in err


def test_machine_level_files_are_refused(capsys):
    status, out, err = run(capsys, "liveness", str(GOLDEN / "machine" / "lower_copies_Swap.agx"))
    assert status == 2 and out == ""
    assert "liveness is computed for SSA functions; this one is func.machine" in err


def test_a_file_that_does_not_parse_is_one_line(capsys, tmp_path):
    path = tmp_path / "bad.agx"
    path.write_text("func @f(u0:32) {\nentry:\n  %a:32 = fadd u0, #0.3\n  stop\n}\n")
    status, out, err = run(capsys, "liveness", str(path))
    assert status == 2 and out == ""
    assert err == f"{path}:3:20: not an 8-bit minifloat: #0.3\n"
