"""The solver: proves deals solvable, with the winning command list as the proof.

Pure (no I/O, no clock of its own). :func:`solve` answers ``solved`` (with
moves replayed through the engine), ``unsolvable`` (search exhausted) or
``unknown`` (budget spent). :func:`can_progress` answers the dead-game
question (RULES.md section 5) on the same fast path. :func:`find_solution` is a
short incomplete search for finding solvable deals among random seeds.

Each search stage runs in the optional C extension ``_csolver`` when it is
built and the input is supported (:func:`implementation`), else in pure
Python, the reference; ``pure=True`` forces the pure one (the server's
``FTR_SOLVER=python`` and the engine's command line pass it). Both expand
the same nodes in the same order (README.md). With a time cap,
:func:`solve` also asks a relaxed model of the deal (:mod:`.relaxation`,
optional OR-Tools) between a short and a long search (:mod:`.schedule`): no
solution of the relaxation proves ``unsolvable``.
"""

from .progress import can_progress
from .schedule import solve
from .search import Budget, Result, find_solution, implementation

__all__ = ["Budget", "Result", "can_progress", "find_solution", "implementation", "solve"]
