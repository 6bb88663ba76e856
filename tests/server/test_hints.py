"""Hints from the planner (server/hints.py): the views it is given, its worker side, and the one-look hint
when no worker is free."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

from server.engine import Game, deal, find_variant, redact
from server.engine.planner import plan
from server.hints import decide_hint, planned_hint, seen_views
from server.metrics import default_metrics
from server.scheduler import SolverScheduler
from server.settings import Settings


def _game(commands: tuple[str, ...] = ("s", "s", "s")) -> Game:
    classic = find_variant("classic")
    game = Game(deal("8", classic), classic, undo="full")
    for command in commands:
        game.play(command)
    return game


def test_the_views_seen_are_the_positions_of_the_game_in_order() -> None:
    classic = find_variant("classic")
    game = _game()
    replay = Game(deal("8", classic), classic)
    expected = [redact(replay.position)]
    for command in ("s", "s", "s"):
        replay.play(command)
        expected.append(redact(replay.position))
    assert seen_views(game) == expected
    assert seen_views(Game(deal("8", classic), classic)) == expected[:1]


def test_the_worker_side_is_the_planner_on_the_view() -> None:
    game = _game()
    seen = seen_views(game)
    command = decide_hint(seen[-1], "classic", seen, "club", "k", True, False, seconds=60.0)
    assert command == plan(seen[-1], game.variant, seen=seen, level="club", seed="k").command
    assert command in {str(move.command) for move in game.legal_moves()}


async def test_a_hint_runs_in_a_worker_and_is_none_while_every_worker_is_busy() -> None:
    game = _game()
    with ThreadPoolExecutor(1) as executor:
        solver = SolverScheduler(executor, 1)
        service = SimpleNamespace(solver=solver, settings=Settings(hint_level="club", hint_seconds=30.0),
                                  metrics=default_metrics())
        release = threading.Event()
        busy = asyncio.ensure_future(solver.run("someone", release.wait, 10.0))
        await asyncio.sleep(0.05)
        assert await planned_hint(service, "me", game, "k") is None  # type: ignore[arg-type]
        release.set()
        await busy
        command = await planned_hint(service, "me", game, "k")  # type: ignore[arg-type]
        seen = seen_views(game)
        assert command == plan(seen[-1], game.variant, seen=seen, level="club", seed="k").command
        service.settings = Settings(hint_level="look")
        assert await planned_hint(service, "me", game, "k") is None  # type: ignore[arg-type]
