"""The findings report: one self-contained HTML page for a findings directory.

`build_report(directory)` finds the finding records under a directory (a campaign's
`--out`, or a zoo run's, one directory per variant), replays each (`replay`), draws the CFG
before and after the failing pass with graphviz (`cfg_dot`) and lays it all out
(`render`). `agxfuzz report`, `run --html` and `zoo --html` call it.
"""

from fuzz.html_report.build import Report, build_report
from fuzz.html_report.cfg_dot import DotMissing, dot_program

__all__ = ["DotMissing", "Report", "build_report", "dot_program"]
