"""Command line of the rules engine: ``python -m server.engine {deal,replay} ...``.

- ``deal --seed S [--variant V] [--redacted]``: the deal's position text.
- ``deal --pysol N [--variant V]``: PySolFC's deal number N.
- ``replay RECORD.json [--json]``: replay a game record; exit 0 when every
  move was legal, 1 when any was not, 2 for a malformed record.
- ``solve (--seed S | --deal FILE) [--variant V] [--autoplay/--no-autoplay]
  [--nodes N] [--timeout SECONDS] [--states N] [--json]``: decide the deal
  (the search, and with ``--timeout`` the relaxation too);
  ``--json`` prints ``{"result", "moves", "autoplay", "nodes", "seconds", "reason"}``.
  Exit 0 for an answer (solved, unsolvable or unknown), 2 for bad input.
  ``FTR_SOLVER=python`` in the environment makes it run the pure search
  where the C search is built (this command line reads it and passes it
  to the solver, which reads no environment).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping

from protocol.errors import NotationError
from server.about import version_line

from .deal import deal
from .record import parse_record
from .replay import replay
from .text import format_position
from .variants import PRESETS, find_variant
from .view import format_view, redact


def _pure_solver(environ: Mapping[str, str]) -> bool:
    """True when ``FTR_SOLVER`` is ``python`` (any case): run the solver's pure search even where the C search
    is built (the server's settings read the same variable the same way, :mod:`server.settings`)."""
    return environ.get("FTR_SOLVER", "").strip().lower() == "python"


def _variant(name: str):  # type: ignore[no-untyped-def]
    try:
        return find_variant(name)
    except NotationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _deal(args: argparse.Namespace) -> int:
    variant = args.variant
    if args.pysol is not None:
        from .pysol import pysol_position

        try:
            position = pysol_position(args.pysol, variant)
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    else:
        position = deal(args.seed, variant)
    print(format_view(redact(position)) if args.redacted else format_position(position))
    return 0


def _replay(args: argparse.Namespace) -> int:
    try:
        with open(args.record, "rb") as handle:
            record = parse_record(handle.read())
    except OSError as error:
        print(f"error: cannot read {args.record}: {error.strerror}", file=sys.stderr)
        return 2
    except NotationError as error:
        print(f"error: malformed record {args.record}: {error}", file=sys.stderr)
        return 2
    result = replay(record)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        width = max((len(r.move) for r in result.results), default=1)
        for r in result.results:
            verdict = "ok" if r.ok else f"refused: {r.reason}"
            print(f"{r.i:4d}  {r.move:<{width}}  {verdict}")
        print(f"moves counted: {result.moves_counted}, status: {result.status}")
        print(format_position(result.final))
    return 0 if result.all_legal else 1


def _solve(args: argparse.Namespace) -> int:
    import time

    from .solver import Budget, solve
    from .text import parse_position

    variant = args.variant
    if args.deal is not None:
        try:
            with open(args.deal, encoding="utf-8") as handle:
                position = parse_position(handle.read(), variant)
        except OSError as error:
            print(f"error: cannot read {args.deal}: {error.strerror}", file=sys.stderr)
            return 2
        except NotationError as error:
            print(f"error: malformed position {args.deal}: {error}", file=sys.stderr)
            return 2
    else:
        position = deal(args.seed, variant)
    started = time.monotonic()
    result = solve(position, variant, Budget(nodes=args.nodes, seconds=args.timeout, states=args.states),
                   autoplay_on=args.autoplay, clock=time.monotonic, pure=_pure_solver(os.environ))
    seconds = round(time.monotonic() - started, 3)
    if args.json:
        print(json.dumps({"result": result.result, "moves": list(result.moves), "autoplay": result.autoplay,
                          "nodes": result.nodes, "seconds": seconds, "reason": result.reason}))
    else:
        reason = result.reason or f"{len(result.moves)} commands"
        if result.reason == "state memory bound reached":
            reason += f" (--states {args.states})"
        print(f"{result.result} ({reason}), "
              f"{result.nodes} nodes, {result.states} states, {seconds} s, {result.solver} search")
        if result.moves:
            print(" ".join(result.moves))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the engine's command line; returns the exit status."""
    # One name whichever way it was started (the installed command or ``python -m server.engine``): the one a
    # user of the installed package types. The raw formatter prints the version line as it is: the default one
    # fills it to the terminal's width, and without the C paths the line is longer than 80 columns.
    parser = argparse.ArgumentParser(prog="forty-thieves-engine", description="Forty Thieves rules engine",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=version_line("forty-thieves-engine"))
    sub = parser.add_subparsers(dest="command", required=True)
    p_deal = sub.add_parser("deal", help="print a deal's position text")
    source = p_deal.add_mutually_exclusive_group(required=True)
    source.add_argument("--seed", help="any string; game numbers are decimal strings")
    source.add_argument("--pysol", type=int, metavar="N", help="PySolFC's deal number N")
    p_deal.add_argument("--variant", type=_variant, default=PRESETS["classic"], help=f"one of {', '.join(PRESETS)}")
    p_deal.add_argument("--redacted", action="store_true", help="print what a player sees")
    p_deal.set_defaults(run=_deal)
    p_replay = sub.add_parser("replay", help="replay a game record (RULES.md section 10)")
    p_replay.add_argument("record", help="path of the JSON game record")
    p_replay.add_argument("--json", action="store_true", help="print one JSON object")
    p_replay.set_defaults(run=_replay)
    p_solve = sub.add_parser("solve", help="search for a win, knowing the whole deal (RULES.md section 9)")
    source = p_solve.add_mutually_exclusive_group(required=True)
    source.add_argument("--seed", help="any string; game numbers are decimal strings")
    source.add_argument("--deal", metavar="FILE", help="a file holding position text (RULES.md section 10)")
    p_solve.add_argument("--variant", type=_variant, default=PRESETS["classic"], help=f"one of {', '.join(PRESETS)}")
    p_solve.add_argument("--autoplay", action=argparse.BooleanOptionalAction, default=True,
                         help="the game's auto-play setting the moves are for (default on)")
    p_solve.add_argument("--nodes", type=int, default=200_000, help="node budget (default 200000)")
    p_solve.add_argument("--timeout", type=float, default=None, metavar="SECONDS", help="wall-clock cap")
    from .solver.search import Budget  # the solver's own default state bound

    states = Budget().states
    p_solve.add_argument("--states", type=int, default=states, metavar="N",
                         help=f"the most states the search keeps (its memory bound: about 110 bytes each in the C"
                              f" search, 1 KB in the pure one); reaching it ends the search with unknown"
                              f" (default {states})")
    p_solve.add_argument("--json", action="store_true", help="print one JSON object")
    p_solve.set_defaults(run=_solve)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except BrokenPipeError:  # the reader left early (``... deal --seed 1 | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush must not fail again
        return 1


if __name__ == "__main__":
    sys.exit(main())
