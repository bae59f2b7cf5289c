"""oracles: what judges a pass.

The interpreter (`oracles.interp`), run outcomes (`oracles.outcomes`), inputs
(`oracles.inputs`), the shared memory model, the liveness reference and, in `oracles.smt`
(the only place z3 is imported), the z3 encoding. It imports only `agxir`.
"""

from oracles.inputs import InputSet, random_input_sets
from oracles.interp import CompiledFunction, run
from oracles.outcomes import Outcome, OutOfFuel, Returned, Undefined

__all__ = [
    "CompiledFunction", "InputSet", "OutOfFuel", "Outcome", "Returned", "Undefined",
    "random_input_sets", "run",
]  # fmt: skip
