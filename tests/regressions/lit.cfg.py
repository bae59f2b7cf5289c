"""lit configuration for the reduced reproducers of real bugs (tests/regressions): each
file's RUN lines replay it with `agxfuzz check`, which exits 1 if the bug is back. The
tools and temporary files are set up as for the goldens (tests/golden/lit.cfg.py)."""

import hashlib
import os

# lit executes this file with `config` and `lit_config` in scope.
lit_config.load_config(  # noqa: F821
    config,  # noqa: F821
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "lit.cfg.py"),
)
config.name = "agxfuzz-regressions"  # noqa: F821
config.test_source_root = os.path.dirname(os.path.abspath(__file__))  # noqa: F821
config.test_exec_root = os.path.join(  # noqa: F821
    os.path.dirname(config.test_exec_root),  # noqa: F821
    f"{config.name}-{hashlib.sha1(config.test_source_root.encode()).hexdigest()[:10]}",  # noqa: F821
)
