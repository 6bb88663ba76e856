"""The solver: proves deals solvable, with the winning command list as the proof (issue 3).

Pure (no I/O, no clock of its own). :func:`solve` answers ``solved`` (with
moves replayed through the engine), ``unsolvable`` (search exhausted) or
``unknown`` (budget spent).
"""

from .search import Budget, Result, solve

__all__ = ["Budget", "Result", "solve"]
