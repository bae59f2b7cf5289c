"""The one matcher (agxir.rewrite.matcher): what patterns match and bind, how replacements are
built, and how `apply_rules` walks a function."""

from __future__ import annotations

import pytest

from agxir.ir import Function, Instruction, clone_function
from agxir.passes.pass_ import definitions
from agxir.rewrite import (
    Bind,
    Emit,
    Ins,
    NewImm,
    Rule,
    RuleError,
    Use,
    any_,
    apply_rules,
    build,
    defined_by,
    imm,
    match_at,
    matches,
    reg,
    uniform,
    value,
    zero,
)
from agxir.rewrite.matcher import Namer
from agxir.text import parse_function, print_function
from agxir.verifier import verify

PROGRAM = """\
func @p(u0:32, u1:16, u2:64) {
b0:
  %tid:32 = get_sr sr=thread_id
  %m:32 = mov %tid
  %a:32 = iadd %tid, %tid shift=0
  %b:32 = iadd u0, #5 shift=2
  %c:32 = iadd %m, u1.abs shift=0
  %d:32 = iadd %a, %b.neg shift=1
  %t:16 = icmp %tid, u0 cond=slt inv=1
  %s:32 = icmpsel %t, #0, %a, %b cond=ueq
  export %s slot=0
  stop
}
"""


def at(fn: Function, name: str) -> Instruction:
    return next(ins for ins in fn.instructions() if ins.dest is not None and ins.dest.name == name)


def found(pattern: Ins, name: str, precondition=None, text: str = PROGRAM):
    fn = parse_function(text)
    rule = Rule("r", pattern, (Emit("iadd", (Use("x"), Use("x")), {"shift": 0}),), precondition)
    return match_at(rule, at(fn, name), definitions(fn))


def iadd(*srcs, **attrs) -> Ins:
    return Ins("iadd", tuple(srcs), attrs or {"shift": Bind("shift")})


@pytest.mark.parametrize(
    "pattern, name, expected",
    [
        (iadd(any_("x"), any_("y")), "b", True),
        (iadd(reg("x"), reg("y")), "b", False),  # #5 is no register
        (iadd(uniform("x"), imm("y", bits=5)), "b", True),
        (iadd(uniform("x"), imm("y", bits=4)), "b", False),
        (iadd(value("x"), value("x")), "a", True),  # the same value twice
        (iadd(value("x"), value("x")), "c", False),
        (iadd(any_("x"), any_("y", abs=True)), "c", True),
        (iadd(any_("x"), any_("y", abs=False)), "c", False),
        (iadd(any_("x", size=32), any_("y", size=16)), "c", True),
        (iadd(any_("x", size="w"), any_("y", size="w")), "c", False),  # 32 vs 16
        (iadd(any_("x"), any_("y", neg=True), shift=1), "d", True),
        (iadd(any_("x"), any_("y"), shift=0), "d", False),
        (Ins(("iadd", "imul"), (any_("x"), any_("y")), op="which"), "d", True),
        (Ins("iadd", (any_("x"), any_("y")), size=16), "d", False),
    ],
)
def test_operand_and_instruction_constraints(pattern, name, expected):
    assert (found(pattern, name) is not None) == expected


def test_bindings():
    pattern = Ins(
        "iadd",
        (value("x", size="w"), any_("y")),
        {"shift": Bind("k")},
        size="w",
        op="which",
        name="root",
    )
    b = found(pattern, "d").bindings
    fn_d = b.root
    assert b["which"] == "iadd" and b["k"] == 1 and b["w"] == 32 and b["root"] is fn_d
    assert b["x"].ref.name == "a" and b["y"].neg


def test_definitions_are_followed_without_modifiers_by_default():
    compare = Ins("icmp", (any_("p"), any_("q")), {"cond": Bind("cond"), "inv": Bind("inv")})
    select = Ins("icmpsel", (defined_by(compare, "t"), zero(), any_("x"), any_("y")), {"cond": "ueq"})
    match = found(select, "s")
    assert match is not None
    assert [ins.name for ins in match.matched] == ["icmp", "icmpsel"]
    assert match.bindings["cond"] == "slt" and match.bindings["q"].ref.name == "u0"
    assert found(select, "s", text=PROGRAM.replace("icmpsel %t,", "icmpsel %t.abs,")) is None
    # A value defined by something else does not match.
    not_a_compare = PROGRAM.replace("%s:32 = icmpsel %t,", "%s:32 = icmpsel %a,")
    assert found(select, "s", text=not_a_compare) is None


def test_precondition_on_immediates_runs_on_ints():
    seen = []

    def small(b):
        seen.append(b.imm("y"))
        return b.m.ult(b.imm("y"), b.m.const(5, 16), 16)

    assert found(iadd(uniform("x"), imm("y")), "b", small) is None
    assert seen == [5]
    assert found(iadd(uniform("x"), imm("y")), "b", lambda b: b.imm("y") == 5) is not None
    with pytest.raises(RuleError):
        found(iadd(any_("x"), any_("y")), "b", lambda b: b.imm("x"))  # u0 is no immediate
    with pytest.raises(ValueError, match="imul has no attribute shift"):
        Ins(("iadd", "imul"), (any_("x"), any_("y")), {"shift": 0})


