"""`agxfuzz fmt`: a program printed back in the canonical format (unverified)."""

from __future__ import annotations

import sys

from agxir.text import print_function
from fuzz.commands.errors import InvalidProgram, one_line_errors
from fuzz.commands.loaders import load_function


def run_fmt(args) -> int:
    try:
        fn = load_function(args.file, verified=False, interpreted=False)
    except InvalidProgram as error:
        print(one_line_errors(str(error)), file=sys.stderr)
        return 1
    sys.stdout.write(print_function(fn))
    return 0
