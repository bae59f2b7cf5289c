"""`agxfuzz mesa build`: the Mesa bridge built from a Mesa tree (or found in the cache).

`--mesa-src DIR` defaults to `$AGXFUZZ_MESA_SRC`, else `../shared/mesa-23.3.6` beside the
repository. Prints where the bridge is and whether it was a cache hit; a missing tree, one
that is not Mesa, or one that does not compile is one line and exit 2 (`fuzz/mesa/build.py`).

`agxfuzz mesa test FINDING`: a Mesa finding as a gtest case (`fuzz/mesa/gtest.py`).

`agxfuzz mesa coverage [--time S | --examples N]`: gcov over Mesa's pass files under a
`run --mesa` campaign (`fuzz/mesa/coverage.py`).

`agxfuzz mesa agree [--examples N] [--seed S] [--json F]`: the model's optimizer and
allocator against Mesa's on the same programs (`fuzz/mesa/agree.py`); its flags are
`add_agree_parser`'s.
"""

from __future__ import annotations

from pathlib import Path

from fuzz.commands.errors import UsageError


def add_agree_parser(actions) -> None:
    """`agxfuzz mesa agree`'s subparser, on the `mesa` command's subparsers `actions`."""
    from fuzz.mesa.agree_report import add_agree_parser as add

    add(actions)


def run_mesa(args) -> int:
    if getattr(args, "mesa_action", "build") == "agree":  # the model against Mesa
        from fuzz.mesa.agree_report import run_agree_command

        return run_agree_command(args)
    if getattr(args, "mesa_action", "build") == "coverage":  # gcov over the pass files
        from fuzz.mesa.coverage import run_coverage_command

        return run_coverage_command(args)
    if getattr(args, "mesa_action", "build") == "test":  # a finding as a Mesa unit test
        from fuzz.mesa.gtest import run_test_command

        return run_test_command(args)
    from fuzz.mesa.build import MesaBuildError, build_bridge
    from fuzz.mesa.fixes import all_fixes
    from fuzz.mesa.variants import PatchDoesNotApply

    src = Path(args.mesa_src) if args.mesa_src else None
    fixes = all_fixes() if getattr(args, "with_fixes", False) else ()
    try:
        bridge = build_bridge(src, force=args.force, patches=fixes)
    except (MesaBuildError, PatchDoesNotApply) as error:
        raise UsageError(str(error)) from None
    how = "cached" if bridge.cached else "built"
    with_fixes = f" with fixes {', '.join(p.name for p in fixes)}" if fixes else ""
    print(f"Mesa {bridge.version} bridge{with_fixes} {how}: {bridge.path}")
    print(f"  from {bridge.mesa_src}")
    return 0
