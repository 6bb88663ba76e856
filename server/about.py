"""What this installation is: its version and which optional C paths it runs.

Read by the three commands' ``--version``, the server's first log lines and
the ``ftr_build_info`` metric, so all of them say the same thing.
"""

from __future__ import annotations

import importlib
from importlib import metadata

DISTRIBUTION = "forty-thieves-race"
"""The distribution's name in ``pyproject.toml``."""

C_PATHS = {"engine": "server.engine._cengine", "solver": "server.engine.solver._csolver"}
"""The optional C extensions (``pyproject.toml``'s ``ext-modules``, built when a compiler is there), by the
name a log line or a metric label gives them: ``engine`` (the move listing, the redacted views), ``solver``
(the search)."""


def version() -> str:
    """The installed distribution's version (``"0.1.0"``), or ``"unknown"`` when the code runs from a folder
    that was never installed."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


def c_paths(pure_solver: bool = False) -> dict[str, bool]:
    """Which C paths run: ``{"engine": bool, "solver": bool}``, each true when its extension imports (not only
    when a file is there: one that fails to load falls back to the pure Python, as the engine does).
    ``pure_solver`` (``FTR_SOLVER=python``) turns the solver's off however it was built."""
    found = {}
    for name, module in C_PATHS.items():
        try:
            importlib.import_module(module)
        except ImportError:
            found[name] = False
        else:
            found[name] = True
    if pure_solver:
        found["solver"] = False
    return found


def describe_c_paths(paths: dict[str, bool]) -> str:
    """One phrase for a log line: ``"C paths: engine on, solver off (pure Python)"``."""
    parts = [f"{name} {'on' if on else 'off (pure Python)'}" for name, on in paths.items()]
    return "C paths: " + ", ".join(parts)


def version_line(program: str, pure_solver: bool = False) -> str:
    """What ``PROGRAM --version`` prints: ``"forty-thieves-server 0.1.0 (Python 3.11.7; C paths: ...)"``, the
    solver's C path off under ``pure_solver`` (the server's ``FTR_SOLVER=python``), as :func:`c_paths`."""
    import platform

    return f"{program} {version()} (Python {platform.python_version()}; {describe_c_paths(c_paths(pure_solver))})"
