"""A finding as a Mesa unit test (fuzz/mesa/gtest.py): the case printed for a finding of a
planted variant compiles against the shared tree with Mesa's bundled gtest, fails with the
variant's patch and passes on the tree as it is; bad usage is one line and exit 2."""

from __future__ import annotations

from fuzz.cli import main

CMPSEL = """\
; agxfuzz finding: mesa:optimizer failed the refinement oracle
; thread 0 output slot 0: input 0x0, output 0x1
; pipeline: lower-cf, mesa:optimizer
func @fuzz() {
b1:
  %22:32 = icmp #0, #0 cond=ueq inv=1
  %23:16 = icmpsel %22, #0, #0, #1 cond=ueq
  export %23 slot=0
  stop
}
"""

LIVENESS = """\
; agxfuzz finding: mesa:liveness failed the crash oracle
; MesaLivenessDiffers: Mesa's live_in[b0] has %1 the reference does not
; pipeline: lower-cf, mesa:liveness
func @fuzz(u0:32) {
b0:
  jump -> b1
b1:
  %1:32 = phi [u0, b0]
  %7:32 = iadd %1, #0 shift=0
  stop
}
"""


def _run(tmp_path, capsys, text: str, variant: str) -> tuple[int, str]:
    finding = tmp_path / "finding.agx"
    finding.write_text(text)
    code = main(["mesa", "test", str(finding), "--variant", variant, "--run"])
    return code, capsys.readouterr().out


def test_a_refinement_finding_fails_with_the_bug_and_passes_without(bridge, session_cache,
                                                                    monkeypatch, tmp_path,
                                                                    capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(session_cache.parent.parent))  # builds cached
    code, out = _run(tmp_path, capsys, CMPSEL, "cmpsel-no-swap-on-invert")
    assert "TEST_F(Optimizer, AgxfuzzFinding)" in out
    assert "agx_icmpsel_to(b, agx_get_index(1, AGX_SIZE_16), agx_get_index(0, AGX_SIZE_32)" in out
    assert "   agx_optimizer(ctx);" in out
    assert "// agxfuzz: with cmpsel-no-swap-on-invert: the test FAILS" in out
    assert "// agxfuzz: on the tree: the test passes" in out
    assert code == 0


def test_a_liveness_finding_checks_the_sets(bridge, session_cache, monkeypatch, tmp_path,
                                            capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(session_cache.parent.parent))
    code, out = _run(tmp_path, capsys, LIVENESS, "liveness-phi-dests-live-in")
    assert "TEST_F(AgxfuzzMesa, AgxfuzzFinding)" in out
    assert "agx_compute_liveness(ctx);" in out
    assert "agx_phi_to(b, agx_get_index(0, AGX_SIZE_32), 1);" in out
    assert 'agxfuzz_expect_set(blk[0]->live_out, ctx->alloc, want, 0, ignore, 0, ' in out
    assert "// agxfuzz: with liveness-phi-dests-live-in: the test FAILS" in out
    assert "// agxfuzz: on the tree: the test passes" in out
    assert code == 0


def test_a_finding_that_is_not_mesas_or_an_unknown_variant_is_one_line(tmp_path, capsys):
    model = tmp_path / "model.agx"
    model.write_text(CMPSEL.replace("mesa:optimizer failed", "dce failed").replace(
        "lower-cf, mesa:optimizer", "dce"))
    assert main(["mesa", "test", str(model)]) == 2
    finding = tmp_path / "finding.agx"
    finding.write_text(CMPSEL)
    assert main(["mesa", "test", str(finding), "--variant", "no-such-bug"]) == 2
    assert main(["mesa", "test", str(tmp_path / "missing.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "agxfuzz: dce is not a Mesa pass (mesa:NAME): a Mesa test needs a Mesa finding",
        "agxfuzz: unknown Mesa variant 'no-such-bug'; known: "
        "cmpsel-no-swap-on-invert, copies-64-one-half, copies-no-cycle-breaking, "
        "fmov-prop-neg-neg, inline-imm-ignores-neg, liveness-phi-dests-live-in, "
        "ra-demand-phis-twice, ra-free-at-last-use-in-loop, schedule-ignores-memory-order",
        f"agxfuzz: cannot read {tmp_path / 'missing.json'}: No such file or directory",
    ]
