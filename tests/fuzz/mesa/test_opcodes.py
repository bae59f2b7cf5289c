"""The opcode table against the model and against the Mesa tree the bridge is built from."""

from __future__ import annotations

from agxir.text import parse_function
from fuzz.mesa.opcodes import BY_MODEL, TABLE, mesa_opcode_names, model_opcode_names, untranslatable


def test_every_model_opcode_is_listed_once():
    names = [row.model for row in TABLE]
    assert len(names) == len(set(names))
    assert set(names) == model_opcode_names()


def test_every_mesa_name_cited_exists_in_the_tree(bridge):
    mesa = mesa_opcode_names(bridge.mesa_src)
    cited = {row.mesa for row in TABLE if row.mesa is not None}
    assert cited <= mesa, sorted(cited - mesa)
    # the read-back pseudo-ops the wire form knows of are Mesa's too
    assert {"mov", "not", "and", "or", "xor", "begin_cf", "local_store"} <= mesa


def test_rows_without_a_counterpart_say_why():
    for row in TABLE:
        assert row.why.strip(), row.model
    assert BY_MODEL["ballot"].mesa is None


def test_untranslatable_opcodes_are_counted_by_opcode():
    fn = parse_function(
        "func.exec @f(u0:32) {\n"
        "b0:\n"
        "  %a:32 = imul u0, u0\n"
        "  %b:32 = imul %a, u0\n"
        "  %c:32 = ballot %b\n"
        "  %d:32 = iadd %c, #1 shift=0\n"
        "  export %d slot=0\n"
        "  stop\n"
        "}\n"
    )
    assert untranslatable(fn) == {"imul": 2, "ballot": 1}
