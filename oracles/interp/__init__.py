"""The interpreter oracle: runs a function for N threads over many input sets at once."""

from oracles.interp.runner import DEFAULT_FUEL, CompiledFunction, run

__all__ = ["CompiledFunction", "DEFAULT_FUEL", "run"]