def test_focus_matches_each_position():
    mov = Ins("bitop", (reg("x"), zero()), {"tt": 0xA})
    rule = Rule("copy", Ins(None, srcs=None, focus=defined_by(mov, "use", abs=None, neg=None)), Use("x"))
    fn = parse_function(PROGRAM.replace("%c:32 = iadd %m, u1.abs", "%c:32 = iadd %m, %m.neg"))
    c = at(fn, "c")
    positions = [m.position for m in matches(rule, c, definitions(fn))]
    assert positions == [0, 1]
    assert match_at(rule, c, definitions(fn)) is None  # a focus rule needs a position
    built = build(rule, match_at(rule, c, definitions(fn), 1), Namer(()))
    assert [str(s.ref) for s in built[0].srcs] == ["%m:32", "%tid:32"]
    assert not built[0].srcs[1].neg  # Use("x") keeps x's modifiers, not the use's
    assert built[0].dest is c.dest


def test_build_makes_fresh_values_and_computed_immediates():
    rule = Rule(
        "r",
        iadd(uniform("x"), imm("y"), shift=2),
        (
            Emit("imul", (Use("x"), NewImm(lambda b: b.m.shl(b.imm("y"), 2, 16))), size=32, name="t"),
            Emit("iadd", (Use("t"), Use("x", neg=True)), {"shift": 0}),
        ),
    )
    fn = parse_function(PROGRAM)
    b = at(fn, "b")
    new = build(rule, match_at(rule, b, definitions(fn)), Namer(["t"]))
    assert [ins.name for ins in new] == ["imul", "iadd"]
    assert new[0].dest.name == "t_1" and new[0].srcs[1].ref.bits == 20
    assert new[1].dest is b.dest and new[1].srcs[0].ref is new[0].dest and new[1].srcs[1].neg


def test_a_computed_immediate_that_does_not_fit_is_a_rule_error():
    rule = Rule("r", iadd(uniform("x"), imm("y")),
                (Emit("iadd", (Use("x"), NewImm(lambda b: b.m.const(300, 16))), {"shift": 0}),))
    fn = parse_function(PROGRAM)
    with pytest.raises(RuleError, match="300"):
        apply_rules(fn, [rule])
    with pytest.raises(RuleError, match="nothing binds"):
        apply_rules(parse_function(PROGRAM), [Rule("r", iadd(uniform("x"), imm("y")), (
            Emit("iadd", (Use("x"), Use("zz")), {"shift": 0}),))])


# --- the driver -------------------------------------------------------------------------------

NEGATE = Rule(  # iadd x, y -> iadd y, x: applies to its own result again, forever
    "swap",
    Ins("iadd", (any_("x"), any_("y")), {"shift": 0}),
    (Emit("iadd", (Use("y"), Use("x")), {"shift": 0}),),
)


def test_once_per_root_and_order():
    fn = parse_function(PROGRAM)
    visited = []
    rule = Rule("r", Ins("iadd", (any_("x"), any_("y")), {"shift": Bind("s")}),
                (Emit("iadd", (Use("y"), Use("x")), {"shift": Bind("s")}),),
                lambda b: visited.append(b.root.dest.name) or True)
    assert apply_rules(fn, [rule])
    assert visited == ["a", "b", "c", "d"]
    assert "  %b:32 = iadd #5, u0 shift=2\n" in print_function(fn)
    visited.clear()
    assert apply_rules(fn, [rule], order="backward")
    assert visited == ["d", "c", "b", "a"]
    with pytest.raises(ValueError):
        apply_rules(fn, [rule], order="sideways")


def test_without_once_per_root_a_loop_is_an_error():
    with pytest.raises(RuleError, match="keep rewriting"):
        apply_rules(parse_function(PROGRAM), [NEGATE], once_per_root=False)


def test_no_change_leaves_the_function_untouched():
    fn = parse_function(PROGRAM)
    snapshot = [(b, b.instructions, list(b.instructions)) for b in fn.blocks]
    same = Rule("same", iadd(any_("x"), any_("y")), (Emit("iadd", (Use("x"), Use("y")), {"shift": Bind("shift")}),))
    assert apply_rules(fn, [same]) is False
    for block, listed, copy in snapshot:
        assert block.instructions is listed and block.instructions == copy
    assert print_function(fn) == PROGRAM


def test_rewrites_in_place_keep_identity_and_verify():
    fn = parse_function(PROGRAM)
    d = at(fn, "d")
    original = clone_function(fn)
    assert apply_rules(fn, [NEGATE])
    assert at(fn, "a") is not None and at(fn, "d") is d  # same object, new contents
    assert verify(fn) == [] and print_function(original) == PROGRAM
