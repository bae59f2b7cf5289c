"""`agxfuzz mesa agree`: the differ on hand-written before/after pairs, a small run whose
classes partition the programs of each kind, a planted difference in meaning reported as
a finding (exit 1), and the Mesa bug the comparison showed (agx_is_fmov ignores the -0.0
immediate's modifiers)."""

from __future__ import annotations

import json

import pytest

from agxir.ir import clone_function
from agxir.text import parse_function
from fuzz.mesa.agree import (
    CLASSES,
    KINDS,
    changes,
    classify,
    compare_program,
    mesa_spelling,
    model_spelling,
    run_mesa,
)
from fuzz.mesa.agree_report import agree, format_agreement, to_json
from fuzz.passes_under_test import registered

HEAD = "func.exec @f(u0:32, u1:32) {\nb0:\n"
TAIL = "  stop\n}\n"


def _exec(body: str):
    return parse_function(HEAD + body + TAIL)


def _kinds(before: str, after: str) -> set[tuple[str, str]]:
    return {(kind, where) for kind, where, _ in changes(_exec(before), _exec(after))}


def test_a_compare_folded_into_a_select_and_its_dead_compare():
    before = ("  %t:32 = icmp u0, u1 cond=ult inv=0\n"
              "  %s:32 = icmpsel %t, #0, u0, u1 cond=ueq\n  export %s slot=0\n")
    after = "  %s:32 = icmpsel u0, u1, u1, u0 cond=ult\n  export %s slot=0\n"
    assert _kinds(before, after) == {("cmpsel", "%s"), ("dce", "%t")}
    # the payloads not swapped is not the same change: sources that no step explains
    wrong = "  %s:32 = icmpsel u0, u1, u0, u1 cond=ult\n  export %s slot=0\n"
    assert ("other", "%s") in _kinds(before, wrong)


def test_moves_fmovs_and_immediates_traced_to_their_step():
    before = ("  %c:32 = mov_imm value=0x3\n  %m:32 = mov u0\n  %f:32 = fadd u1, #-0.0\n"
              "  %a:32 = iadd %m, %c shift=0\n  %b:32 = fmul %f.neg, u0\n"
              "  export %a slot=0\n  export %b slot=1\n")
    after = ("  %a:32 = iadd u0, #3 shift=0\n  %b:32 = fmul u1.neg, u0\n"
             "  export %a slot=0\n  export %b slot=1\n")
    assert _kinds(before, after) == {("copyprop", "%a"), ("inline-imm", "%a"),
                                     ("fmov-prop", "%b"), ("dce", "%c"), ("dce", "%m"),
                                     ("dce", "%f")}


def test_an_fmov_folded_into_its_producer_is_not_dead_code():
    before = "  %p:32 = fmul u0, u1\n  %r:32 = fadd.sat %p, #-0.0\n  export %r slot=0\n"
    after = "  %r:32 = fmul.sat u0, u1\n  export %r slot=0\n"
    assert _kinds(before, after) == {("fmov-rev", "%r")}


def test_a_branch_on_a_compare_and_an_unexplained_change():
    before = ("  %t:32 = icmp u0, u1 cond=ult inv=0\n"
              "  if_icmp %t, #0 cond=ueq inv=1 n=1\n  pop_exec n=1\n")
    after = "  if_icmp u0, u1 cond=ult inv=0 n=1\n  pop_exec n=1\n"
    assert _kinds(before, after) == {("if-cmp", "b0#0"), ("dce", "%t")}
    assert _kinds("  %a:32 = iadd u0, u1 shift=0\n  export %a slot=0\n",
                  "  %a:32 = iadd u1, u0 shift=0\n  export %a slot=0\n") == {("other", "%a")}


def test_classes():
    a, b = ("k", "%1", "x"), ("k", "%2", "y")
    assert classify(set(), set()) is None
    assert classify({a}, {a}) == "both"
    assert classify({a, b}, {a}) == "model only"
    assert classify(set(), {b}) == "Mesa only"
    assert classify({a}, {b}) == "different"


def test_the_spellings_round_trip():
    fn = _exec("  %f:32 = fadd.sat u0, #-0.0\n  %g:32 = fadd u0, #-0.0.abs\n"
               "  export %f slot=0\n  export %g slot=1\n")
    model = model_spelling(clone_function(fn))
    assert [ins.name for ins in model.instructions()][:2] == ["fmov", "fadd"]  # exact only
    assert changes(fn, mesa_spelling(model)) == set()


def test_mesa_takes_an_fadd_of_a_modified_negative_zero_for_an_fmov():
    """Found by this comparison: Mesa's agx_is_fmov compares the -0.0 immediate by value
    only (agx_is_equiv), so `fadd x, #-0.0.abs` (x + 0.0) is folded away like an fmov and
    -0.0 comes out where +0.0 is meant."""
    ssa = parse_function("func @f(u0:32) {\nb0:\n  %z:32 = fmul u0, #1.0\n"
                         "  %r:32 = fadd %z, #-0.0.abs\n  export %r slot=0\n  stop\n}\n")
    from oracles.inputs import InputSet

    fn = clone_function(ssa)
    registered("lower-cf").run(fn)
    inputs = [InputSet.from_json({"threads": 1, "scalars": {"u0": 0x80000000}, "buffers": {}})]
    result = compare_program(0, ssa, fn, inputs)
    assert result.classes["fmov-rev"] == "Mesa only"
    assert result.wrong == "Mesa"
    assert "the model 0x0, Mesa 0x80000000" in result.meaning


