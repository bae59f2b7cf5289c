"""The pass registry (agxir.passes): names, lookup, pipelines and the Pass contract."""

from __future__ import annotations

import dataclasses

import pytest

from agxir.ir import clone_function
from agxir.passes import DEFAULT_PIPELINE, PASSES, Pass, UnknownPass, get_pass, run_pipeline
from agxir.text import parse_function, print_function

PROGRAM = """\
func @p(u0:32, u1:32, u2:32) {
b0:
  %m:32 = mov u0
  %t:16 = icmp %m, u1 cond=ult inv=0
  %r:32 = icmpsel %t, #0, u2, #7 cond=ueq
  if_icmp %t, #0 cond=ueq inv=1 -> b1, b2
b1:
  export %r slot=0
  stop
b2:
  stop
}
"""


def test_registered_names():
    assert list(PASSES) == [
        "dce",
        "copyprop",
        "cmpsel",
        "cmpsel-uniform-compare",
        "cmpsel-uniform-select",
        "branch-cmp",
        "address-cleanup",
        "address-fuse",
        "address-fold",
        "address-lower",
        "fmov-prop",
        "fmov-rev",
        "inline-imm",
        "not-fuse",
        "not-rev",
        "if-not",
        "ext-prop",
        "shift-fuse",
        "ballot-fuse",
        "pressure-schedule",
    ]
    for name, p in PASSES.items():
        assert isinstance(p, Pass)
        assert p.name == name
        assert p.summary and callable(p.run)


def test_default_pipeline_is_mesa_forward_pass_then_dce():
    assert DEFAULT_PIPELINE == ("copyprop", "cmpsel", "branch-cmp", "dce")
    assert all(name in PASSES for name in DEFAULT_PIPELINE)


def test_pass_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_pass("dce").name = "other"


def test_get_pass():
    assert get_pass("cmpsel") is PASSES["cmpsel"]


def test_unknown_pass_lists_known_names():
    with pytest.raises(UnknownPass) as caught:
        get_pass("cmpsell")
    message = str(caught.value)
    assert "cmpsell" in message
    for name in PASSES:
        assert name in message
    assert isinstance(caught.value, KeyError)


def test_run_pipeline_reports_each_pass():
    fn = parse_function(PROGRAM)
    result = run_pipeline(fn, DEFAULT_PIPELINE)
    assert result == [("copyprop", True), ("cmpsel", True), ("branch-cmp", True), ("dce", True)]
    assert (
        print_function(fn)
        == """\
func @p(u0:32, u1:32, u2:32) {
b0:
  %r:32 = icmpsel u0, u1, #7, u2 cond=ult
  if_icmp u0, u1 cond=ult inv=0 -> b1, b2
b1:
  export %r slot=0
  stop
b2:
  stop
}
"""
    )
    assert run_pipeline(fn, DEFAULT_PIPELINE) == [(name, False) for name in DEFAULT_PIPELINE]


def test_run_pipeline_checks_every_name_before_running():
    fn = parse_function(PROGRAM)
    with pytest.raises(UnknownPass):
        run_pipeline(fn, ["copyprop", "nope"])
    assert print_function(fn) == PROGRAM


def test_run_pipeline_rejects_a_bare_string():
    with pytest.raises(TypeError):
        run_pipeline(parse_function(PROGRAM), "dce")


def test_empty_pipeline():
    fn = parse_function(PROGRAM)
    assert run_pipeline(fn, []) == []


def test_passes_leave_the_original_when_run_on_a_clone():
    fn = parse_function(PROGRAM)
    run_pipeline(clone_function(fn), DEFAULT_PIPELINE)
    assert print_function(fn) == PROGRAM
