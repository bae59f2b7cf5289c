"""The interpreter oracle: runs a function for N threads over many input sets at once (its
blocks executed by the lane VM, oracles/interp/vm.py, where that is built, else by numpy)."""

from oracles.interp.runner import DEFAULT_FUEL, CompiledFunction, run

__all__ = ["CompiledFunction", "DEFAULT_FUEL", "run"]
