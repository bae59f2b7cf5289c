"""The campaign's memory: corpus entries (a program's choice sequence and the features it
reached, `entry`), and the databases that hold entries and findings for one machine or many
(`db`)."""

# One program in this many is checked under coverage.py for branch-arc features: the default
# of `agxfuzz run --coverage-every` and of the zoo at the default campaign's cost.
DEFAULT_COVERAGE_EVERY = 20
