"""Oracles for the machine level: the wave interpreter (`run_wave`), and the checkers that
judge register allocation and parallel-copy lowering without running anything."""

from oracles.machine.wave import CompiledWave, run_wave

__all__ = ["CompiledWave", "run_wave"]
