"""Fixes to Mesa 23.3.6 for the bugs the campaigns found in it (docs/mesa-findings.md):
backports of later Mesa's fixes, and our own where later Mesa has none (each patch's
header says which). `run --mesa --with-fixes` and `mesa build --with-fixes` build the
bridge from a copy of the tree with all of them applied (fuzz/mesa/build.py, the strict
applier of fuzz/mesa/variants), so a campaign, CI's among them, hunts for what is not yet
known instead of finding the known bugs again."""

from __future__ import annotations

from pathlib import Path

from fuzz.mesa import variants
from fuzz.mesa.variants import Patch

HERE = Path(__file__).parent
ENV = "AGXFUZZ_MESA_FIXES"  # set to 1: every process's bridge is the fixed one


def names() -> list[str]:
    return variants.names(HERE)


def load(name: str) -> Patch:
    """The fix `NAME` (KeyError when there is none)."""
    return variants.load(name, HERE)


def all_fixes() -> list[Patch]:
    return [load(name) for name in names()]
