"""The build of agxir's compiled core (agxir/ccore.c); everything else is in pyproject.toml.

`pip install -e .` compiles it in place; agxir.native says whether it is there, and without
it agxir runs its pure-Python references (same results, slower).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("agxir.ccore", ["agxir/ccore.c"], extra_compile_args=["-O2"])])
