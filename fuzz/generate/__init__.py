"""Fast, deterministic builders of random CFGs, programs and inputs.

Every builder reads its decisions from a `ChoiceSource` (a seeded RNG for campaigns, a byte
string for Hypothesis, where 0 means "simplest"), and never builds text. The Hypothesis
strategies in `fuzz.strategies` are thin wrappers around these.

Modules: `choices` (ChoiceSource, Weighted), `features` (swarm flags), `cfg_shapes` (CFG
shapes, dominators on integer graphs), `operations` (operands and per-opcode emitters),
`copy_shapes` (what cmpsel fusion and copy propagation rewrite), `families` (the weighted
opcode families), `addresses` (arrays, arrays of structs and the NIR-style address shapes;
`address_heavy`),
`address_shapes` (finding those shapes in a function), `optimizer_shapes` (what Mesa's
optimizer rewrites), `exec_cmp_shapes`, `conversion_shapes` and `schedule_shapes` (what
fuse-exec-cmp, reuse-conversion and pressure-schedule act on), `pressure_shapes` (what puts
the register allocator and copy lowering under pressure), `observe` (keeping the value a
wrong rewrite would change observable), `program` (generate_program),
`inputs` (generate_inputs), `cases` (program_seed, build_case: a campaign's
program i of seed S; not re-exported here, since it builds `run --mesa` programs through
fuzz.mesa.translatable, which draws from this package).

`GENERATOR_VERSION` names the meaning of a choice stream: bump it whenever a builder
consumes choices differently, so a stored corpus of byte strings or seeds is re-keyed
rather than silently replayed as different programs.
"""

from fuzz.generate.address_shapes import ADDRESS_SHAPES, address_shapes
from fuzz.generate.cfg_shapes import CFGShape, Loop, Region, generate_cfg, shape_function
from fuzz.generate.choices import ChoiceSource, Weighted
from fuzz.generate.features import Features
from fuzz.generate.inputs import generate_inputs
from fuzz.generate.operations import MAX_THREADS, OUTPUT_BYTES, SITES
from fuzz.generate.program import generate_program

# 2: the `address` group, address-heavy generation; 3: cmpsel near misses; 4: the optimizer
# shapes (fuzz.generate.optimizer_shapes); 5: movs of immediates read through .neg, the
# shapes of the register-level passes (exec_cmp_shapes, conversion_shapes, schedule_shapes);
# 6: ballots and uadd_sat (optimizer_shapes.e_ballot, e_uadd_sat); 7: the `pressure` group
# (pressure_shapes: rotating loop phis, join phis of immediates, values held across loops,
# fragmented narrow values, CFGs of loops and ifs without an else); 8: the pressure group
# reaches entry fix-ups and cycle breaks more often (groups of wide join phis, more held
# narrow values, rotations of 3-4 phis at most loop headers, more loops in its CFGs); 9:
# the shapes a wrong rewrite changes one value of keep it observable (observe.keep), on
# ordinary floats where they are float shapes; float moves weigh 5 (were 3, the plain fadd
# and fmul rows gave up 1 each); half the carried loop values are float accumulators;
# sign-extending movs read by an add, ballots of constants numbered like a compare 3 in 4,
# converted values whose last read is a phi's (Emitter.phi_offer); 10: near misses of
# cmpsel fusion that a wrong fusion changes (copy_shapes.e_cmpsel_fusion: 4 in 14, with two
# payloads, kept); mov chains of 1-2 movs, 3 in 7 of a narrower value (zero-extended,
# mostly an ordinary f16 read by a kept 32-bit float op, or sign-extended, read by a kept
# add) and 2 in 7 of an immediate (7 in 8 of them read through .neg by a kept add); fmovs
# into kept fcmpsel payloads (2 in 10 of the float moves); shifts of 4 (half of them)
# fused into a kept add;
# a wide 64-bit constant offered to a phi once a program, the phi kept
# (optimizer_shapes.offer_wide_phi_source); reloads start a scheduling region (an export
# above) and store a sum of two values, kept without the extra exports below; fused
# ballots 2 in 9 of the ballots (were 1 in 8)
GENERATOR_VERSION = 10

__all__ = [
    "ADDRESS_SHAPES",
    "GENERATOR_VERSION",
    "CFGShape",
    "ChoiceSource",
    "Features",
    "Loop",
    "MAX_THREADS",
    "OUTPUT_BYTES",
    "Region",
    "SITES",
    "Weighted",
    "address_shapes",
    "generate_cfg",
    "generate_inputs",
    "generate_program",
    "shape_function",
]
