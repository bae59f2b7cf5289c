"""Which core agxir runs: the compiled one (agxir/ccore_src/, built by `pip install -e .`) or,
when it is not built, the pure-Python references.

`CORE` is the extension module, or None. It holds the loops over a whole function that
dominated checking long programs: cloning (agxir.ir.clone_function; reference
`agxir.ir.clone_reference`), the no-change comparison (agxir.structural.prints_as;
reference `agxir.structural.same_body`) and printing (agxir.text.printer's
format_instruction and print_ssa_function, agxir.machine.text.print_machine_function;
references the `*_reference` functions beside them). Each gives what its reference gives
(tests/agxir/test_ccore.py, tests/agxir/test_ccore_print.py), so nothing but speed depends
on which one runs. This module imports nothing of agxir's, so agxir.ir can hand the
extension its classes as it loads.
"""

from __future__ import annotations

try:
    import agxir.ccore as CORE
except ImportError:  # not built (a checkout never `pip install`ed): the references run
    CORE = None
