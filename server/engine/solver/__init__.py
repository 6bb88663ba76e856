"""The solver: proves deals solvable, with the winning command list as the proof (issue 3).

Pure (no I/O, no clock of its own). :func:`solve` answers ``solved`` (with
moves replayed through the engine), ``unsolvable`` (search exhausted) or
``unknown`` (budget spent). :func:`can_progress` answers the dead-game
question (RULES.md section 5) on the same fast path. :func:`find_solution` is a
short incomplete search for finding solvable deals among random seeds.
"""

from .progress import can_progress
from .search import Budget, Result, find_solution, solve

__all__ = ["Budget", "Result", "can_progress", "find_solution", "solve"]
