"""AGX occupancy: how many threads a core keeps resident for a register demand.

The table is Mesa's `agx_occupancies` (agx_performance.c): a shader using at most
`halfregs` 16-bit halves per thread runs with up to `threads` threads. The register
allocator's bound for a compute shader comes from the workgroup size the other way round.
"""

from __future__ import annotations

from agxir.ir import NUM_HALVES

# (halfregs at most, max threads), ascending in halfregs.
OCCUPANCY: tuple[tuple[int, int], ...] = (
    (104, 1024), (112, 896), (128, 832), (136, 768), (144, 704),
    (160, 640), (184, 576), (208, 512), (232, 448), (256, 384),
)  # fmt: skip


def threads_for_halves(halfregs: int) -> int:
    """The most threads a core runs when each uses `halfregs` halves (Mesa's
    agx_occupancy_for_register_count); 0 when the demand exceeds the register file."""
    for bound, threads in OCCUPANCY:
        if halfregs <= bound:
            return threads
    return 0


def max_halves_for_threads(threads: int) -> int:
    """The most halves a thread may use so that `threads` threads fit (Mesa's
    agx_max_registers_for_occupancy); the whole file for small workgroups."""
    best = 0
    for bound, fits in OCCUPANCY:
        if fits >= threads:
            best = bound
    return best if best else OCCUPANCY[0][0]


assert OCCUPANCY[-1][0] == NUM_HALVES
