"""The model's occupancy table (agxir/machine/occupancy.py) is Mesa's: read from the tree's
agx_performance.c, entry for entry. The pressure oracle reads the same table as the
allocator, so a wrong entry (the mutation bench's `136 -> 137` at 768 threads) fools no
oracle and no generated program reaches demands that high; only this pin sees it."""

from __future__ import annotations

import re

from agxir.machine.occupancy import OCCUPANCY, max_halves_for_threads, threads_for_halves


def _mesa_table() -> tuple[tuple[int, int], ...]:
    from fuzz.mesa.build import default_mesa_src

    source = (default_mesa_src() / "src/asahi/compiler/agx_performance.c").read_text()
    body = re.search(r"occupancies\[\]\s*=\s*\{(.*?)\};", source, re.S)
    assert body is not None, "agx_performance.c has no occupancies[] table"
    return tuple((int(a), int(b)) for a, b in re.findall(r"\{\s*(\d+)\s*,\s*(\d+)\s*\}",
                                                         body.group(1)))


def test_the_model_table_is_mesas_entry_for_entry():
    assert OCCUPANCY == _mesa_table()


def test_the_lookups_agree_with_the_table_at_every_bound():
    for (bound, threads), previous in zip(OCCUPANCY, ((0, 0), *OCCUPANCY)):
        assert threads_for_halves(bound) == threads
        assert threads_for_halves(previous[0] + 1) == threads
        assert max_halves_for_threads(threads) == bound
    assert threads_for_halves(OCCUPANCY[-1][0] + 1) == 0
