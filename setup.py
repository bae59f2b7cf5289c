"""The build of agxir's compiled core (agxir/ccore.c); everything else is in pyproject.toml.

`pip install -e .` compiles it in place. It is optional: where it cannot be built (no C
compiler or no Python headers) the install still succeeds and agxir runs its pure-Python
references (the same results, slower; agxir.native says which), and tests/agxir/test_ccore.py
fails, so that CI does not go slow unnoticed.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("agxir.ccore", ["agxir/ccore.c"], extra_compile_args=["-O2"],
                             optional=True)])
