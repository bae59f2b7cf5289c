"""`agxfuzz fmt`: a program printed back in the canonical format (unverified)."""

from __future__ import annotations

import sys

from fuzz.commands.errors import InvalidProgram
from fuzz.commands.loaders import load_function


def run_fmt(args) -> int:
    from agxir.text import print_function

    try:
        fn = load_function(args.file, verified=False, interpreted=False)
    except InvalidProgram as error:
        print(error, file=sys.stderr)
        return 1
    sys.stdout.write(print_function(fn))
    return 0
