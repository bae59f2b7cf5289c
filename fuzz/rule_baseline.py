"""Rule-hit baselines: `agxfuzz run --save-rules F` writes one, `--expect-rules F` judges a
run against one, and a rule that fired in the baseline but never fires now is a finding of
its own kind, "missed-rule" (a missed optimization, which no other oracle notices).

A baseline is JSON: the run's program count, how many times each rule-table pass under
test ran (once per pipeline it is in, per program), and per pass, per rule, its hits and
hits per 1,000 programs (rules that never fired are listed with 0, so a later run knows the
rule existed and expects nothing of it):

    {"format": 1, "programs": 400, "seed": 1, "passes_under_test": [...],
     "pass_runs": {"inline-imm": 400, ...},
     "rules": {"inline-imm": {"imm8-32": {"hits": 812, "per_1000": 2030.0}, ...}, ...}}

The judgement is a Poisson one. A rule that fired h times in the baseline's n runs of its
pass fires, in m runs of the pass over programs from the same distribution, about m * h / n
times; if it fired none, the chance of that under the baseline's rate is exp(-m * h / n).
Counting runs of the pass, not programs, keeps the rate right when the two runs test
different pass lists (a pass alone runs once per program, in the default run it runs again
in the default pipeline); without run counts (or no run of the pass now) programs are
counted instead. A rule is a missed rule when it fired in the baseline, its pass is under
test now, it fired zero times now and `m * h / n >= MIN_EXPECTED_HITS` (5: the chance of
zero hits by bad luck is below e^-5 = 0.7%, under 1%). With fewer expected hits the run
cannot tell and says so; a rule that fires less often than before but not zero times is not
judged (rates move with the generator).
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agxir.passes import RULE_TABLES
from fuzz.findings import write_atomically
from fuzz.harness import Finding

FORMAT = 1
MIN_EXPECTED_HITS = 5.0  # P(no hit | the baseline's rate) = e^-5 < 1%
ORACLE = "missed-rule"  # the finding kind (fuzz.ci_reports.ORACLE_HELP says what it means)


class BaselineError(Exception):
    """A baseline file that cannot be read; the message is one line, without a prefix."""


def rule_rates(stats, units: Iterable[str], seed: int | None = None) -> dict:
    """The baseline of a run: its program count and every rule's hits, per rule-table pass
    among `units` (the names of the passes under test)."""
    units = list(units)
    programs = stats.programs
    rules: dict[str, dict] = {}
    for name in units:
        if name not in RULE_TABLES:
            continue
        rules[name] = {}
        for rule in RULE_TABLES[name]:
            hits = stats.rule_hits.get((name, rule.name), 0)
            rate = round(1000 * hits / programs, 3) if programs else 0.0
            rules[name][rule.name] = {"hits": hits, "per_1000": rate}
    runs = {name: stats.pass_runs.get(name, 0) for name in rules}
    return {"format": FORMAT, "programs": programs, "seed": seed,
            "passes_under_test": units, "pass_runs": runs, "rules": rules}


def write_rates(path: str, rates: dict) -> None:
    write_atomically(Path(path), json.dumps(rates, indent=1) + "\n")


def load_baseline(path: str) -> dict:
    """The baseline at `path`, checked for shape; BaselineError says what is wrong."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as error:
        raise BaselineError(f"{path}: {error.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BaselineError(f"{path}: not JSON ({error})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BaselineError(f"{path}: not a rule baseline of format {FORMAT} "
                            "(written by agxfuzz run --save-rules)")
    programs, rules = data.get("programs"), data.get("rules")
    if not isinstance(programs, int) or programs < 0 or not isinstance(rules, dict):
        raise BaselineError(f"{path}: a baseline needs 'programs' (a count) and 'rules'")
    runs = data.setdefault("pass_runs", {})
    if not isinstance(runs, dict) or not all(isinstance(n, int) for n in runs.values()):
        raise BaselineError(f"{path}: 'pass_runs' must map passes to counts")
    for pass_name, table in rules.items():
        if not isinstance(table, dict) or not all(
            isinstance(entry, dict) and isinstance(entry.get("hits"), int)
            for entry in table.values()
        ):
            raise BaselineError(f"{path}: rules of {pass_name!r}: expected "
                                "{rule: {\"hits\": N, ...}}")
    return data


@dataclass(frozen=True)
class MissedRule:
    pass_name: str
    rule: str
    baseline_hits: int
    baseline_programs: int
    programs: int
    in_table: bool = True
    baseline_runs: int = 0  # runs of the pass; 0: unknown, programs are counted instead
    runs: int = 0

    @property
    def by_runs(self) -> bool:
        return self.baseline_runs > 0 and self.runs > 0

    @property
    def expected(self) -> float:
        if self.by_runs:
            return self.runs * self.baseline_hits / self.baseline_runs
        return self.programs * self.baseline_hits / self.baseline_programs

    @property
    def message(self) -> str:
        rate = 1000 * self.baseline_hits / self.baseline_programs
        gone = "" if self.in_table else " (the rule is no longer in the pass's table)"
        runs = (f" ({self.runs} runs of the pass)" if self.by_runs else "")
        base_runs = (f", {self.baseline_runs} runs" if self.by_runs else "")
        return (f"rule {self.rule} never fired in {self.programs} programs{runs}{gone}; the "
                f"baseline saw {self.baseline_hits} hits in {self.baseline_programs} programs"
                f"{base_runs} ({rate:.1f} per 1,000 programs): {self.expected:.1f} expected, "
                f"P(none by chance) = {math.exp(-self.expected):.1e}")


@dataclass(frozen=True)
class Judgement:
    missed: list[MissedRule]
    undecided: list[tuple[str, str, float]]  # (pass, rule, expected hits) below the bar


def judge(baseline: dict, stats, units: Iterable[str]) -> Judgement:
    """The rules of `baseline` that fired there and never in this run (`stats`), among the
    passes under test now (`units`), with at least MIN_EXPECTED_HITS expected."""
    units = set(units)
    programs, base_programs = stats.programs, baseline["programs"]
    missed, undecided = [], []
    for pass_name, table in sorted(baseline["rules"].items()):
        if pass_name not in units or not base_programs:
            continue
        names = {rule.name for rule in RULE_TABLES.get(pass_name, ())}
        for rule, entry in sorted(table.items()):
            hits = entry["hits"]
            if hits <= 0 or stats.rule_hits.get((pass_name, rule), 0) > 0:
                continue
            found = MissedRule(pass_name, rule, hits, base_programs, programs, rule in names,
                               baseline["pass_runs"].get(pass_name, 0),
                               stats.pass_runs.get(pass_name, 0))
            if found.expected >= MIN_EXPECTED_HITS:
                missed.append(found)
            else:
                undecided.append((pass_name, rule, found.expected))
    return Judgement(missed, undecided)


def missed_rule_findings(judgement: Judgement, replay: str):
    """One finding per missed rule, with `replay` (the command that runs the check again)
    as its files' command: (Finding, MissedRuleFiles) pairs as the campaign's findings are."""
    return [
        (Finding(missed.pass_name, ORACLE, missed.message, (missed.pass_name,), ""),
         MissedRuleFiles(replay))
        for missed in judgement.missed
    ]


@dataclass(frozen=True)
class MissedRuleFiles:
    """What a report shows for a missed rule in place of a reproducer: the replay command.
    There is no program to reduce: the finding is about the whole run."""

    command: str
    reproducer: None = None
    record: None = None


def replay_command(seed: int, programs: int, flags: Iterable[str], baseline: str) -> str:
    """`agxfuzz run` again on the same programs, judged against the same baseline."""
    return " ".join(["agxfuzz", "run", "--seed", str(seed), "--examples", str(programs),
                     *(shlex.quote(flag) for flag in flags),
                     "--expect-rules", shlex.quote(str(Path(baseline).resolve()))])


def replay_flags_of(args) -> list[str]:
    """The flags of `agxfuzz run` that choose its passes and its program stream."""
    flags: list[str] = []
    if getattr(args, "passes", None) is not None:
        flags += ["--passes", args.passes]
    for spec in getattr(args, "python_passes", None) or []:
        flags += ["--pass", spec]
    for command in getattr(args, "pass_commands", None) or []:
        flags += ["--pass-cmd", command]
    if getattr(args, "jobs", None):
        flags += ["--jobs", str(args.jobs)]
    if getattr(args, "guidance", "on") != "on":
        flags += ["--guidance", args.guidance]
    return flags


def expect_rules(baseline: dict, args, result, units: list[str], seed: int, jobs: int) -> str:
    """Judge `result` against `baseline`: append a missed-rule finding per missed rule to
    `result.findings` and return the summary's line about the comparison."""
    judgement = judge(baseline, result.stats, units)
    if args.jobs is None:
        args.jobs = jobs  # the replay runs the same number of workers
    replay = replay_command(seed, result.stats.programs, replay_flags_of(args),
                            args.expect_rules)
    result.findings.extend(missed_rule_findings(judgement, replay))
    compared = sum(1 for pass_name, table in baseline["rules"].items() if pass_name in units
                   for entry in table.values() if entry["hits"] > 0)
    line = (f"rules against the baseline {args.expect_rules} ({baseline['programs']} "
            f"programs): {compared} that fired there compared, {len(judgement.missed)} "
            "never fired here")
    if judgement.undecided:
        line += (f", {len(judgement.undecided)} not judged (under {MIN_EXPECTED_HITS:g} hits "
                 "expected at this run's program count)")
    return line
