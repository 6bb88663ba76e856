"""Build hook for the optional C accelerator of the solver (issue 3).

Everything else is declared in pyproject.toml. The extension is optional:
without a C compiler ``pip install`` still succeeds and the solver runs its
pure-Python search (server/engine/solver/README.md).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "server.engine.solver._csolver",
            ["server/engine/solver/_csolver.c"],
            optional=True,
            extra_compile_args=["-O2", "-std=c99", "-Wall", "-Wextra", "-Wno-unused-parameter"],
        )
    ]
)
