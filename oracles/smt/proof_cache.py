"""The audit's proof cache: a rule proved once is not proved again until something it
depends on changes.

A cache entry is one JSON file in the cache directory (default `default_cache_dir()`:
`$XDG_CACHE_HOME/agxfuzz/proofs`, else `~/.cache/agxfuzz/proofs`), named by `rule_key`: a
SHA-256 of

* the pass name and the rule as printed: its pattern and replacement, with every function
  in it (precondition, computed immediates and modifiers) given by its source, the values
  its closure captured and its defaults, so two rules built in one loop differ;
* the source of the prover: the modules that enumerate instances, match, build and verify
  (agxir.rewrite, agxir.verifier), read operands (agxir.opcodes.operands), encode them
  (oracles.smt.rules, .instruction, .machine), and the opcode table's rows as printed;
* the z3 version.

The entry records which opcodes the proof's instances used and a hash of each one's
semantics (`semantics_hash`: the function's source and the sources of the agxir.opcodes
functions it calls, transitively). A lookup (`ProofCache.get`) recomputes those hashes and
returns the entry only when all of them still match, so editing fmul's semantics re-proves
exactly the rules whose instances contain fmul.

Only verified proofs are stored: a counterexample is re-found (and replayed) on every run,
and a timeout ("unknown") is never stored, so it can never come back as proved.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import sys
import types
from dataclasses import fields, is_dataclass
from pathlib import Path

import z3

from agxir.opcodes.table import OPCODES

FORMAT = 1
PROVER_MODULES = (
    "agxir.rewrite.instances", "agxir.rewrite.matcher", "agxir.rewrite.pattern",
    "agxir.rewrite.skeletons", "agxir.verifier", "agxir.opcodes.operands",
    "oracles.smt.rules", "oracles.smt.instruction", "oracles.smt.bitvectors",
)


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agxfuzz" / "proofs"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _source(fn) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        code = getattr(fn, "__code__", None)
        return repr(code.co_code) if code is not None else repr(fn)


def _function_text(fn) -> str:
    parts = [_source(fn)]
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            parts.append(printed(cell.cell_contents))
        except ValueError:  # an empty cell
            parts.append("<empty>")
    parts.append(printed(getattr(fn, "__defaults__", None)))
    return "\n".join(parts)


def printed(thing) -> str:
    """A stable text for rule data: dataclasses field by field, functions by source (with
    their captured values), containers element by element; no memory addresses."""
    if isinstance(thing, (types.FunctionType, types.MethodType)):
        return f"<fn {_function_text(thing)}>"
    if is_dataclass(thing) and not isinstance(thing, type):
        inner = ", ".join(f"{f.name}={printed(getattr(thing, f.name))}" for f in fields(thing))
        return f"{type(thing).__name__}({inner})"
    if isinstance(thing, (list, tuple)):
        return f"{type(thing).__name__}[{', '.join(printed(t) for t in thing)}]"
    if isinstance(thing, (set, frozenset)):
        return f"set[{', '.join(sorted(printed(t) for t in thing))}]"
    if isinstance(thing, dict):
        items = sorted((printed(k), printed(v)) for k, v in thing.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if callable(thing) and hasattr(thing, "__code__"):
        return f"<fn {_function_text(thing)}>"
    return repr(thing)


def _module_source(name: str) -> str:
    module = sys.modules.get(name)
    if module is None:
        module = importlib.import_module(name)
    try:
        return inspect.getsource(module)
    except (OSError, TypeError):
        return name


_PROVER_HASH: str | None = None


def prover_hash() -> str:
    """The prover's sources, the opcode table's rows and the z3 version, hashed once."""
    global _PROVER_HASH
    if _PROVER_HASH is None:
        rows = "\n".join(printed({f.name: getattr(op, f.name) for f in fields(op)
                                  if f.name != "semantics"}) for op in OPCODES.values())
        parts = [_module_source(name) for name in PROVER_MODULES]
        _PROVER_HASH = _sha("\n".join([*parts, rows, z3.get_version_string()]))
    return _PROVER_HASH


def _called_functions(code, scope: dict, found: dict) -> None:
    for name in code.co_names:
        target = scope.get(name)
        if isinstance(target, types.FunctionType) and target.__module__.startswith("agxir.opcodes"):
            key = f"{target.__module__}.{target.__qualname__}"
            if key not in found:
                found[key] = target
                _called_functions(target.__code__, target.__globals__, found)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _called_functions(const, scope, found)


def semantics_hash(opcode_name: str) -> str:
    """The source of an opcode's semantics function and of every agxir.opcodes function it
    calls (transitively), hashed; "" for an opcode without semantics or an unknown name."""
    op = OPCODES.get(opcode_name)
    fn = getattr(op, "semantics", None)
    if fn is None:
        return ""
    found = {f"{fn.__module__}.{fn.__qualname__}": fn}
    _called_functions(fn.__code__, fn.__globals__, found)
    return _sha("\n".join(f"{key}\n{_source(found[key])}" for key in sorted(found)))


def rule_key(pass_name: str, rule) -> str:
    return _sha("\n".join([f"format {FORMAT}", pass_name, printed(rule), prover_hash()]))


class ProofCache:
    """Verified proofs by `rule_key`, one JSON file each, and how long each rule took last
    time it was proved (`timings`, which the pool uses to start the slowest first)."""

    TIMINGS = "rule-times.json"

    def __init__(self, directory: Path | str):
        self.directory = Path(directory)
        self._semantics: dict[str, str] = {}

    def _semantics_hash(self, name: str) -> str:
        if name not in self._semantics:
            self._semantics[name] = semantics_hash(name)
        return self._semantics[name]

    def _read(self, name: str):
        try:
            return json.loads((self.directory / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def _write(self, name: str, data) -> None:
        """Atomically; a cache that cannot be written is not an error, it just stays cold."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            temporary = self.directory / f".{name}.{os.getpid()}.tmp"
            temporary.write_text(json.dumps(data), encoding="utf-8")
            os.replace(temporary, self.directory / name)
        except OSError:
            pass

    def get(self, key: str) -> dict | None:
        """The stored proof, when its opcodes' semantics are unchanged; else None."""
        entry = self._read(f"{key}.json")
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("verdict") != "verified":
            return None
        semantics = entry.get("semantics")
        if not isinstance(semantics, dict):
            return None
        if any(self._semantics_hash(name) != digest for name, digest in semantics.items()):
            return None
        return entry

    def put(self, key: str, proof, opcodes) -> None:
        """Store a verified proof (anything else is ignored)."""
        if proof.verdict != "verified":
            return
        self._write(f"{key}.json", {
            "format": FORMAT, "pass": proof.pass_name, "rule": proof.rule, "verdict": proof.verdict,
            "instances": proof.instances, "times_ms": [round(t, 3) for t in proof.times_ms],
            "seconds": round(proof.seconds, 3),
            "semantics": {name: self._semantics_hash(name) for name in sorted(opcodes)},
        })

    def timings(self) -> dict:
        """Seconds per "pass/rule" as last proved ({} when never)."""
        found = self._read(self.TIMINGS)
        return found if isinstance(found, dict) else {}

    def save_timings(self, timings: dict) -> None:
        self._write(self.TIMINGS, timings)
