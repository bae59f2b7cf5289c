"""lit configuration for the golden .agx files (tests/golden and tests/golden/machine).

Each golden holds `; RUN:` lines and FileCheck `; CHECK:` lines (docs/goldens.md);
`lit tests/golden` runs them all. `agxfuzz` and `filecheck` resolve to the project's
virtual environment (the one lit runs in, else .venv beside the checkout) ahead of PATH;
`not` is lit's builtin. Temporary files (`%t`) go under the system temporary directory,
never into the source tree. tests/regressions/lit.cfg.py loads this file and renames it.
"""

import hashlib
import os
import sys
import tempfile
from pathlib import Path

import lit.formats

# lit executes this file with `config` and `lit_config` in scope.
config.name = "agxfuzz-golden"  # noqa: F821
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".agx"]  # noqa: F821
config.test_source_root = os.path.dirname(os.path.abspath(__file__))  # noqa: F821
# One directory per suite and checkout: two checkouts (or a copy of a golden in a test's
# temporary suite) never share a `%t`.
_where = hashlib.sha1(config.test_source_root.encode()).hexdigest()[:10]  # noqa: F821
config.test_exec_root = os.path.join(  # noqa: F821
    tempfile.gettempdir(), f"agxfuzz-lit-{os.getuid()}", f"{config.name}-{_where}"  # noqa: F821
)

_ROOT = Path(__file__).resolve().parents[2]
_TOOLS = [str(Path(sys.executable).parent), str(_ROOT / ".venv" / "bin")]
_found = [tools for tools in _TOOLS if os.path.exists(os.path.join(tools, "agxfuzz"))]
if not _found:
    lit_config.fatal(  # noqa: F821
        f"no agxfuzz beside {sys.executable} or in {_ROOT / '.venv'}: install the project "
        "(pip install -e '.[test]') in the environment that runs lit"
    )
config.environment["PATH"] = os.pathsep.join(  # noqa: F821
    [_found[0], os.environ.get("PATH", "")]
)
