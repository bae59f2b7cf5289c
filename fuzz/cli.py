"""The `agxfuzz` command line: argument parsing and dispatch only.

Each command imports what it needs when it runs, so `agxfuzz --help` stays fast. Errors a
user can cause (a bad file, a bad flag) print one line and exit non-zero; usage errors
exit 2 as argparse does.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import import_module

from fuzz import VERSION
from fuzz.campaign_db import DEFAULT_COVERAGE_EVERY
from fuzz.commands.errors import UserError, one_line_errors
from fuzz.commands.limits import (
    MAX_INTERPRETED_BUFFER,
    MAX_THREADS,
    set_max_interpreted_buffer,
    set_max_threads,
)
from fuzz.commands.mesa import add_agree_parser  # defines flags only; the bridge loads late


def _command(target: str):
    """The handler `module:function`, imported only when its command runs."""

    def handler(args) -> int:
        module, function = target.split(":")
        return getattr(import_module(module), function)(args)

    return handler


PASS_MEMORY_HELP = ("how much a pass may add to its process's address space (default 4096 "
                    "MB, at least 32): past it, a memory-limit finding")


class _Parser(argparse.ArgumentParser):
    """Bad usage argparse sees is one line too, prefixed like every other error."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


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
    parser = _Parser(
        prog="agxfuzz",
        description="Fuzz and verify AGX shader-compiler passes: generate SSA programs, "
        "run them through passes, judge them with an interpreter, invariants and z3.",
    )
    parser.add_argument("--version", action="version", version=f"agxfuzz {VERSION}")
    parser.add_argument("--max-buffer", type=_positive, default=MAX_INTERPRETED_BUFFER >> 20,
                        metavar="MB", help="the largest buffer a file may declare and still be "
                        f"interpreted (default {MAX_INTERPRETED_BUFFER >> 20} MB)")
    parser.add_argument("--max-threads", type=_positive, default=MAX_THREADS, metavar="N",
                        help="the most threads an input set may have, from --threads, --input "
                        f"or --inputs (default {MAX_THREADS})")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    fmt = commands.add_parser("fmt", help="print a .agx file in canonical form")
    fmt.add_argument("file")
    fmt.set_defaults(handler=_command("fuzz.commands.fmt:run_fmt"))

    verify = commands.add_parser("verify", help="check a .agx file with the verifier")
    verify.add_argument("file")
    verify.set_defaults(handler=_command("fuzz.commands.verify:run_verify"))

    interp = commands.add_parser("interp", help="run a .agx file in the interpreter oracle")
    interp.add_argument("file")
    interp.add_argument("--threads", type=_positive, default=32, help="threads per input set")
    interp.add_argument("--sets", type=_positive, default=1, help="random input sets to run")
    interp.add_argument("--seed", type=_seed, default=None, help="seed for random inputs")
    interp.add_argument("--inputs", metavar="JSON", help="input sets from a JSON file")
    interp.add_argument("--fuel", type=_positive, default=None, help="instructions per thread")
    interp.add_argument("--json", action="store_true", help="print the outcome as JSON")
    interp.add_argument("--input", action="append", metavar="SPEC",
                        help="an input set, e.g. 'threads=4 u0=3 u1=iota8' (buffers: zero, "
                        "iota8/16/32, hex:BYTES); repeatable, instead of random sets")
    interp.add_argument("--by-slot", action="store_true",
                        help="print each export slot's values across the threads, one line "
                        "per slot, instead of each thread's")
    interp.add_argument("--memory", action="append", metavar="NAME[:OFFSET[:LENGTH]]",
                        help="print these bytes of a buffer in full after each run (repeatable)")
    interp.set_defaults(handler=_command("fuzz.commands.interp:run_interp"))

    liveness = commands.add_parser(
        "liveness", help="print each block's live-in/live-out values and the maximum "
        "pressure of an SSA .agx file; exit 1 if they differ from the reference"
    )
    liveness.add_argument("file")
    liveness.set_defaults(handler=_command("fuzz.commands.liveness:run_liveness"))

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
                     help=PASS_MEMORY_HELP)
    run.add_argument("--out", default="findings", metavar="DIR",
                     help="where findings are written (default: ./findings)")
    run.add_argument("--fail-fast", action="store_true", help="stop at the first finding")
    run.add_argument("--mesa", nargs="?", const="", metavar="DIR", help="Mesa's real AGX "
                     "backend passes (mesa:*) after lower-cf, alone and in Mesa's order, on "
                     "programs Mesa can take; DIR: the Mesa tree (default $AGXFUZZ_MESA_SRC, "
                     "else ../shared/mesa-23.3.6; see docs/mesa.md)")
    run.add_argument("--with-fixes", action="store_true", help="with --mesa: build the bridge "
                     "with the fixes for the Mesa bugs already found (fuzz/mesa/fixes), so the "
                     "campaign hunts for new ones")
    run.add_argument("--no-reduce", action="store_true",
                     help="write findings as found, without reducing them first")
    run.add_argument("--tv", action="store_true",
                     help="also prove each change of a loop-free program with z3 (slower)")
    run.add_argument("--json-report", metavar="FILE", help="write a JSON summary")
    run.add_argument("--junit", metavar="FILE", help="write JUnit XML")
    run.add_argument("--sarif", metavar="FILE", help="write SARIF 2.1.0 (one result per finding)")
    run.add_argument("--save-rules", metavar="FILE", help="write the run's rule-hit rates "
                     "(per pass and rule, hits per 1,000 programs) as a JSON baseline")
    run.add_argument("--expect-rules", metavar="FILE", help="judge the run against a baseline "
                     "--save-rules wrote: a rule that fired there and never here, with at "
                     "least 5 hits expected at its rate, is a missed-rule finding (exit 1)")
    run.add_argument("--html", metavar="FILE", help="write the findings report (HTML, CFGs "
                     "drawn with graphviz) at the end; see `agxfuzz report`")
    run.add_argument("--shard", metavar="K/N", help="check only shard K of N of the seed's "
                     "programs (indices K-1, K-1+N, ...): N machines split one campaign")
    run.add_argument("--db", metavar="SPEC", help="the campaign database: a directory or "
                     "redis://HOST:PORT/N shared by every machine (default: OUT/.agxfuzz-db)")
    run.add_argument("--guidance", choices=("on", "shared", "off"), default="on",
                     help="on (default): half the programs mutate corpus entries that reached "
                     "new features, learnt in this run (the seed replays it) and stored in the "
                     "database; shared: also start from the database's corpus; off: blind "
                     "random programs (the stream the zoo times)")
    run.add_argument("--coverage-every", type=int, default=DEFAULT_COVERAGE_EVERY, metavar="K",
                     help="measure branch coverage of the passes for one program in K "
                     "(default 20; 0: never); its arcs are features, its cost is shown")
    run.set_defaults(handler=_command("fuzz.commands.run:run_campaign_command"))

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
    check.add_argument("--pass-memory", type=_positive, default=4096, metavar="MB",
                       help=PASS_MEMORY_HELP)
    check.add_argument("--tv", action="store_true",
                       help="also prove each change with z3 when the function is loop-free")
    check.set_defaults(handler=_command("fuzz.commands.check:check_command"))

    opt = commands.add_parser("opt", help="run passes on a .agx file and print the result")
    opt.add_argument("file")
    opt.add_argument("-p", "--passes", required=True, metavar="LIST",
                     help="passes to run in order, comma-separated")
    opt.add_argument("--stats", action="store_true",
                     help="print Mesa's stats line for the result (instrs, halfregs, threads, "
                     "copies) as a comment")
    opt.add_argument("--expect-unchanged", action="store_true",
                     help="exit 1 if a pass reports a change or the program prints differently")
    opt.set_defaults(handler=_command("fuzz.commands.opt:opt_command"))

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
    reduce_cmd.add_argument("--pass-memory", type=_positive, default=4096, metavar="MB",
                            help=PASS_MEMORY_HELP)
    reduce_cmd.add_argument("--timeout", type=_positive_float, metavar="SECONDS",
                            help="overall time budget; the smallest reproducer so far is kept")
    reduce_cmd.set_defaults(handler=_command("fuzz.commands.reduce:run_reduce"))

    repro = commands.add_parser(
        "repro", help="replay a finding's JSON record and say whether it still fails"
    )
    repro.add_argument("finding", metavar="FINDING.json")
    repro.set_defaults(handler=_command("fuzz.commands.repro:repro_command"))

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
    audit.set_defaults(handler=_command("fuzz.commands.audit:run_audit"))

    zoo = commands.add_parser(
        "zoo", help="run a campaign against each wrong variant and show what caught it"
    )
    per_bug = zoo.add_mutually_exclusive_group()
    per_bug.add_argument("--time-per-bug", type=_positive_float, default=60.0, metavar="S",
                         help="campaign time budget per variant (default 60)")
    per_bug.add_argument("--programs-per-bug", type=_positive, metavar="N",
                         help="a budget of N programs per variant instead: with --jobs 1, the "
                         "same table on any machine under any load")
    zoo.add_argument("--mesa", nargs="?", const="", metavar="DIR", help="the wrong variants "
                     "planted in Mesa's C (fuzz/mesa/variants), each built from the Mesa tree DIR "
                     "(default $AGXFUZZ_MESA_SRC, else ../shared/mesa-23.3.6) and hunted on the "
                     "pipelines of run --mesa (see docs/mesa.md)")
    zoo.add_argument("--only", metavar="NAMES", help="only these variants, comma-separated")
    zoo.add_argument("--seed", type=_seed, help="seed for every variant's campaign")
    zoo.add_argument("--jobs", type=_positive, help="worker processes (default: all cores)")
    zoo.add_argument("--out", default="zoo-findings", metavar="DIR",
                     help="where the reduced reproducers go (default: ./zoo-findings)")
    zoo.add_argument("--json", metavar="FILE", help="write the table as JSON")
    zoo.add_argument("--default-cost", action="store_true",
                     help="run the default campaign's pipelines beside each variant's, so a "
                     "program costs what it does in `agxfuzz run`, guided and coverage-sampled as "
                     "it is (detection at default settings)")
    zoo.add_argument("--junit", metavar="FILE", help="write JUnit XML (a case per variant)")
    zoo.add_argument("--sarif", metavar="FILE", help="write SARIF 2.1.0 (a result per catch)")
    zoo.add_argument("--html", metavar="FILE",
                     help="write the report of every catch (HTML, CFGs drawn with graphviz)")
    zoo.set_defaults(handler=_command("fuzz.commands.zoo:run_zoo"))

    tv = commands.add_parser(
        "tv", help="translation validation: prove AFTER refines BEFORE (loop-free functions)"
    )
    tv.add_argument("before", metavar="BEFORE", help="the function before the pass")
    tv.add_argument("after", metavar="AFTER", help="the function after the pass")
    tv.add_argument("--threads", type=_positive, default=32, help="thread ids 0..N-1 (default 32)")
    tv.add_argument("--timeout", type=_positive, default=10000, metavar="MS",
                    help="z3 time limit in milliseconds (default 10000)")
    tv.add_argument("--json", action="store_true", help="print the result as JSON")
    tv.set_defaults(handler=_command("fuzz.commands.tv:run_tv"))

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
    stats.set_defaults(handler=_command("fuzz.commands.stats:run_stats"))

    report = commands.add_parser(
        "report", help="the findings of a directory as one HTML page: reproducer, CFG before "
        "and after the failing pass, lanes that differ, replay command"
    )
    report.add_argument("directory", metavar="DIR",
                        help="a findings directory (run --out) or a zoo run's --out")
    report.add_argument("-o", "--output", default="report.html", metavar="FILE",
                        help="the page to write (default: ./report.html)")
    report.add_argument("--title", metavar="TEXT", help="the page's title")
    report.add_argument("--pass-timeout", type=_positive_float, default=10.0, metavar="SECONDS",
                        help="how long a pass may run when a finding is replayed (default 10)")
    report.set_defaults(handler=_command("fuzz.commands.report:report_command"))

    corpus_cmd = commands.add_parser(
        "corpus", help="list, export or import a campaign database's corpus; list its findings"
    )
    corpus_actions = corpus_cmd.add_subparsers(dest="action", metavar="ACTION", required=True)
    for action, text in (("list", "the entries, their versions and features"),
                         ("export", "the entries as JSON lines"),
                         ("import", "add entries from a JSON lines file"),
                         ("findings", "what every machine sharing the database found")):
        sub = corpus_actions.add_parser(action, help=text)
        sub.add_argument("--db", required=True, metavar="SPEC",
                         help="a directory or redis://HOST:PORT/N")
        if action == "export":
            sub.add_argument("-o", "--out", required=True, metavar="FILE",
                             help="the JSON lines file to write ('-': standard output)")
        if action == "import":
            sub.add_argument("file", metavar="FILE", help="JSON lines, as export writes them")
        if action == "findings":
            sub.add_argument("--out", metavar="DIR", help="also write every finding's files "
                             "(reproducer, inputs, record) into DIR")
    corpus_cmd.set_defaults(handler=_command("fuzz.commands.corpus:run_corpus"))

    mesa_cmd = commands.add_parser("mesa", help="Mesa's real AGX backend: build the bridge "
                                   "(see docs/mesa.md)")
    mesa_actions = mesa_cmd.add_subparsers(dest="mesa_action", metavar="ACTION", required=True)
    mesa_build = mesa_actions.add_parser("build", help="build the bridge from a Mesa tree "
                                         "(cached by a hash of every input)")
    mesa_build.add_argument("--mesa-src", metavar="DIR", help="the Mesa tree (default: "
                            "$AGXFUZZ_MESA_SRC, else ../shared/mesa-23.3.6)")
    mesa_build.add_argument("--force", action="store_true", help="build even on a cache hit")
    mesa_build.add_argument("--with-fixes", action="store_true", help="with the fixes for the "
                            "Mesa bugs already found (fuzz/mesa/fixes) applied to a copy")
    mesa_test = mesa_actions.add_parser("test", help="a Mesa finding as a gtest case in the "
                                        "style of src/asahi/compiler/test/")
    mesa_test.add_argument("finding", metavar="FINDING", help="a finding's .json record or .agx")
    mesa_test.add_argument("--variant", metavar="NAME", help="the planted variant (zoo --mesa) "
                           "the finding was found with; the tree's own output is the expected one")
    mesa_test.add_argument("--mesa-src", metavar="DIR", help="the Mesa tree (default: "
                           "$AGXFUZZ_MESA_SRC, else ../shared/mesa-23.3.6)")
    mesa_test.add_argument("--standalone", action="store_true",
                           help="with the includes and a fixture, to compile as it is")
    mesa_test.add_argument("--run", action="store_true", help="also compile it with Mesa's gtest "
                           "against the tree (and the variant's patched copy) and run it: exit 0 "
                           "when it fails with the bug and passes without")
    mesa_cov = mesa_actions.add_parser("coverage", help="line and branch coverage of Mesa's "
                                       "pass files under a run --mesa campaign (gcov), with the "
                                       "uncovered regions")
    mesa_budget = mesa_cov.add_mutually_exclusive_group()
    mesa_budget.add_argument("--time", type=float, metavar="SECONDS",
                             help="the campaign's length (default 60 s)")
    mesa_budget.add_argument("--examples", type=int, metavar="N", help="check N programs")
    mesa_cov.add_argument("--seed", type=int, default=1, help="the campaign's seed (default 1)")
    mesa_cov.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    mesa_cov.add_argument("--mesa-src", metavar="DIR", help="the Mesa tree (default: "
                          "$AGXFUZZ_MESA_SRC, else ../shared/mesa-23.3.6)")
    mesa_cov.add_argument("--pressure", type=int, default=0, metavar="K",
                          help="one program in K gets a block of register pressure that makes "
                          "agx_ra split live ranges (AGXFUZZ_MESA_PRESSURE; default 0: none)")
    mesa_cov.add_argument("--regions", type=int, default=20, metavar="N",
                          help="list the N largest uncovered regions (default 20)")
    mesa_cov.add_argument("--keep", metavar="DIR", help="keep the .gcda files and the "
                          "campaign's findings in DIR")
    mesa_cov.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    add_agree_parser(mesa_actions)
    mesa_cmd.set_defaults(handler=_command("fuzz.commands.mesa:run_mesa"))
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

    set_max_interpreted_buffer(args.max_buffer)
    set_max_threads(args.max_threads)
    try:
        return args.handler(args)
    except UserError as error:
        print(one_line_errors(str(error)), file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print("agxfuzz: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (`| head`) went away: stop quietly, as other Unix tools do.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces the closed stream
        return 141
    except OSError as error:  # a file the user named that cannot be written or read
        where = f"{error.filename}: " if error.filename else ""
        print(f"agxfuzz: {where}{error.strerror or error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
