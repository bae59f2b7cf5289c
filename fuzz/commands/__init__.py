"""The `agxfuzz` commands, one module each (`run`, `check`, `opt`, `repro`, `reduce`,
`interp`, `fmt`, `verify`, `audit` with `nir_audit`, `zoo`, `tv`, `stats`), beside what they
share: the one-line error types (`errors`), reading files and input sets (`loaders`), the
passes under test and their pipelines (`units`) and the child-process check (`isolation`).

`fuzz.cli` parses the command line and imports a command's module only when it runs; no
command imports `fuzz.cli`.
"""
