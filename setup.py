"""The builds of the two compiled parts, agxir's core (agxir.ccore, from agxir/ccore_src/)
and the interpreters' lane VM (oracles.interp.lanevm, from oracles/interp/lanevm_src/);
everything else is in pyproject.toml.

`pip install -e .` compiles it in place. It is optional: where it cannot be built (no C
compiler or no Python headers) the install still succeeds and agxir runs its pure-Python
references (the same results, slower; agxir.native says which), and tests/agxir/test_ccore.py
fails, so that CI does not go slow unnoticed.

Its sources sit in a folder not named `ccore`: a folder `agxir/ccore/` would import as a
namespace package `agxir.ccore` where the extension is not built, and agxir.native would
take it for the compiled core.
"""

from setuptools import Extension, setup

SOURCES = "agxir/ccore_src"
LANEVM = "oracles/interp/lanevm_src"

setup(ext_modules=[
    Extension(
        "agxir.ccore",
        [f"{SOURCES}/{name}.c"
         for name in ("module", "attributes", "clone", "compare", "print", "print_parts")],
        depends=[f"{SOURCES}/{name}.h" for name in ("core", "attributes", "print")],  # rebuilt on a change
        extra_compile_args=["-O2"],
        optional=True,
    ),
    Extension(
        "oracles.interp.lanevm",
        [f"{LANEVM}/{name}.c"
         for name in ("module", "compile", "lex", "parse", "stmt", "run", "memory", "keys",
                      "races")],
        depends=[f"{LANEVM}/{name}.h" for name in ("vm", "parse", "floats")],
        # No -ffast-math: float ops must round as numpy's do (IEEE, round to nearest even).
        extra_compile_args=["-O2", "-fno-fast-math", "-ffp-contract=off"],
        optional=True,
    ),
])
