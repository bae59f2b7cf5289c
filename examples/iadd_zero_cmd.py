#!/usr/bin/env python3
"""examples/iadd_zero.py as an external pass (`--pass-cmd`): IR text on stdin, IR on stdout.

Any program in any language can be a pass under test this way; this one parses with the
project's own parser to stay short. A non-zero exit, or output that does not parse or
verify, is a finding against the command.

    agxfuzz run --pass-cmd "python examples/iadd_zero_cmd.py" --time 30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agxir.text import parse_function, print_function  # noqa: E402
from examples.iadd_zero import iadd_zero  # noqa: E402

function = parse_function(sys.stdin.read(), filename="<stdin>")
iadd_zero(function)
sys.stdout.write(print_function(function))
