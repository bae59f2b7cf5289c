"""Reading what a user hands a command: a text file (bounded, UTF-8), a function that
parses and verifies, and input sets (a JSON file, random ones from a seed, or written inline
as `interp --input` and the golden files take them), each failure a one-line error with its
file:line:col where there is one."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from agxir.text import ParseError, parse_function
from agxir.verifier import verify
from fuzz.commands import limits
from fuzz.commands.errors import InvalidProgram, UsageError
from fuzz.commands.limits import check_input_size
from oracles.inputs import InputError, InputSet, check_inputs, random_input_sets


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
    try:
        fn = parse_function(read_text(path), filename=path)
    except ParseError as error:
        raise InvalidProgram(str(error)) from None
    if verified:
        errors = verify(fn)
        if errors:
            raise InvalidProgram("\n".join(f"{path}: {error}" for error in errors))
    for uniform in fn.uniforms:
        if interpreted and uniform.is_buffer and uniform.buffer_bytes > limits.MAX_INTERPRETED_BUFFER:
            raise UsageError(
                f"{path}: buffer {uniform.name} of {uniform.buffer_bytes} bytes is over the "
                f"interpreter's limit of {limits.MAX_INTERPRETED_BUFFER >> 20} MB per buffer "
                "(agxfuzz --max-buffer MB raises it)"
            )
    return fn


def input_sets_for(fn, args):
    if args.inputs:
        text = read_text(args.inputs)
        try:
            sets = [InputSet.from_json(item) for item in json.loads(text)]
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise UsageError(f"{args.inputs}: not a list of input sets: {error}") from None
        if not sets:
            raise UsageError(f"{args.inputs}: not a list of input sets: it is empty")
        check_input_size(max(s.threads for s in sets), len(sets), args.inputs)
        for input_set in sets:
            try:
                check_inputs(fn, input_set)
            except InputError as error:
                raise UsageError(f"{args.inputs}: {error}") from None
        return sets
    check_input_size(args.threads, 1, "--threads")
    check_input_size(1, args.sets, "--sets")
    check_input_size(args.threads, args.sets, "--threads and --sets")
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


def parse_input_spec(fn, spec: str):
    """One input set written inline, as `interp --input` and the golden files take it:
    `threads=N name=value ...`, a scalar uniform's value an integer (0x... allowed), a
    buffer's `zero`, `iota8`/`iota16`/`iota32` (0, 1, 2, ... in elements of that many bits)
    or `hex:BYTES` (zero-padded to the buffer's size). Unnamed uniforms are 0 and unnamed
    buffers hold zeros. A bad spec is a UsageError naming it."""
    def bad(why: str) -> UsageError:
        return UsageError(f"--input {spec!r}: {why}")

    uniforms = {uniform.name: uniform for uniform in fn.uniforms}
    fields: dict[str, str] = {}
    for item in spec.split():
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise bad(f"expected name=value, found {item!r}")
        if name in fields:
            raise bad(f"{name} given twice")
        fields[name] = value
    if "threads" not in fields:
        raise bad("threads=N is missing")
    threads = _spec_int(fields.pop("threads"), bad)
    check_input_size(threads, 1, f"--input {spec!r}")
    scalars: dict[str, int] = {}
    buffers: dict[str, bytes] = {}
    for name, value in fields.items():
        uniform = uniforms.get(name)
        if uniform is None:
            known = ", ".join(uniforms) or "none"
            raise bad(f"{fn.name} has no uniform {name} (its uniforms: {known})")
        if uniform.is_buffer:
            try:
                buffers[name] = buffer_contents(value, uniform.buffer_bytes)
            except ValueError as error:
                raise bad(f"{name}: {error}") from None
        else:
            scalars[name] = _spec_int(value, bad)
    input_set = InputSet(threads, scalars, buffers)
    try:
        check_inputs(fn, input_set)
    except InputError as error:
        raise bad(str(error)) from None
    return input_set


def _spec_int(text: str, bad) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise bad(f"not an integer: {text!r}") from None


def buffer_contents(spec: str, size: int) -> bytes:
    """The `size` bytes a buffer spec (zero, iota8/16/32, hex:BYTES) stands for."""
    if spec == "zero":
        return bytes(size)
    if spec in ("iota8", "iota16", "iota32"):
        width = int(spec[4:]) // 8
        mask = (1 << (8 * width)) - 1
        data = b"".join((i & mask).to_bytes(width, "little") for i in range(size // width))
        return data.ljust(size, b"\0")
    if spec.startswith("hex:"):
        try:
            data = bytes.fromhex(spec[4:])
        except ValueError:
            raise ValueError(f"not hex bytes: {spec[4:]!r}") from None
        if len(data) > size:
            raise ValueError(f"{len(data)} bytes given, the buffer holds {size}")
        return data.ljust(size, b"\0")
    raise ValueError(f"expected zero, iota8, iota16, iota32 or hex:BYTES, found {spec!r}")


def writable_output(path: str | None, flag: str) -> None:
    """Refuse (exit 2) an output file whose directory cannot be made or written, before a
    command spends its time; None (not asked for) passes."""
    if not path:
        return
    parent = Path(path).parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise UsageError(f"agxfuzz: {flag} {path}: cannot write: {parent} is not a "
                         "directory") from None
    except OSError as error:
        raise UsageError(f"agxfuzz: {flag} {path}: cannot write: "
                         f"{error.strerror or error}") from None
    if Path(path).is_dir() or not os.access(parent, os.W_OK):
        why = "a directory" if Path(path).is_dir() else f"{parent} is not writable"
        raise UsageError(f"agxfuzz: {flag} {path}: cannot write: {why}")


def writable_directory(path: str | None, flag: str) -> None:
    """Refuse (exit 2) an output directory that cannot be made or written, up front."""
    if not path:
        return
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise UsageError(f"agxfuzz: {flag} {path}: not a directory") from None
    except OSError as error:
        raise UsageError(f"agxfuzz: {flag} {path}: {error.strerror or error}") from None
    if not os.access(path, os.W_OK):
        raise UsageError(f"agxfuzz: {flag} {path}: not writable")
