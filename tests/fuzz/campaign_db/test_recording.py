"""A recording source's bytes replay through `ChoiceSource.from_bytes` into the same
choices: the same program and input sets for seeded programs, and the same values for any
script of choices, frames cut short included."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agxir.text import print_function
from fuzz.generate import ChoiceSource, Features, generate_inputs, generate_program


def built(source, *, address_heavy: bool, size: int):
    flags = Features.from_source(source, address_heavy=address_heavy)
    fn = generate_program(source, flags, size=size)
    inputs = generate_inputs(fn, source, threads=8, sets=3)
    return print_function(fn), [input_set.to_json() for input_set in inputs]


def test_a_seeded_program_and_its_inputs_replay_from_the_recorded_bytes():
    for seed in range(60):
        heavy = seed % 3 == 0
        recorder = ChoiceSource.recording(seed)
        program, inputs = built(recorder, address_heavy=heavy, size=30 + seed % 40)
        replayed = built(ChoiceSource.from_bytes(recorder.recorded()), address_heavy=heavy,
                         size=30 + seed % 40)
        assert replayed == (program, inputs), f"seed {seed}"


def test_the_recording_is_a_seeded_stream_of_its_own():
    """Different seeds give different programs; one seed gives one program."""
    texts = {built(ChoiceSource.recording(seed), address_heavy=False, size=40)[0]
             for seed in range(8)}
    assert len(texts) == 8
    again = built(ChoiceSource.recording(3), address_heavy=False, size=40)
    assert again == built(ChoiceSource.recording(3), address_heavy=False, size=40)


# A script is a list of steps; a frame step holds a script of its own.
steps = st.recursive(
    st.one_of(
        st.tuples(st.just("below"), st.integers(0, 70000)),
        st.tuples(st.just("boolean"), st.sampled_from([0.0, 0.001, 0.01, 0.3, 0.5, 0.99, 1.0])),
        st.tuples(st.just("bits"), st.integers(0, 70)),
        st.tuples(st.just("bytes"), st.integers(0, 6)),
        st.tuples(st.just("blob"), st.integers(0, 9)),
        st.tuples(st.just("pick"), st.lists(st.integers(0, 5), min_size=1, max_size=5)),
    ),
    lambda inner: st.tuples(st.just("frame"), st.integers(0, 12), st.lists(inner, max_size=6)),
    max_leaves=25,
)


def run(script, source, out: list) -> None:
    from fuzz.generate import Weighted

    for step in script:
        kind = step[0]
        if kind == "frame":
            run(step[2], source.frame(step[1]), out)
        elif kind == "pick":
            weights = step[1]
            if sum(weights):
                out.append(source.pick(Weighted(list(enumerate(weights)))))
        else:
            out.append(getattr(source, kind)(step[1]))


@settings(max_examples=150, deadline=None)
@given(st.lists(steps, max_size=12), st.integers(0, 2**32))
def test_any_script_of_choices_replays(script, seed):
    recorder = ChoiceSource.recording(seed)
    recorded: list = []
    run(script, recorder, recorded)
    replayed: list = []
    run(script, ChoiceSource.from_bytes(recorder.recorded()), replayed)
    assert replayed == recorded


def test_a_frame_cut_short_reads_zeros_in_both():
    """A choice that does not fit what is left of its frame is 0 when recorded, as the byte
    source reads it, and so is every later choice of that frame."""
    recorder = ChoiceSource.recording(7)
    frame = recorder.frame(2)
    first = frame.below(200)  # one byte
    cut = frame.below(1000)  # needs two bytes, one is left: cut off
    later = frame.below(10)
    after = recorder.below(256)
    assert (cut, later) == (0, 0)
    data = recorder.recorded()
    assert len(data) == 3
    replay = ChoiceSource.from_bytes(data)
    frame = replay.frame(2)
    assert (frame.below(200), frame.below(1000), frame.below(10), replay.below(256)) == (
        first, 0, 0, after)


def test_frames_of_a_byte_source_are_written_down_where_they_start():
    frames: list = []
    source = ChoiceSource.from_bytes(bytes(range(40)), frames)
    source.below(10)
    inner = source.frame(8)
    inner.below(3)
    inner.frame(3)
    source.frame(4)
    assert frames == [(1, 8), (2, 3), (9, 4)]
