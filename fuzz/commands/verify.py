"""`agxfuzz verify`: the verifier's verdict on a program (exit 1 when it is not valid)."""

from __future__ import annotations

import sys

from fuzz.commands.errors import InvalidProgram, one_line_errors
from fuzz.commands.loaders import load_function


def run_verify(args) -> int:
    try:
        load_function(args.file, interpreted=False)
    except InvalidProgram as error:  # the verdict, not bad usage
        print(one_line_errors(str(error)), file=sys.stderr)
        return 1
    print(f"{args.file}: ok")
    return 0
