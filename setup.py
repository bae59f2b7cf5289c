"""The build of agxir's compiled core (agxir.ccore, from agxir/ccore_src/); everything else
is in pyproject.toml.

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

setup(ext_modules=[Extension(
    "agxir.ccore",
    [f"{SOURCES}/{name}.c" for name in ("module", "attributes", "clone", "compare")],
    depends=[f"{SOURCES}/{name}.h" for name in ("core", "attributes")],  # rebuilt on a change
    extra_compile_args=["-O2"],
    optional=True,
)])
