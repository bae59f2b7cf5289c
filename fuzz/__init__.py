"""fuzz: strategies, the harness, the campaign and the command line.

The public Hypothesis strategies are in `fuzz.strategies`. This package keeps its own import
light so that `agxfuzz --help` answers fast; each command imports what it needs.
"""

VERSION = "0.1.0"
