"""Reading what a user hands a command: a text file (bounded, UTF-8) and a function that
parses and verifies, each failure a one-line error with its file:line:col."""

from __future__ import annotations

import json
import random

from fuzz.commands.errors import InvalidProgram, UsageError


def read_text(path: str) -> str:
    """The text of `path` (a UTF-8 byte-order mark is accepted). A file that cannot be read
    is bad usage (exit 2), never a result: for `check` and `repro` exit 1 means "fails"."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read(MAX_TEXT + 1)  # /dev/zero must not eat the machine
    except OSError as error:
        raise UsageError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a UTF-8 text file") from None
    if len(text) > MAX_TEXT:
        raise UsageError(f"{path}: larger than {MAX_TEXT >> 20} MB: not a program or record")
    return text


MAX_TEXT = 64 << 20  # characters: far more than any program or finding record


def load_function(path: str, *, verified: bool = True, interpreted: bool = True):
    """Parse (and by default verify) the function in `path`, as a UserError on failure;
    refuse (exit 2) buffers over --max-buffer when the command will interpret it."""
    from agxir.text import ParseError, parse_function
    from agxir.verifier import verify

    try:
        fn = parse_function(read_text(path), filename=path)
    except ParseError as error:
        raise InvalidProgram(str(error)) from None
    if verified:
        errors = verify(fn)
        if errors:
            raise InvalidProgram("\n".join(f"{path}: {error}" for error in errors))
    for uniform in fn.uniforms:
        if interpreted and uniform.is_buffer and uniform.buffer_bytes > MAX_INTERPRETED_BUFFER:
            raise UsageError(
                f"{path}: buffer {uniform.name} of {uniform.buffer_bytes} bytes is over the "
                f"interpreter's limit of {MAX_INTERPRETED_BUFFER >> 20} MB per buffer "
                "(agxfuzz --max-buffer MB raises it)"
            )
    return fn


def set_max_interpreted_buffer(megabytes: int) -> None:
    global MAX_INTERPRETED_BUFFER
    MAX_INTERPRETED_BUFFER = megabytes << 20


# Every input set holds each buffer for every thread's view of memory: larger ones cost
# seconds and gigabytes per run, so they are refused up front with a clear message.
MAX_INTERPRETED_BUFFER = 64 << 20


def input_sets_for(fn, args):
    from oracles.inputs import InputError, InputSet, check_inputs, random_input_sets

    if args.inputs:
        try:
            with open(args.inputs, encoding="utf-8") as handle:
                data = json.load(handle)
            sets = [InputSet.from_json(item) for item in data]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise UsageError(f"{args.inputs}: not a list of input sets: {error}") from None
        for input_set in sets:
            try:
                check_inputs(fn, input_set)
            except InputError as error:
                raise UsageError(f"{args.inputs}: {error}") from None
        return sets
    return random_input_sets(fn, args.threads, args.seed, args.sets)


def seeded_input_sets(fn, args):
    """The input sets of --inputs, or random ones from --seed (drawn if not given, and
    printed so the run can be replayed)."""
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 32)
    sets = input_sets_for(fn, args)
    if not args.inputs:
        print(f"seed: {args.seed}")
    return sets
