"""The player-view planner (server/engine/planner.py): it sees only the view (RULES.md section 8), never goes
round in a circle, and its small solver questions agree with the solver's own answers."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.engine import Game, deal, find_variant, redact
from server.engine.planner import LEVELS, Level, find_level, plan
from server.engine.planner import _samples as samples
from server.engine.solver import Budget, find_solution
from server.engine.solver.search import solve as search_solve
from server.engine.solver.search import verdict

from .strategies import played_games
from .test_properties import _hide_differently

TINY = Level("tiny", samples=3, nodes=20, seconds=1.0)
"""A searching level with budgets small enough for the pure search in a test."""


@settings(max_examples=25, deadline=None)
@given(played_games(max_commands=40), st.randoms(use_true_random=False), st.sampled_from([TINY, "casual"]))
def test_the_choice_is_the_same_whatever_the_hidden_order(case: tuple[Game, list[str]], rng: random.Random,
                                                         level: Level | str) -> None:
    game, _ = case
    other = _hide_differently(game.position, rng)
    view = redact(game.position)
    assert redact(other) == view
    first = plan(view, game.variant, level=level, seed="s", autoplay_on=game.autoplay)
    again = plan(redact(other), game.variant, level=level, seed="s", autoplay_on=game.autoplay)
    assert first == again
    legal = {str(m.command) for m in game.legal_moves()}
    assert first.command is None or first.command in legal


def test_samples_deal_the_unseen_cards_and_keep_the_view() -> None:
    classic = find_variant("classic")
    game = Game(deal("8", classic), classic)
    for command in ("s", "s", "s"):
        game.play(command)
    view = redact(game.position)
    drawn = samples(view, classic, [], "x", 5)
    assert len(drawn) == 5 and len({s.stock for s in drawn}) == 5
    for sample in drawn:
        assert redact(sample) == view
        assert sorted(sample.stock) == sorted(game.position.stock)  # the same cards, in their own order


def test_after_a_redeal_the_stock_is_the_waste_the_player_saw() -> None:
    relaxed = find_variant("relaxed")
    game = Game(deal("4", relaxed), relaxed, autoplay=False, undo="none")
    seen = [redact(game.position)]
    while game.position.stock:
        game.play("s")
        seen.append(redact(game.position))
    game.play("r")
    game.play("s")
    view = redact(game.position)
    (only,) = samples(view, relaxed, seen, "x", 5)
    assert only == game.position


@pytest.mark.parametrize(("variant", "level"), [("classic", "club"), ("relaxed", "casual"), ("relaxed", "club"),
                                                ("classic", "casual")])
def test_a_long_game_never_returns_to_a_position_seen(variant: str, level: str) -> None:
    """Followed for up to 250 commands, the planner never undoes the command before it nor comes back to any
    position of the game (the one-look hint alone did: RULES.md section 8's hints must not go round)."""
    chosen = find_level(level)
    if chosen.samples:
        chosen = Level(chosen.name, samples=2, nodes=30, seconds=1.0)
    rules = find_variant(variant)
    game = Game(deal("11", rules), rules, undo="none")
    seen = [redact(game.position)]
    for number in range(250):
        decision = plan(seen[-1], rules, seen=seen, level=chosen, seed=str(number))
        if decision.command is None:
            break
        game.play(decision.command)
        view = redact(game.position)
        assert view not in seen, (number, decision.command)
        seen.append(view)
        if game.is_won:
            break
    assert len(seen) > 60  # the game got somewhere, so the check had positions to compare


def test_levels_are_named_weakest_first() -> None:
    assert [level.name for level in LEVELS] == ["casual", "club", "expert", "strong"]
    assert [level.samples * level.nodes for level in LEVELS] == sorted(level.samples * level.nodes for level in LEVELS)
    with pytest.raises(ValueError, match="casual"):
        find_level("grandmaster")


def test_a_won_game_has_nothing_to_plan() -> None:
    classic = find_variant("classic")
    game = Game(deal("1", classic), classic, undo="none")
    solution = find_solution(game.position, classic, nodes=20_000)
    assert solution.result == "solved"
    for command in solution.moves:
        game.play(command)
    assert plan(redact(game.position), classic).command is None


@pytest.mark.parametrize("seed", ["1", "2", "3", "35", "124"])
def test_verdict_answers_as_the_solver_stages_do(seed: str) -> None:
    """``verdict`` (no replay) against the stage it stands for, with the replay: the same answers; the pure
    search too."""
    classic = find_variant("classic")
    position = deal(seed, classic)
    for nodes in (500, 5_000):
        greedy = find_solution(position, classic, nodes=nodes).result
        complete = search_solve(position, classic, Budget(nodes), portfolio=False).result
        assert verdict(position, classic, nodes) == greedy
        assert verdict(position, classic, nodes, complete=True) == complete
        if nodes == 500:
            assert verdict(position, classic, nodes, pure=True) == greedy
            assert verdict(position, classic, nodes, complete=True, pure=True) == complete
