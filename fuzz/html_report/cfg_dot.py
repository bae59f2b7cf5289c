"""A function's control-flow graph as graphviz `dot` text, and `dot` run on it.

One node per block, labelled with the block's name and its instructions, one per row, in
the text form's own spelling; the rows a pass changed are filled with a highlight colour.
Which rows changed comes from `changed_rows`: the printed instruction lines of each block
before and after the pass, diffed with difflib (a block only one side has is all changed).
Edges are the blocks' successors (the logical CFG at the machine levels); retreating
edges are dashed so loops read as loops.
"""

from __future__ import annotations

import difflib
import html
import shutil
import subprocess

from agxir.cfg import CFG
from agxir.ir import SSA, Function, Instruction
from agxir.text import format_instruction

REMOVED = "#ffc2c2"  # a row of the function before the pass that the pass changed or dropped
ADDED = "#ffd24d"  # a row of the function after the pass that it added or changed
HEADER = "#e4e8f0"
FONT = "DejaVu Sans Mono"

# Past these a picture is unreadable and `dot` slow: the page says so instead of drawing.
MAX_BLOCKS = 300
MAX_INSTRUCTIONS = 3000


class DotMissing(Exception):
    """graphviz's `dot` is not on PATH."""


def instruction_line(ins: Instruction) -> str:
    """The instruction as the text form prints it; a pass can leave an instruction the
    printer cannot spell, and the picture must still show something for it."""
    try:
        return format_instruction(ins)
    except Exception as error:  # noqa: BLE001 - the pass under test made it, not us
        return f"<unprintable {ins.opcode.name}: {type(error).__name__}>"


def block_lines(fn: Function) -> dict[str, list[str]]:
    return {block.name: [instruction_line(ins) for ins in block.instructions] for block in fn.blocks}


def changed_rows(before: Function, after: Function) -> tuple[dict[str, set[int]], dict[str, set[int]]]:
    """(rows of `before` the pass removed or rewrote, rows of `after` it added or rewrote),
    each by block name and instruction index."""
    old, new = block_lines(before), block_lines(after)
    removed: dict[str, set[int]] = {}
    added: dict[str, set[int]] = {}
    for name, lines in old.items():
        if name not in new:
            removed[name] = set(range(len(lines)))
    for name, lines in new.items():
        if name not in old:
            added[name] = set(range(len(lines)))
            continue
        matcher = difflib.SequenceMatcher(a=old[name], b=lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag in ("replace", "delete"):
                removed.setdefault(name, set()).update(range(i1, i2))
            if tag in ("replace", "insert"):
                added.setdefault(name, set()).update(range(j1, j2))
    return removed, added


def too_large(fn: Function) -> str | None:
    """Why `fn` is not drawn, or None."""
    blocks, instructions = len(fn.blocks), fn.instruction_count()
    if blocks > MAX_BLOCKS or instructions > MAX_INSTRUCTIONS:
        return f"{blocks} blocks, {instructions} instructions: too large to draw"
    return None


def _quoted(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _cell(text: str, colour: str | None = None, bold: bool = False) -> str:
    # A trailing space: graphviz measures the text a little narrower than browsers draw it.
    body = html.escape(text, quote=True) + "&#160;"
    if bold:
        body = f"<B>{body}</B>"
    fill = f' BGCOLOR="{colour}"' if colour else ""
    return f'<TR><TD ALIGN="LEFT" BALIGN="LEFT"{fill}>{body}</TD></TR>'


def cfg_dot(fn: Function, highlight: dict[str, set[int]] | None = None, *,
            colour: str = ADDED, title: str = "") -> str:
    """The dot text of `fn`'s CFG; the rows in `highlight` (block name -> instruction
    indexes) filled with `colour`."""
    highlight = highlight or {}
    cfg = CFG(fn)
    retreating = set(cfg.back_edges)
    lines = [
        f"digraph {_quoted(fn.name)} {{",
        f'  graph [fontname="{FONT}", fontsize=11, labelloc=t, nodesep=0.3, ranksep=0.35'
        + (f", label={_quoted(title)}" if title else "") + "];",
        f'  node [shape=plain, fontname="{FONT}", fontsize=10];',
        '  edge [color="#555555", arrowsize=0.7];',
    ]
    entry = fn.blocks[0] if fn.blocks else None
    for block in cfg.blocks:
        marked = highlight.get(block.name, set())
        header = block.name + ("  (entry)" if block is entry else "")
        if block.logical_successors and fn.level != SSA:
            header += "  -> " + ", ".join(s.name for s in block.logical_successors)
        rows = [_cell(header, HEADER, bold=True)]
        for index, ins in enumerate(block.instructions):
            rows.append(_cell(instruction_line(ins), colour if index in marked else None))
        border = "#b03030" if marked else "#777777"
        table = (f'<TABLE BORDER="1" COLOR="{border}" CELLBORDER="0" CELLSPACING="0" '
                 f'CELLPADDING="3">{"".join(rows)}</TABLE>')
        lines.append(f"  {_quoted(block.name)} [label=<{table}>];")
    for block in cfg.blocks:
        for successor in cfg.succs[block]:
            style = " [style=dashed, constraint=false]" if (block, successor) in retreating else ""
            lines.append(f"  {_quoted(block.name)} -> {_quoted(successor.name)}{style};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def dot_program() -> str:
    """The path of graphviz's `dot`, or DotMissing."""
    found = shutil.which("dot")
    if found is None:
        raise DotMissing("graphviz's `dot` is not on PATH (install graphviz: "
                         "apt-get install graphviz)")
    return found


def svg(dot_text: str, *, graph_id: str | None = None, timeout: float = 60.0) -> str:
    """`dot -Tsvg` of `dot_text`, as an <svg> element to inline in HTML (the XML prolog and
    doctype dropped). `graph_id` (letters, digits, `_`: dot escapes the rest) prefixes every
    id in the SVG, so that several pictures can share a page. A failure of dot raises RuntimeError with its message."""
    command = [dot_program(), "-Tsvg"] + ([f"-Gid={graph_id}"] if graph_id else [])
    try:
        done = subprocess.run(command, input=dot_text, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"dot did not finish within {timeout:g} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise RuntimeError(f"dot exited with status {done.returncode}: {last}")
    start = done.stdout.find("<svg")
    if start < 0:
        raise RuntimeError("dot printed no <svg> element")
    return done.stdout[start:].strip()
