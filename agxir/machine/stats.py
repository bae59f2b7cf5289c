"""Mesa's statistics line for a function (`agx_dump_stats`): `instrs, halfregs, threads,
copies`. The counting lives in `agxir.machine.pressure` beside the demand it shares; this
module keeps the name `function_stats` that `agxfuzz opt --stats` calls.
"""

from __future__ import annotations

from agxir.machine.pressure import Stats, machine_stats

__all__ = ["Stats", "function_stats"]


def function_stats(fn) -> Stats:
    """Mesa's statistics line for `fn` (see `agxir.machine.pressure.machine_stats`)."""
    return machine_stats(fn)
