"""CFG, reverse postorder, dominators, frontiers and reducibility (agxir.cfg)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agxir.cfg import CFG, Dominators, is_reducible
from agxir.ir import Block, Function, Immediate, Instruction, Operand
from agxir.opcodes import OPCODES


def terminator(targets: list[Block]) -> Instruction:
    if not targets:
        return Instruction(OPCODES["stop"], None, [])
    if len(targets) == 1:
        return Instruction(OPCODES["jump"], None, [], blocks=list(targets))
    zero = Operand(Immediate(0))
    return Instruction(
        OPCODES["if_icmp"], None, [zero, zero], {"cond": "ueq", "inv": 0}, list(targets)
    )


def make_fn(adjacency: list[list[int]]) -> Function:
    """Block i is named b{i} and branches to the listed blocks (none: stop)."""
    blocks = [Block(f"b{i}") for i in range(len(adjacency))]
    for block, targets in zip(blocks, adjacency, strict=True):
        block.instructions.append(terminator([blocks[t] for t in targets]))
    return Function("f", [], blocks)


def analyse(adjacency):
    fn = make_fn(adjacency)
    cfg = CFG(fn)
    return fn, cfg, Dominators(cfg)


def names(blocks) -> list[str]:
    return [b.name for b in blocks]


def idoms(doms: Dominators) -> dict[str, str | None]:
    return {b.name: (None if d is None else d.name) for b, d in doms.idom.items()}


def frontiers(doms: Dominators) -> dict[str, set[str]]:
    return {b.name: {f.name for f in fs} for b, fs in doms.frontier.items()}


# --- hand-checked shapes ----------------------------------------------------------------------


def test_diamond():
    fn, cfg, doms = analyse([[1, 2], [3], [3], []])
    b0, b1, b2, b3 = fn.blocks
    assert cfg.succs[b0] == [b1, b2]
    assert cfg.preds[b3] == [b1, b2]
    assert cfg.rpo[0] is b0 and cfg.rpo[-1] is b3
    assert cfg.back_edges == []
    assert idoms(doms) == {"b0": None, "b1": "b0", "b2": "b0", "b3": "b0"}
    assert frontiers(doms) == {"b0": set(), "b1": {"b3"}, "b2": {"b3"}, "b3": set()}
    assert set(doms.tree_children[b0]) == {b1, b2, b3}
    assert doms.dominates(b0, b3) and doms.dominates(b3, b3)
    assert not doms.dominates(b1, b3) and not doms.strictly_dominates(b3, b3)
    assert is_reducible(cfg, doms)


def test_predecessor_order_is_source_order_not_edge_order():
    # b3 is reached from b2 first in DFS, but b1 comes first in the function.
    fn, cfg, _ = analyse([[2, 1], [3], [3], []])
    assert names(cfg.preds[fn.blocks[3]]) == ["b1", "b2"]


def test_branch_with_equal_targets_is_one_edge():
    fn, cfg, doms = analyse([[1, 1], []])
    assert cfg.succs[fn.blocks[0]] == [fn.blocks[1]]
    assert cfg.preds[fn.blocks[1]] == [fn.blocks[0]]
    assert idoms(doms) == {"b0": None, "b1": "b0"}


def test_loop():
    # b0 -> b1 (header) -> b2 (body) -> b1; b1 -> b3 (exit)
    fn, cfg, doms = analyse([[1], [2, 3], [1], []])
    b0, b1, b2, b3 = fn.blocks
    assert cfg.preds[b1] == [b0, b2]
    assert cfg.back_edges == [(b2, b1)]
    assert idoms(doms) == {"b0": None, "b1": "b0", "b2": "b1", "b3": "b1"}
    assert frontiers(doms) == {"b0": set(), "b1": {"b1"}, "b2": {"b1"}, "b3": set()}
    assert is_reducible(cfg, doms)


def test_self_loop():
    fn, cfg, doms = analyse([[1], [1, 2], []])
    b0, b1, b2 = fn.blocks
    assert cfg.back_edges == [(b1, b1)]
    assert cfg.preds[b1] == [b0, b1]
    assert frontiers(doms)["b1"] == {"b1"}
    assert is_reducible(cfg, doms)


def test_nested_loops():
    # b1: outer header, b2: inner header, b3: inner body (-> b2), b4: outer latch (-> b1).
    fn, cfg, doms = analyse([[1], [2, 5], [3, 4], [2], [1], []])
    assert idoms(doms) == {
        "b0": None, "b1": "b0", "b2": "b1", "b3": "b2", "b4": "b2", "b5": "b1",
    }  # fmt: skip
    assert frontiers(doms) == {
        "b0": set(), "b1": {"b1"}, "b2": {"b1", "b2"}, "b3": {"b2"}, "b4": {"b1"}, "b5": set(),
    }  # fmt: skip
    assert {(s.name, t.name) for s, t in cfg.back_edges} == {("b3", "b2"), ("b4", "b1")}
    assert is_reducible(cfg, doms)


def test_irreducible():
    # entry -> A, entry -> B, A <-> B, both exit.
    fn, cfg, doms = analyse([[1, 2], [2, 3], [1, 3], []])
    assert idoms(doms) == {"b0": None, "b1": "b0", "b2": "b0", "b3": "b0"}
    assert frontiers(doms) == {"b0": set(), "b1": {"b2", "b3"}, "b2": {"b1", "b3"}, "b3": set()}
    assert len(cfg.back_edges) == 1
    assert not is_reducible(cfg, doms)


def test_unreachable_blocks_do_not_change_live_answers():
    # b3 and b4 are dead; b3 branches into the join b2 and into b1, b4 into b3.
    with_dead = [[1, 2], [2], [], [1, 2], [3]]
    fn, cfg, doms = analyse(with_dead)
    b0, b1, b2, b3, b4 = fn.blocks
    assert cfg.reachable == {b0, b1, b2}
    assert names(cfg.rpo) == ["b0", "b1", "b2"]
    assert names(cfg.preds[b2]) == ["b0", "b1", "b3"]
    assert b3 not in doms.idom and b4 not in doms.idom and b3 not in doms.frontier
    _, _, live_doms = analyse([[1, 2], [2], []])
    assert idoms(doms) == idoms(live_doms) == {"b0": None, "b1": "b0", "b2": "b0"}
    assert frontiers(doms) == frontiers(live_doms)
    assert not doms.dominates(b3, b3)
    assert not doms.dominates(b0, b3)
    assert not doms.dominates(b3, b2)
    assert is_reducible(cfg, doms)


def test_targets_outside_the_function_are_ignored():
    fn = make_fn([[1], []])
    stray = Block("elsewhere", [terminator([])])
    fn.blocks[1].instructions[0] = terminator([stray])
    cfg = CFG(fn)
    assert cfg.succs[fn.blocks[1]] == []
    assert stray not in cfg.preds


def test_empty_function():
    cfg = CFG(Function("f"))
    doms = Dominators(cfg)
    assert cfg.rpo == [] and cfg.entry is None and doms.idom == {}
    assert is_reducible(cfg, doms)


# --- random CFGs against the definitions --------------------------------------------------------


def reachable_without(succs: dict, entry, removed) -> set:
    if entry is removed:
        return set()
    seen = {entry}
    work = [entry]
    while work:
        block = work.pop()
        for succ in succs[block]:
            if succ is not removed and succ not in seen:
                seen.add(succ)
                work.append(succ)
    return seen


def reduces_to_one_node(cfg: CFG) -> bool:
    """Hecht–Ullman T1/T2: delete self-loops; merge a node with one predecessor into it."""
    succs = {b: set(cfg.succs[b]) & cfg.reachable for b in cfg.reachable}
    preds = {b: set() for b in cfg.reachable}
    for b, out in succs.items():
        for s in out:
            preds[s].add(b)
    changed = True
    while changed and len(succs) > 1:
        changed = False
        for node in list(succs):
            succs[node].discard(node)  # T1
            preds[node].discard(node)
            if node is cfg.entry or len(preds[node]) != 1:
                continue
            (into,) = preds[node]  # T2
            succs[into].discard(node)
            for s in succs[node]:
                preds[s].discard(node)
                preds[s].add(into)
                succs[into].add(s)
            del succs[node], preds[node]
            changed = True
    return len(succs) == 1


@st.composite
def adjacencies(draw):
    """Random CFGs, biased so that loops, irreducible regions (about one in ten) and dead
    blocks branching into live ones all turn up within 200 examples."""
    count = draw(st.integers(1, 12))
    adjacency = []
    for i in range(count):
        arity = draw(st.sampled_from([0, 1, 2, 2, 2] if i else [1, 2]))
        targets = draw(st.lists(st.integers(0, count - 1), min_size=arity, max_size=arity))
        if targets and i + 1 < count and draw(st.integers(0, 3)):
            targets[0] = i + 1  # mostly fall through, so most of the graph is live
        adjacency.append(targets)
    return adjacency


@settings(derandomize=True, max_examples=200, deadline=None)
@given(adjacencies())
def test_random_cfgs_match_the_definitions(adjacency):
    fn, cfg, doms = analyse(adjacency)
    blocks = fn.blocks
    entry = blocks[0]
    reach = reachable_without(cfg.succs, entry, None)
    assert cfg.reachable == reach
    assert cfg.rpo[0] is entry and set(cfg.rpo) == reach and len(cfg.rpo) == len(reach)

    for b in blocks:
        assert len(set(cfg.preds[b])) == len(cfg.preds[b])
        order = [blocks.index(p) for p in cfg.preds[b]]
        assert order == sorted(order)
        for s in cfg.succs[b]:
            assert b in cfg.preds[s]

    back = set(cfg.back_edges)
    for b in reach:
        for s in cfg.succs[b]:
            if (b, s) in back:
                assert cfg.rpo_index[s] <= cfg.rpo_index[b]
            else:
                assert cfg.rpo_index[b] < cfg.rpo_index[s]

    dom = {
        a: ({a} | (reach - reachable_without(cfg.succs, entry, a))) if a in reach else set()
        for a in blocks
    }
    for a in blocks:
        for b in blocks:
            assert doms.dominates(a, b) == (b in dom[a]), (a, b)

    assert set(doms.idom) == reach
    for b in reach:
        strict = [a for a in reach if a is not b and b in dom[a]]
        if b is entry:
            assert doms.idom[b] is None
        else:
            # the immediate dominator is the strict dominator every other one dominates
            (expected,) = [a for a in strict if all(a in dom[o] for o in strict)]
            assert doms.idom[b] is expected

    for a in reach:
        expected = {
            b
            for b in reach
            if any(p in reach and p in dom[a] for p in cfg.preds[b])
            and not (b in dom[a] and a is not b)
        }
        assert doms.frontier[a] == expected, a

    children = {c for kids in doms.tree_children.values() for c in kids}
    assert children == reach - {entry}
    assert is_reducible(cfg, doms) == reduces_to_one_node(cfg)


# --- scale ------------------------------------------------------------------------------------


N = 100_000


def test_long_chain_needs_no_recursion():
    fn, cfg, doms = analyse([[i + 1] for i in range(N - 1)] + [[]])
    last = fn.blocks[-1]
    assert len(cfg.rpo) == N
    assert doms.idom[last] is fn.blocks[-2]
    assert doms.dominates(fn.entry, last) and not doms.dominates(last, fn.entry)


def test_long_ladder_with_outer_loop():
    # A chain of diamonds: even block i branches to i+1 and i+2, odd block i jumps to i+1;
    # the last block loops back to block 2.
    adjacency = [[i + 1, i + 2] if i % 2 == 0 else [i + 1] for i in range(N - 2)]
    adjacency += [[N - 1], [2]]
    fn, cfg, doms = analyse(adjacency)
    blocks = fn.blocks
    assert len(cfg.rpo) == N
    assert doms.idom[blocks[500]] is blocks[498]
    assert doms.idom[blocks[501]] is blocks[500]
    assert doms.idom[blocks[2]] is blocks[0]
    assert doms.frontier[blocks[501]] == {blocks[502]}
    assert doms.frontier[blocks[500]] == {blocks[2]}
    assert cfg.back_edges == [(blocks[-1], blocks[2])]
    assert doms.dominates(blocks[2], blocks[-1])
    assert is_reducible(cfg, doms)