def test_mesa_composes_that_fmov_itself():
    """The same bug from an input with no modifier on any immediate: inline_imm makes the
    fmov of a -0.0 constant `fadd #-0.0, #-0.0`, agx_optimizer_fmov composes its `.neg`
    use into `fadd u0, #-0.0.neg` (u0 + 0.0), and that is then taken for an fmov of u0."""
    from oracles.inputs import InputSet

    ssa = parse_function("func @f(u0:32) {\nb0:\n  %c:32 = mov_imm value=0x80000000\n"
                         "  %t:32 = fadd %c, #-0.0\n  %u:32 = fadd u0, %t.neg\n"
                         "  %v:32 = fmul %u, #1.0\n  export %v slot=0\n  stop\n}\n")
    fn = clone_function(ssa)
    registered("lower-cf").run(fn)
    inputs = [InputSet.from_json({"threads": 1, "scalars": {"u0": 0x80000000}, "buffers": {}})]
    result = compare_program(0, ssa, fn, inputs)
    # read through an fadd that was no fmov in the input: no step of the differ explains it
    assert result.classes["other"] == "Mesa only"
    assert result.wrong == "Mesa"
    assert "the model 0x0, Mesa 0x80000000" in result.meaning


def test_the_reducer_keeps_a_class():
    """Mesa's if_cmp takes only the `t != 0` branch (inv=1); the model's branch-cmp folds
    either: a model-only class, kept by the reducer while everything else goes."""
    from fuzz.mesa.agree_report import classes_of, reduce_class
    from oracles.inputs import InputSet

    ssa = parse_function(
        "func @f(u0:32) {\nb0:\n  %a:32 = iadd u0, #3 shift=0\n  export %a slot=1\n"
        "  %t:32 = icmp u0, #7 cond=ult inv=0\n"
        "  if_icmp %t, #0 cond=ueq inv=0 -> b1, b2\nb1:\n  export u0 slot=0\n  stop\n"
        "b2:\n  stop\n}\n")
    assert classes_of(ssa) == {"if-cmp": "model only", "dce": "model only"}
    inputs = [InputSet.from_json({"threads": 1, "scalars": {"u0": 1}, "buffers": {}})]
    reduced = reduce_class(ssa, inputs, "if-cmp", "model only", 200)
    assert classes_of(reduced)["if-cmp"] == "model only"
    assert reduced.instruction_count() < ssa.instruction_count()


@pytest.fixture(scope="module")
def small_run(bridge):
    with pytest.MonkeyPatch.context() as patch:  # the session's bridge, at module scope
        patch.setenv("AGXFUZZ_MESA_BRIDGE", str(bridge.path))
        patch.setenv("AGXFUZZ_MESA_SRC", str(bridge.mesa_src))
        return agree(1, 30)


def test_a_small_run_partitions_each_kinds_programs(small_run):
    assert small_run.programs == 30
    compared = small_run.programs - sum(small_run.skipped.values())
    for kind, found in small_run.classes.items():
        assert kind in KINDS and set(found) <= set(CLASSES)
        assert 0 < sum(found.values()) <= compared
    # cmpsel is the one Mesa merged as the model has it: every fusion is the same
    assert small_run.classes["cmpsel"]["both"] > 0
    assert set(small_run.classes["cmpsel"]) == {"both"}
    assert not small_run.differences
    text = format_agreement(small_run, "agxfuzz mesa agree --examples 30 --seed 1")
    assert "| cmpsel | `agx_optimizer_cmpsel` |" in text
    assert "none: seed 001's address modes" in text  # the model's rules Mesa lacks, said
    assert "| threads |" in text
    record = to_json(small_run)
    assert record["programs"] == 30 and "halfregs" in record["allocators"]


def test_the_same_seed_replays(small_run):
    again = agree(1, 30, allocators=False)
    assert again.classes == small_run.classes


def _main(argv, monkeypatch):
    import fuzz.cli

    return fuzz.cli.main(argv)


def test_a_planted_difference_in_meaning_is_a_finding(tmp_path, monkeypatch, capsys):
    import fuzz.mesa.agree as agree_module

    def wrong_mesa(fn):  # Mesa's output with every export's value replaced by a uniform
        out = run_mesa(fn)
        for block in out.blocks:
            for ins in block.instructions:
                if ins.name == "export" and ins.srcs[0].size == 32 and fn.uniforms \
                        and fn.uniforms[0].size == 32:
                    ins.srcs[0] = ins.srcs[0].with_ref(fn.uniforms[0])
        return out

    monkeypatch.setattr(agree_module, "run_mesa", wrong_mesa)
    out = tmp_path / "findings"
    status = _main(["mesa", "agree", "--examples", "8", "--seed", "1", "--no-allocators",
                    "--out", str(out), "--json", str(tmp_path / "a.json")], monkeypatch)
    printed = capsys.readouterr().out
    assert status == 1, printed
    assert "differ in meaning" in printed and "wrong: Mesa" in printed
    records = [p for p in sorted(out.glob("*.json")) if not p.name.endswith(".inputs.json")]
    assert records and all(json.loads(p.read_text())["pass"] == "mesa:optimizer"
                           for p in records)
    assert json.loads((tmp_path / "a.json").read_text())["differences"]


def test_usage_errors_exit_2(tmp_path, monkeypatch, capsys):
    assert _main(["mesa", "agree", "--examples", "0"], monkeypatch) == 2
    monkeypatch.setenv("AGXFUZZ_MESA_BRIDGE", str(tmp_path / "no-bridge"))
    import fuzz.mesa.passes

    monkeypatch.setattr(fuzz.mesa.passes, "_CLIENT", None)
    assert _main(["mesa", "agree", "--examples", "1"], monkeypatch) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "the Mesa bridge is not available" in err[-1]
