"""The `agxfuzz` command line: argument parsing and dispatch only.

Each command imports what it needs when it runs, so `agxfuzz --help` stays fast. Errors a
user can cause (a bad file, a bad flag) print one line and exit non-zero; usage errors
exit 2 as argparse does.
"""

from __future__ import annotations

import argparse
import os
import sys

VERSION = "0.1.0"


class UserError(Exception):
    """A problem with what the user gave us: reported in one line, exit status 1."""

    exit_status = 1


class UsageError(UserError):
    """A bad flag value argparse cannot see (an unknown pass, say): exit status 2."""

    exit_status = 2


class InternalError(UserError):
    """A harness bug, not a verdict on the passes: exit status 3."""

    exit_status = 3


class InvalidProgram(UsageError):
    """A file that does not parse or verify: bad input (exit 2) for the commands that judge
    passes or run the program, where 1 means "fails"; `verify` and `fmt` exit 1, their
    verdict."""


def _read(path: str) -> str:
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
        fn = parse_function(_read(path), filename=path)
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


# Every input set holds each buffer for every thread's view of memory: larger ones cost
# seconds and gigabytes per run, so they are refused up front with a clear message.
MAX_INTERPRETED_BUFFER = 64 << 20


def cmd_fmt(args) -> int:
    from agxir.text import print_function

    try:
        fn = load_function(args.file, verified=False, interpreted=False)
    except InvalidProgram as error:
        print(error, file=sys.stderr)
        return 1
    sys.stdout.write(print_function(fn))
    return 0


def cmd_verify(args) -> int:
    try:
        load_function(args.file, interpreted=False)
    except InvalidProgram as error:  # the verdict, not bad usage
        print(error, file=sys.stderr)
        return 1
    print(f"{args.file}: ok")
    return 0


def cmd_interp(args) -> int:
    from fuzz.interp_command import run_interp

    fn = load_function(args.file)
    return run_interp(fn, args)


def cmd_run(args) -> int:
    from fuzz.run_command import run_campaign_command

    return run_campaign_command(args)


def cmd_check(args) -> int:
    from fuzz.run_command import check_command

    return check_command(args)


def cmd_opt(args) -> int:
    from fuzz.run_command import opt_command

    return opt_command(args)


def cmd_reduce(args) -> int:
    from fuzz.reduce_command import run_reduce

    return run_reduce(args)


def cmd_repro(args) -> int:
    from fuzz.run_command import repro_command

    return repro_command(args)


def cmd_audit(args) -> int:
    from fuzz.audit_command import run_audit

    return run_audit(args)


def cmd_zoo(args) -> int:
    from fuzz.zoo_command import run_zoo

    return run_zoo(args)


def cmd_tv(args) -> int:
    from fuzz.tv_command import run_tv

    return run_tv(args)


def cmd_stats(args) -> int:
    from fuzz.stats_command import run_stats

    return run_stats(args)


