"""fuzz.html_report.cfg_dot: a function's CFG as dot text (golden), the rows a pass changed,
and graphviz's SVG of it."""

from __future__ import annotations

import re
import shutil

import pytest

from agxir.text import parse_function
from fuzz.html_report.cfg_dot import ADDED, REMOVED, cfg_dot, changed_rows, svg, too_large

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="graphviz's dot is not installed (.ci/run installs it)")

LOOP = """func @loop(u0:32) {
entry:
  jump -> head
head:
  %i:32 = phi [#0, entry], [%j, head]
  %j:32 = iadd %i, #1 shift=0
  if_icmp %j, u0 cond=ult inv=0 -> head, done
done:
  export %j slot=0
  stop
}
"""

TABLE = '<TABLE BORDER="1" COLOR="{}" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3">'
ROW = '<TR><TD ALIGN="LEFT" BALIGN="LEFT"{}>{}&#160;</TD></TR>'
HEAD = ' BGCOLOR="#e4e8f0"'


def node(name: str, border: str, rows: list[str]) -> str:
    return f'  "{name}" [label=<{TABLE.format(border)}{"".join(rows)}</TABLE>>];'


GOLDEN = "\n".join([
    'digraph "loop" {',
    '  graph [fontname="DejaVu Sans Mono", fontsize=11, labelloc=t, nodesep=0.3, ranksep=0.35];',
    '  node [shape=plain, fontname="DejaVu Sans Mono", fontsize=10];',
    '  edge [color="#555555", arrowsize=0.7];',
    node("entry", "#777777", [ROW.format(HEAD, "<B>entry  (entry)&#160;</B>").replace(
        "&#160;</B>&#160;", "&#160;</B>"), ROW.format("", "jump -&gt; head")]),
    node("head", "#b03030", [
        ROW.format(HEAD, "<B>head&#160;</B>").replace("&#160;</B>&#160;", "&#160;</B>"),
        ROW.format("", "%i:32 = phi [#0, entry], [%j, head]"),
        ROW.format(f' BGCOLOR="{ADDED}"', "%j:32 = iadd %i, #1 shift=0"),
        ROW.format("", "if_icmp %j, u0 cond=ult inv=0 -&gt; head, done"),
    ]),
    node("done", "#777777", [
        ROW.format(HEAD, "<B>done&#160;</B>").replace("&#160;</B>&#160;", "&#160;</B>"),
        ROW.format("", "export %j slot=0"), ROW.format("", "stop"),
    ]),
    '  "entry" -> "head";',
    '  "head" -> "head" [style=dashed, constraint=false];',
    '  "head" -> "done";',
    "}",
    "",
])


def test_dot_text_of_a_loop_is_the_golden_one():
    """One node per block with its instructions escaped for dot's HTML labels, the marked
    row filled, the block holding it bordered, the back edge dashed."""
    assert cfg_dot(parse_function(LOOP), {"head": {1}}) == GOLDEN


def test_a_changed_instruction_is_highlighted_on_both_sides_and_nothing_else():
    before = parse_function(LOOP)
    after = parse_function(LOOP.replace("iadd %i, #1", "iadd %i, #2"))
    removed, added = changed_rows(before, after)
    assert removed == {"head": {1}} and added == {"head": {1}}
    old = cfg_dot(before, removed, colour=REMOVED)
    new = cfg_dot(after, added, colour=ADDED)
    assert old.count(f'BGCOLOR="{REMOVED}"') == 1 and ADDED not in old
    assert new.count(f'BGCOLOR="{ADDED}"') == 1 and REMOVED not in new
    marked = re.search(rf'BGCOLOR="{ADDED}">([^<]*)</TD>', new).group(1)
    assert marked == "%j:32 = iadd %i, #2 shift=0&#160;"


def test_inserted_and_deleted_rows_and_new_blocks_are_changed_rows():
    before = parse_function(LOOP)
    after = parse_function(LOOP.replace("  export %j slot=0\n", "").replace(
        "  jump -> head\n", "  %k:32 = mov_imm value=0x7\n  jump -> head\n"))
    removed, added = changed_rows(before, after)
    assert removed == {"done": {0}}
    assert added == {"entry": {0}}
    renamed = parse_function(LOOP.replace("done", "exit"))
    removed, added = changed_rows(before, renamed)
    assert removed["done"] == {0, 1} and added["exit"] == {0, 1}
    assert removed["head"] == {2} and added["head"] == {2}  # the branch names the new block


def test_machine_level_blocks_show_their_logical_successors():
    text = """func.machine @m() {
b0: -> b1
  r0l = mov_imm value=0x0
  jmp_exec_none -> b1
b1:
  stop
}
"""
    try:
        fn = parse_function(text)
    except Exception as error:  # the grammar of the machine level is another helper's
        pytest.fail(f"machine text did not parse: {error}")
    dot = cfg_dot(fn)
    assert "<B>b0  (entry)  -&gt; b1&#160;</B>" in dot
    assert '"b0" -> "b1";' in dot


def test_huge_functions_are_not_drawn():
    lines = ["func @big() {", "b0:"] + [f"  %v{i}:32 = mov_imm value=0x1"
                                          for i in range(3001)] + ["  stop", "}"]
    reason = too_large(parse_function("\n".join(lines) + "\n"))
    assert reason is not None and "too large" in reason
    assert too_large(parse_function(LOOP)) is None


@needs_dot
def test_svg_is_an_inline_element_with_its_ids_prefixed():
    picture = svg(cfg_dot(parse_function(LOOP), {"head": {1}}), graph_id="f7_after")
    assert picture.startswith("<svg") and picture.endswith("</svg>")
    assert "<?xml" not in picture and "DOCTYPE" not in picture
    assert 'id="f7_after"' in picture and 'id="f7_after_node1"' in picture
    assert ADDED in picture  # the highlighted row's fill
    assert "%j:32 = iadd %i, #1 shift=0" in picture


@needs_dot
def test_a_dot_failure_is_an_error_with_dot_s_message():
    with pytest.raises(RuntimeError, match="dot exited with status"):
        svg("digraph { a -> }")
