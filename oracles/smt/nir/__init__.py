"""z3 proofs of nir_algebraic rule instances (`prove_rule`, `prove_instance`), Alive-style.

`prover` owns the refinement query and the verdicts; `integers` is the integer-arithmetic
encoding of `BitVectors` tried when the bit-vector query times out.
"""

from oracles.smt.nir.prover import (
    VERDICTS,
    Counterexample,
    InstanceResult,
    prove_instance,
    prove_rule,
    replay,
    treatments,
)

__all__ = ["VERDICTS", "Counterexample", "InstanceResult", "prove_instance", "prove_rule",
           "replay", "treatments"]
