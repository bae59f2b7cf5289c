"""Fixes to Mesa 23.3.6 for the bugs the campaigns found in it (docs/mesa-findings.md):
backports of later Mesa's fixes, and our own where later Mesa has none (each patch's
header says which). `run --mesa --with-fixes` and `mesa build --with-fixes` build the
bridge from a copy of the tree with all of them applied (fuzz/mesa/build.py, the strict
applier of fuzz/mesa/variants), so a campaign, CI's among them, hunts for what is not yet
known instead of finding the known bugs again."""

from __future__ import annotations

from pathlib import Path

from fuzz.mesa.variants import Patch, parse_patch

HERE = Path(__file__).parent
ENV = "AGXFUZZ_MESA_FIXES"  # set to 1: every process's bridge is the fixed one


def names() -> list[str]:
    return sorted(path.stem for path in HERE.glob("*.patch"))


def load(name: str) -> Patch:
    """The fix `NAME` (KeyError when there is none)."""
    path = HERE / f"{name}.patch"
    if not path.is_file():
        raise KeyError(name)
    return parse_patch(name, path.read_text())


def all_fixes() -> list[Patch]:
    return [load(name) for name in names()]
