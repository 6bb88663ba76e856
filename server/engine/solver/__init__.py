"""The solver: proves deals solvable, with the winning command list as the proof (issue 3).

Pure (no I/O, no clock of its own). :func:`solve` answers ``solved`` (with
moves replayed through the engine), ``unsolvable`` (search exhausted) or
``unknown`` (budget spent). :func:`can_progress` answers the dead-game
question (RULES.md section 5) on the same fast path.
"""

from .progress import can_progress
from .search import Budget, Result, solve

__all__ = ["Budget", "Result", "can_progress", "solve"]
