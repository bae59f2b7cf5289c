"""`agxfuzz opt`: named passes on one program, printed (with --stats, what they changed).

Each pass's verdict is a comment line (`; NAME: changed` or `; NAME: no change`) before
the program, so FileCheck can match it; --expect-unchanged makes a change a failure.
"""

from __future__ import annotations

import sys

from agxir.ir import VREG
from agxir.machine.stats import function_stats
from agxir.passes import UnknownPass
from agxir.text import print_function
from agxir.verifier import verify
from fuzz.commands.errors import UsageError, UserError
from fuzz.commands.loaders import load_function
from fuzz.passes_under_test import registered


def opt_command(args) -> int:
    fn = load_function(args.file, interpreted=False)
    before = print_function(fn)
    names = [n.strip() for n in args.passes.split(",") if n.strip()]
    if not names:
        raise UsageError(f"agxfuzz: -p {args.passes!r} names no pass")
    try:
        steps = [registered(name) for name in names]
        changes = [(step.name, step.run(fn)) for step in steps]
    except UnknownPass as error:
        raise UsageError(f"agxfuzz: {error}") from None
    except Exception as error:  # the pass itself failed
        raise UserError(f"{args.file}: a pass raised {type(error).__name__}: {error}") from None
    for name, changed in changes:
        print(f"; {name}: {'changed' if changed else 'no change'}")
    if getattr(args, "stats", False):
        if fn.level == VREG:  # virtual registers: neither Mesa's demand nor an allocation
            print("; stats: none: --stats needs an allocated (machine-level) result or an "
                  "SSA or exec one (Mesa's demand); this pipeline ends at level vreg")
        else:
            print(f"; stats: {function_stats(fn).line()}")
    after = print_function(fn)
    sys.stdout.write(after)
    errors = verify(fn)
    if errors:
        raise UserError("\n".join(f"after {','.join(names)}: {e}" for e in errors))
    if getattr(args, "expect_unchanged", False):
        changed = [name for name, change in changes if change]
        if changed:
            raise UserError(f"{args.file}: --expect-unchanged, but {', '.join(changed)} "
                            "reported a change")
        if after != before:
            raise UserError(f"{args.file}: --expect-unchanged: no pass reported a change, "
                            "but the program printed differently after them")
    return 0
