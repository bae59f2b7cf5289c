"""Which core agxir runs: the compiled one (agxir/ccore_src/, built by `pip install -e .`) or,
when it is not built, the pure-Python references.

`CORE` is the extension module, or None. It holds the two loops over a whole function that
dominated checking long programs: cloning (agxir.ir.clone_function; reference
`agxir.ir.clone_reference`) and the no-change comparison (agxir.structural.prints_as;
reference `agxir.structural.same_body`). Both give what their references give
(tests/agxir/test_ccore.py), so nothing but speed depends on which one runs. This module
imports nothing of agxir's, so agxir.ir can hand the extension its classes as it loads.
"""

from __future__ import annotations

try:
    import agxir.ccore as CORE
except ImportError:  # not built (a checkout never `pip install`ed): the references run
    CORE = None
