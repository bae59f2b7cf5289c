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
    """`agxfuzz mesa agree`'s subparser, on the `mesa` command's subparsers `actions`
    (imports nothing, so `agxfuzz --help` stays fast)."""
    sub = actions.add_parser("agree", help="the model's optimizer and allocator against "
                             "Mesa's on the same programs, per rewrite kind "
                             "(docs/mesa-agreement.md)")
    sub.add_argument("--examples", type=int, default=300, metavar="N",
                     help="programs to compare (default 300)")
    sub.add_argument("--seed", type=int, default=1, help="the programs' seed (default 1)")
    sub.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    sub.add_argument("--out", default="findings", metavar="DIR",
                     help="where meaning differences are written as findings "
                     "(default findings/)")
    sub.add_argument("--mesa-src", metavar="DIR", help="the Mesa tree (default: "
                     "$AGXFUZZ_MESA_SRC, else ../shared/mesa-23.3.6)")
    sub.add_argument("--no-allocators", action="store_true",
                     help="compare the optimizers only")
    sub.add_argument("--reduce", type=int, default=0, metavar="N",
                     help="reduce the smallest program of each model-only / Mesa-only / "
                     "different class with the project's reducer, N candidates at most each "
                     "(default 0: keep the smallest seen)")


def run_mesa(args) -> int:
    # The Mesa bridge's modules are loaded late, each only by the action that needs it.
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
