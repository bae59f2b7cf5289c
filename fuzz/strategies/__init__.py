"""Public Hypothesis strategies for CFGs, programs and inputs of the AGX-model IR.

Usable from any test suite::

    from hypothesis import given
    from fuzz.strategies import programs, inputs

    @given(programs(), st.data())
    def test_my_pass(fn, data):
        input_set = data.draw(inputs(fn))
        ...

The strategies are thin: each draws a byte string (plus the swarm `Features`) and hands it
to a fast builder in `fuzz.generate` through `ChoiceSource.from_bytes`. Running out of
bytes means "choose 0", and 0 always means the simplest option, so Hypothesis shrinking the
bytes shrinks the program: fewer blocks and instructions, smaller constants, simpler opcodes.
`features()` shrinks towards `Features.all_on()`, so a minimal failing example names only
the feature groups that must be off for the failure.

* `cfgs()`: body-less functions (terminators only) over structured, loop, unstructured and,
  with `irreducible=True`, irreducible shapes, for testing analyses.
* `programs()`: verified, terminating programs of about `size` instructions; with
  `address_heavy=True` most memory accesses are array / array-of-struct accesses through the
  computed-address shapes Mesa's AGX address lowering matches (see `fuzz.generate.addresses`).
* `inputs(fn)`: one `InputSet` for `fn` (thread count, uniform values, buffer contents).
"""

from __future__ import annotations

from hypothesis import strategies as st

from agxir.ir import Function
from agxir.text import print_function
from fuzz.generate import (
    GENERATOR_VERSION,
    MAX_THREADS,
    ChoiceSource,
    Features,
    generate_cfg,
    generate_inputs,
    generate_program,
    shape_function,
)
from oracles.inputs import InputSet

__all__ = ["Features", "GENERATOR_VERSION", "cfgs", "features", "inputs", "programs"]


def _pretty_function(fn: Function, printer, cycle: bool) -> None:
    """Falsifying examples print as IR text (a dataclass repr of a program is ~60 kB)."""
    try:
        text = print_function(fn)
    except Exception:  # a test may have broken the function; fall back to the plain repr
        printer.text(repr(fn))
        return
    printer.text(f'parse_function("""\n{text}""")')


try:  # Hypothesis' vendored IPython pretty printer: optional, printing only
    from hypothesis.vendor.pretty import for_type_by_name

    for_type_by_name("agxir.ir", "Function", _pretty_function)
except ImportError:  # pragma: no cover
    pass

_DISABLED_FROM = 192  # a group's byte at or above this disables it: one time in four


def features(
    *, irreducible: bool = False, address_heavy: bool = False
) -> st.SearchStrategy[Features]:
    """Swarm feature flags. Each group is a "disabled" flag (set about one time in four)
    that shrinks to unset, so examples shrink towards every group on and a minimal failing
    example disables only the groups the failure needs off. The flags are one byte each of
    one binary draw (a draw per flag costs more than generating the program). `irreducible`
    and `address_heavy` are not drawn: each is on exactly when requested (`address_heavy`
    also keeps the groups it needs on, see `Features.with_address_heavy`)."""
    groups = Features.groups()

    def build(flags: bytes) -> Features:
        on = {name: byte < _DISABLED_FROM for name, byte in zip(groups, flags, strict=True)}
        made = Features(**on, irreducible=irreducible)
        return made.with_address_heavy() if address_heavy else made

    return st.binary(min_size=len(groups), max_size=len(groups)).map(build)


def _features_or(
    given: Features | st.SearchStrategy[Features] | None,
    irreducible: bool,
    address_heavy: bool = False,
) -> st.SearchStrategy[Features]:
    if given is None:
        return features(irreducible=irreducible, address_heavy=address_heavy)
    if isinstance(given, Features):
        return st.just(given.with_address_heavy() if address_heavy else given)
    if address_heavy:
        return given.map(Features.with_address_heavy)
    return given


def cfgs(
    *,
    max_blocks: int = 12,
    features: Features | st.SearchStrategy[Features] | None = None,
    irreducible: bool = False,
) -> st.SearchStrategy[Function]:
    """Functions whose blocks hold only terminators (`if_icmp u0, #k`, `jump`, `stop`):
    every block reachable, the entry without predecessors, at most `max_blocks` blocks.
    Irreducible shapes only when `irreducible` (or the given features say so)."""
    flags = _features_or(features, irreducible)

    @st.composite
    def build(draw) -> Function:
        # The bytes come first: drawn after other choices, Hypothesis often tries the
        # all-zero string (the trivial program) for each variation of those choices.
        data = draw(st.binary(min_size=4 * max_blocks, max_size=24 * max_blocks))
        feature_set = draw(flags)
        shape = generate_cfg(ChoiceSource.from_bytes(data), feature_set, max_blocks=max_blocks)
        return shape_function(shape)

    return build()


def programs(
    *,
    size: int = 50,
    features: Features | st.SearchStrategy[Features] | None = None,
    irreducible: bool = False,
    address_heavy: bool = False,
) -> st.SearchStrategy[Function]:
    """Programs of about `size` instructions that verify, terminate, stay in bounds and are
    race free for up to 64 threads (see `fuzz.generate.program`). `address_heavy=True`
    (or given features with it set) makes most memory accesses go through computed
    addresses: arrays and arrays of structs indexed by thread id, loop counters and
    bounded values, in the relaxed amul/aadd forms, plain iadd/imul forms (some of which
    wrap), 64-bit and lea forms (see `fuzz.generate.addresses`)."""
    flags = _features_or(features, irreducible, address_heavy)
    # About 25 bytes per instruction (a frame per random pick, see ChoiceSource.frame; 41
    # when address-heavy) plus the shape; Hypothesis caps a test case at 8 kB.
    per = 40 if address_heavy else 30
    low = min(12 * size, 3000)
    high = min(max(per * size, 64), 6000)

    @st.composite
    def build(draw) -> Function:
        data = draw(st.binary(min_size=low, max_size=high))  # first: see cfgs()
        feature_set = draw(flags)
        return generate_program(ChoiceSource.from_bytes(data), feature_set, size=size)

    return build()


def inputs(fn: Function, *, threads: int | None = None) -> st.SearchStrategy[InputSet]:
    """One input set for `fn`: a thread count (1..64 unless given; shrinks to 1), uniform
    values leaning on edge cases (shrink to 0) and buffer contents (shrink to zeros)."""
    thread_counts = st.just(threads) if threads is not None else st.integers(1, MAX_THREADS)

    @st.composite
    def build(draw) -> InputSet:
        count = draw(thread_counts)
        size = len(fn.uniforms)
        data = draw(st.binary(min_size=6 * size, max_size=16 * size))
        return generate_inputs(fn, ChoiceSource.from_bytes(data), threads=count, sets=1)[0]

    return build()
