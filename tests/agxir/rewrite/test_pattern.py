"""The rule data types (agxir.rewrite.pattern): what they accept and what they refuse."""

from __future__ import annotations

import pytest

from agxir.rewrite import Bind, Emit, Ins, NewImm, Opnd, Rule, Use, any_, defined_by, imm, reg, zero


def test_shorthands():
    assert zero().bits == 0 and zero().kinds == {"immediate"} and zero().abs is False
    assert reg("x").kinds == {"value", "uniform"} and reg("x").abs is None
    assert imm("k").neg is False and imm("k").bits is None
    mov = Ins("bitop", (reg("x"), zero()), {"tt": 0xA})
    d = defined_by(mov, "m")
    assert d.kinds == {"value"} and d.abs is False and d.defined_by is mov


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Opnd(kinds=frozenset({"register"})), "kinds"),
        (lambda: Opnd(kinds=frozenset({"value"}), bits=3), "fixed immediate"),
        (lambda: Opnd(defined_by=Ins("get_sr", (), {"sr": "thread_id"})), "SSA value"),
        (lambda: Ins("nope", ()), "unknown opcode"),
        (lambda: Ins("iadd", (any_(), any_()), {"cond": "ueq"}), "no attribute cond"),
        (lambda: Ins("iadd", (any_(),)), "takes 2 sources"),
        (lambda: Ins(None, (any_(), any_())), "wildcard"),
        (lambda: Emit("iadd", (Use("a"), Use("b"))), "missing"),
        (lambda: Emit("iadd", (Use("a"),), {"shift": 0}), "takes 2 sources"),
        (lambda: Emit("nope", ()), "unknown opcode"),
        (lambda: Rule("r", Ins("iadd", (any_("a"), any_("b"))), Use("a")), "focus"),
        (lambda: Rule("r", Ins(None, srcs=None, focus=any_("a")), (Emit("iadd", (Use("a"), Use("a")), {"shift": 0}),)), "focus"),
        (lambda: Rule("r", Ins("iadd", (any_("a"), any_("b"))), ()), "empty"),
    ],
)
def test_mistakes_are_caught_when_the_rule_is_written(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_rule_parts():
    focus = Rule("copy", Ins(None, srcs=None, focus=any_("x")), Use("x", abs=True))
    assert focus.focused and focus.emits == ()
    emit = Emit("iadd", (Use("a"), NewImm(3)), {"shift": Bind("s")})
    whole = Rule("r", Ins("iadd", (any_("a"), imm("k")), {"shift": Bind("s")}), (emit,), why="because")
    assert not whole.focused and whole.emits == (emit,) and whole.why == "because"
    assert Use("a").verbatim and not Use("a", neg=False).verbatim
