"""`python -m fuzz` runs the agxfuzz command line."""

import sys

from fuzz.cli import main

sys.exit(main())
