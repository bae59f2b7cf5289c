"""`agxfuzz mesa build`: the Mesa bridge built from a Mesa tree (or found in the cache).

`--mesa-src DIR` defaults to `$AGXFUZZ_MESA_SRC`, else `../shared/mesa-23.3.6` beside the
repository. Prints where the bridge is and whether it was a cache hit; a missing tree, one
that is not Mesa, or one that does not compile is one line and exit 2 (`fuzz/mesa/build.py`).

`agxfuzz mesa test FINDING`: a Mesa finding as a gtest case (`fuzz/mesa/gtest.py`).

`agxfuzz mesa coverage [--time S | --examples N]`: gcov over Mesa's pass files under a
`run --mesa` campaign (`fuzz/mesa/coverage.py`).
"""

from __future__ import annotations

from pathlib import Path

from fuzz.commands.errors import UsageError


def run_mesa(args) -> int:
    if getattr(args, "mesa_action", "build") == "coverage":  # gcov over the pass files
        from fuzz.mesa.coverage import run_coverage_command

        return run_coverage_command(args)
    if getattr(args, "mesa_action", "build") == "test":  # a finding as a Mesa unit test
        from fuzz.mesa.gtest import run_test_command

        return run_test_command(args)
    from fuzz.mesa.build import MesaBuildError, build_bridge

    src = Path(args.mesa_src) if args.mesa_src else None
    try:
        bridge = build_bridge(src, force=args.force)
    except MesaBuildError as error:
        raise UsageError(str(error)) from None
    how = "cached" if bridge.cached else "built"
    print(f"Mesa {bridge.version} bridge {how}: {bridge.path}")
    print(f"  from {bridge.mesa_src}")
    return 0