def _add_pass_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--passes", metavar="LIST", help="registered passes, comma-separated (default: all)"
    )
    parser.add_argument(
        "--pass", dest="python_passes", action="append", metavar="MODULE:CALLABLE",
        help="a Python pass under test: fn(function) mutates it, returns True if changed",
    )
    parser.add_argument(
        "--pass-cmd", dest="pass_commands", action="append", metavar="CMD",
        help="an external pass under test: reads IR text on stdin, writes IR on stdout",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agxfuzz",
        description="Fuzz and verify AGX shader-compiler passes: generate SSA programs, "
        "run them through passes, judge them with an interpreter, invariants and z3.",
    )
    parser.add_argument("--version", action="version", version=f"agxfuzz {VERSION}")
    parser.add_argument("--max-buffer", type=_positive, default=MAX_INTERPRETED_BUFFER >> 20,
                        metavar="MB", help="the largest buffer a file may declare and still be "
                        f"interpreted (default {MAX_INTERPRETED_BUFFER >> 20} MB)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    fmt = commands.add_parser("fmt", help="print a .agx file in canonical form")
    fmt.add_argument("file")
    fmt.set_defaults(handler=cmd_fmt)

    verify = commands.add_parser("verify", help="check a .agx file with the verifier")
    verify.add_argument("file")
    verify.set_defaults(handler=cmd_verify)

    interp = commands.add_parser("interp", help="run a .agx file in the interpreter oracle")
    interp.add_argument("file")
    interp.add_argument("--threads", type=_positive, default=32, help="threads per input set")
    interp.add_argument("--sets", type=_positive, default=1, help="random input sets to run")
    interp.add_argument("--seed", type=_seed, default=None, help="seed for random inputs")
    interp.add_argument("--inputs", metavar="JSON", help="input sets from a JSON file")
    interp.add_argument("--fuel", type=_positive, default=None, help="instructions per thread")
    interp.add_argument("--json", action="store_true", help="print the outcome as JSON")
    interp.set_defaults(handler=cmd_interp)

    run = commands.add_parser(
        "run", help="the fuzz campaign: random programs through every pass under every oracle"
    )
    budget = run.add_mutually_exclusive_group()
    budget.add_argument("--time", type=_positive_float, metavar="SECONDS",
                        help="stop after this long (default 60 s)")
    budget.add_argument("--examples", type=_positive, metavar="N", help="check N programs")
    run.add_argument("--seed", type=_seed, help="seed of the run; the same seed replays it")
    run.add_argument("--jobs", type=_positive, help="worker processes (default: all cores)")
    _add_pass_flags(run)
    run.add_argument("--pass-memory", type=_positive, default=4096, metavar="MB",
                     help="address space per worker process (default 4096 MB): a pass that "
                     "exceeds it fails with MemoryError, a crash finding")
    run.add_argument("--out", default="findings", metavar="DIR",
                     help="where findings are written (default: ./findings)")
    run.add_argument("--fail-fast", action="store_true", help="stop at the first finding")
    run.add_argument("--no-reduce", action="store_true",
                     help="write findings as found, without reducing them first")
    run.add_argument("--tv", action="store_true",
                     help="also prove each change of a loop-free program with z3 (slower)")
    run.add_argument("--json-report", metavar="FILE", help="write a JSON summary")
    run.add_argument("--junit", metavar="FILE", help="write JUnit XML")
    run.add_argument("--sarif", metavar="FILE", help="write SARIF 2.1.0 (one result per finding)")
    run.set_defaults(handler=cmd_run)

    check = commands.add_parser(
        "check", help="run one .agx file through passes under every oracle"
    )
    check.add_argument("file")
    _add_pass_flags(check)
    check.add_argument("--threads", type=_positive, default=32, help="threads per input set")
    check.add_argument("--sets", type=_positive, default=8, help="random input sets")
    check.add_argument("--seed", type=_seed, help="seed for random inputs")
    check.add_argument("--inputs", metavar="JSON", help="input sets from a JSON file")
    check.add_argument("--out", metavar="DIR", help="write what fails as findings here")
    check.add_argument("--tv", action="store_true",
                       help="also prove each change with z3 when the function is loop-free")
    check.set_defaults(handler=cmd_check)

    opt = commands.add_parser("opt", help="run passes on a .agx file and print the result")
    opt.add_argument("file")
    opt.add_argument("-p", "--passes", required=True, metavar="LIST",
                     help="passes to run in order, comma-separated")
    opt.add_argument("--stats", action="store_true",
                     help="print Mesa's stats line for the result (instrs, halfregs, threads, "
                     "copies) as a comment")
    opt.set_defaults(handler=cmd_opt)

    reduce_cmd = commands.add_parser(
        "reduce", help="shrink a failing .agx file to a small program that fails the same way"
    )
    reduce_cmd.add_argument("file")
    reduce_cmd.add_argument("-o", "--out", metavar="OUT",
                            help="the reduced program (default: FILE with .reduced.agx; "
                            "never FILE itself)")
    _add_pass_flags(reduce_cmd)
    reduce_cmd.add_argument("--oracle", metavar="NAME",
                            help="only a failure of this oracle counts (default: the original's)")
    reduce_cmd.add_argument("--threads", type=_positive, default=32, help="threads per input set")
    reduce_cmd.add_argument("--sets", type=_positive, default=8, help="random input sets")
    reduce_cmd.add_argument("--seed", type=_seed, help="seed for random inputs")
    reduce_cmd.add_argument("--inputs", metavar="JSON", help="input sets from a JSON file")
    reduce_cmd.add_argument("--timeout", type=_positive_float, metavar="SECONDS",
                            help="overall time budget; the smallest reproducer so far is kept")
    reduce_cmd.set_defaults(handler=cmd_reduce)

    repro = commands.add_parser(
        "repro", help="replay a finding's JSON record and say whether it still fails"
    )
    repro.add_argument("finding", metavar="FINDING.json")
    repro.set_defaults(handler=cmd_repro)

    audit = commands.add_parser("audit", help="prove every rewrite rule of every pass with z3")
    audit.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    audit.add_argument("--junit", metavar="FILE", help="write JUnit XML (a case per rule)")
    audit.add_argument("--sarif", metavar="FILE", help="write SARIF 2.1.0 (a result per unproved rule)")
    audit.add_argument("--timeout", type=_positive, default=2000, metavar="MS",
                       help="z3 timeout per query, in milliseconds (default 2000)")
    audit.add_argument("--pass", dest="audit_passes", action="append", metavar="NAME",
                       help="audit only this pass (repeatable; default: every pass with rules)")
    audit.add_argument("--jobs", type=_positive, metavar="N",
                       help="prove on N processes (default: every core)")
    audit.add_argument("--no-cache", action="store_true",
                       help="prove every rule, ignoring and not filling the proof cache")
    audit.add_argument("--cache-dir", metavar="DIR",
                       help="the proof cache (default: $XDG_CACHE_HOME/agxfuzz/proofs)")
    audit.add_argument("--nir", metavar="FILE", help="prove the rules of a Mesa nir_algebraic "
                       "rule file instead (Python: it is executed; see docs/nir-audit.md)")
    audit.add_argument("--lists", metavar="NAME,...", help="with --nir: only these rule lists")
    audit.add_argument("--sizes", metavar="8,16,32,64",
                       help="with --nir: bit sizes for sizes the rules leave free")
    audit.set_defaults(handler=cmd_audit)

    zoo = commands.add_parser(
        "zoo", help="run a campaign against each wrong variant and show what caught it"
    )
    zoo.add_argument("--time-per-bug", type=_positive_float, default=60.0, metavar="S",
                     help="campaign time budget per variant (default 60)")
    zoo.add_argument("--only", metavar="NAMES", help="only these variants, comma-separated")
    zoo.add_argument("--seed", type=_seed, help="seed for every variant's campaign")
    zoo.add_argument("--jobs", type=_positive, help="worker processes (default: all cores)")
    zoo.add_argument("--out", default="zoo-findings", metavar="DIR",
                     help="where the reduced reproducers go (default: ./zoo-findings)")
    zoo.add_argument("--json", metavar="FILE", help="write the table as JSON")
    zoo.add_argument("--default-cost", action="store_true",
                     help="run the default campaign's pipelines beside each variant's, so a "
                     "program costs what it does in `agxfuzz run` (detection at default settings)")
    zoo.add_argument("--junit", metavar="FILE", help="write JUnit XML (a case per variant)")
    zoo.add_argument("--sarif", metavar="FILE", help="write SARIF 2.1.0 (a result per catch)")
    zoo.set_defaults(handler=cmd_zoo)

    tv = commands.add_parser(
        "tv", help="translation validation: prove AFTER refines BEFORE (loop-free functions)"
    )
    tv.add_argument("before", metavar="BEFORE", help="the function before the pass")
    tv.add_argument("after", metavar="AFTER", help="the function after the pass")
    tv.add_argument("--threads", type=_positive, default=32, help="thread ids 0..N-1 (default 32)")
    tv.add_argument("--timeout", type=_positive, default=10000, metavar="MS",
                    help="z3 time limit in milliseconds (default 10000)")
    tv.add_argument("--json", action="store_true", help="print the result as JSON")
    tv.set_defaults(handler=cmd_tv)

    stats = commands.add_parser(
        "stats", help="shader-db style report of pipelines that differ in one pass, through RA"
    )
    corpus = stats.add_mutually_exclusive_group()
    corpus.add_argument("--programs", type=_positive, metavar="N",
                        help="generated programs in the corpus (default 2000)")
    corpus.add_argument("--dir", metavar="DIR", help="the corpus is every .agx file in DIR")
    stats.add_argument("--seed", type=_seed, help="seed of the corpus; the same seed replays it")
    stats.add_argument("--compare", metavar="NAME,...",
                       help="only these comparisons (default: every one)")
    stats.add_argument("--out", default="agxfuzz-stats", metavar="OUTDIR",
                       help="report, JSON, CSV, PNG and programs/ (default: ./agxfuzz-stats)")
    stats.add_argument("--jobs", type=_positive, help="worker processes (default: all cores)")
    stats.set_defaults(handler=cmd_stats)
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer seed: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"seeds are non-negative: {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    global MAX_INTERPRETED_BUFFER
    MAX_INTERPRETED_BUFFER = args.max_buffer << 20
    try:
        return args.handler(args)
    except UserError as error:
        print(error, file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print("agxfuzz: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (`| head`) went away: stop quietly, as other Unix tools do.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces the closed stream
        return 141


if __name__ == "__main__":
    sys.exit(main())
