"""Liveness cost: fixpoint evaluations and wall time of agxir.liveness (postorder worklist,
live-out first) against the order it replaced (`liveness_live_in_first`), and the time of
the reference oracle, on a large generated function.

    python bench/liveness.py [--instructions N] [--reference-instructions M] [--seed S]

The function is a chain of if/else diamonds (phis at each join) with a loop every few
segments; about 50 instructions per block, sources drawn from recent local values and from
values defined in dominating blocks, so many values stay live across many blocks. The
reference walks every live range point by point; it runs on the same function unless M
asks for another size (about 5 s at 100,000 instructions).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agxir.cfg import CFG  # noqa: E402
from agxir.ir import Block, Function, Immediate, Instruction, Operand, Uniform, Value  # noqa: E402
from agxir.liveness import Liveness, live_in_first  # noqa: E402
from agxir.opcodes import OPCODES  # noqa: E402
from agxir.verifier import check  # noqa: E402
from oracles.liveness_reference import compare_liveness, reference_liveness  # noqa: E402

PER_BLOCK = 50
ALU = [("iadd", {"shift": 0}), ("imad", {"shift": 0}), ("bitop", {"tt": 0x6}), ("asr", {})]


class Builder:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.count = 0
        self.blocks: list[Block] = []
        self.dominating: list[Value] = []  # defined in blocks that dominate what follows

    def value(self) -> Value:
        self.count += 1
        return Value(f"v{self.count}", 32)

    def block(self, name: str) -> Block:
        block = Block(f"{name}{len(self.blocks)}")
        self.blocks.append(block)
        return block

    def source(self, local: list[Value]) -> Operand:
        rng = self.rng
        roll = rng.random()
        if local and roll < 0.6:
            return Operand(rng.choice(local[-6:]))
        if self.dominating and roll < 0.95:
            # Mostly the recent past, sometimes a dozen blocks back: live ranges across
            # blocks, and across loops, with live sets a few hundred values wide.
            pool = self.dominating[-40:] if rng.random() < 0.95 else self.dominating[-600:]
            return Operand(rng.choice(pool))
        return Operand(Immediate(rng.randrange(256)))

    def fill(self, block: Block, count: int, local: list[Value]) -> list[Value]:
        for _ in range(count):
            name, attrs = self.rng.choice(ALU)
            width = 3 if name == "imad" else 2
            dest = self.value()
            srcs = [self.source(local) for _ in range(width)]
            block.instructions.append(Instruction(OPCODES[name], dest, srcs, dict(attrs)))
            local.append(dest)
        return local

    def branch(self, block: Block, a: Value, b: Value, targets: list[Block]) -> None:
        block.instructions.append(
            Instruction(
                OPCODES["if_icmp"],
                None,
                [Operand(a), Operand(b)],
                {"cond": "ult", "inv": 0},
                targets,
            )
        )

    @staticmethod
    def jump(block: Block, target: Block) -> None:
        block.instructions.append(Instruction(OPCODES["jump"], None, [], blocks=[target]))

    def phi(self, block: Block, incoming: list[tuple[Value, Block]]) -> Value:
        dest = self.value()
        srcs = [Operand(v) for v, _ in incoming]
        preds = [b for _, b in incoming]
        block.instructions.append(Instruction(OPCODES["phi"], dest, srcs, blocks=preds))
        return dest


def build(instructions: int, seed: int = 1) -> Function:
    """About `instructions` instructions in about instructions / 50 blocks."""
    b = Builder(seed)
    u0 = Uniform("u0", 32)
    cur = b.block("entry")
    tid = b.value()
    cur.instructions.append(Instruction(OPCODES["get_sr"], tid, [], {"sr": "thread_id"}))
    b.dominating.append(tid)
    local = b.fill(cur, PER_BLOCK - 2, [tid])
    segment = 0
    while sum(len(x.instructions) for x in b.blocks) < instructions - 4 * PER_BLOCK:
        segment += 1
        b.dominating += local
        if segment % 8 == 0:
            # A counted loop: two phis carried around the back edge.
            head, body, done = b.block("head"), b.block("body"), b.block("exit")
            b.jump(cur, head)
            start = local[-1]
            i = b.value()
            acc = b.value()
            body_local = b.fill(body, PER_BLOCK - 3, [i, acc])
            nxt = b.value()
            body.instructions.append(
                Instruction(OPCODES["iadd"], nxt, [Operand(i), Operand(Immediate(1))], {"shift": 0})
            )
            b.jump(body, head)
            head.instructions += [
                Instruction(OPCODES["phi"], i, [Operand(start), Operand(nxt)], blocks=[cur, body]),
                Instruction(
                    OPCODES["phi"], acc, [Operand(tid), Operand(body_local[-1])], blocks=[cur, body]
                ),
            ]
            b.fill(head, PER_BLOCK - 3, [i, acc])
            b.branch(head, i, tid, [body, done])
            b.dominating += [ins.dest for ins in head.instructions if ins.dest is not None]
            cur, local = done, b.fill(done, PER_BLOCK - 1, [acc])
            continue
        then, other, join = b.block("then"), b.block("else"), b.block("join")
        b.branch(cur, local[-1], local[-2] if len(local) > 1 else tid, [then, other])
        then_local = b.fill(then, PER_BLOCK - 1, [])
        b.jump(then, join)
        other_local = b.fill(other, PER_BLOCK - 1, [])
        b.jump(other, join)
        p = b.phi(join, [(then_local[-1], then), (other_local[-1], other)])
        q = b.phi(join, [(then_local[-2], then), (other_local[-3], other)])
        cur, local = join, b.fill(join, PER_BLOCK - 3, [p, q])
    for slot, v in enumerate(local[-4:]):
        cur.instructions.append(Instruction(OPCODES["export"], None, [Operand(v)], {"slot": slot}))
    cur.instructions.append(Instruction(OPCODES["stop"], None, []))
    return Function("liveness_bench", [u0], b.blocks)


class TimedLiveness(Liveness):
    """Liveness with the fixpoint (global sets) timed on its own."""

    def _solve(self) -> None:
        started = time.perf_counter()
        super()._solve()
        self.solve_seconds = time.perf_counter() - started


def best_of(repeat: int, action):
    """(result of the last run, best wall time in seconds)."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - started)
    return result, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instructions", type=int, default=100_000)
    parser.add_argument(
        "--reference-instructions", type=int, default=None, help="default: --instructions"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="best of N (not the slow runs)")
    args = parser.parse_args()

    fn = build(args.instructions, args.seed)
    check(fn)
    cfg = CFG(fn)
    blocks = len(fn.blocks)
    live, seconds = best_of(args.repeat, lambda: TimedLiveness(fn, cfg))
    (old_in, old_out, old_evals), old_seconds = best_of(1, lambda: live_in_first(fn, cfg))
    assert old_in == live.live_in and old_out == live.live_out
    (_, _, rev_evals), rev_seconds = best_of(
        args.repeat, lambda: live_in_first(fn, cfg, reverse=True)
    )
    widest = max(len(s) for s in live.live_in.values())
    print(
        f"function: {fn.instruction_count()} instructions, {blocks} blocks, "
        f"{len(cfg.back_edges)} loops; widest live-in {widest} values, "
        f"max pressure {live.max_pressure} halves"
    )
    print(f"{'':42}evaluations  per block  wall time")

    def row(name: str, evaluations: int, wall: float, note: str) -> None:
        print(
            f"{name:<42}{evaluations:>11}  {evaluations / blocks:>9.2f}  {wall * 1e3:7.0f} ms {note}"
        )

    row(
        "Liveness (postorder, live-out first)",
        live.iterations,
        seconds,
        f"(fixpoint {live.solve_seconds * 1e3:.0f} ms; the rest: local sets, kills, pressure)",
    )
    row("live_in_first (source order)", old_evals, old_seconds, "(sets only, 1 run)")
    row("live_in_first (reverse: Mesa's seeding)", rev_evals, rev_seconds, "(sets only)")

    if args.reference_instructions in (None, args.instructions):
        small, small_seconds = fn, seconds
    else:
        small = build(args.reference_instructions, args.seed)
        check(small)
        _, small_seconds = best_of(args.repeat, lambda: Liveness(small))
    reference, ref_seconds = best_of(1, lambda: reference_liveness(small))
    verdict = compare_liveness(small, Liveness(small), reference) or "agrees"
    print(
        f"reference on {small.instruction_count()} instructions, {len(small.blocks)} blocks: "
        f"{ref_seconds * 1e3:.0f} ms (Liveness there: {small_seconds * 1e3:.0f} ms); "
        f"analysis vs reference: {verdict}"
    )


if __name__ == "__main__":
    main()
