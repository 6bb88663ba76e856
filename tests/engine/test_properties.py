"""Property tests of the engine: conservation, legal-move
soundness and completeness, undo, replay determinism, redaction."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.commands import parse_command
from server.engine import (
    Game,
    IllegalCommandError,
    Position,
    apply,
    deal,
    format_position,
    format_view,
    legal_moves,
    parse_position,
    parse_record,
    parse_view,
    redact,
    replay,
)
from server.engine import autoplay as autoplay_of
from server.engine.variants import Variant

from .strategies import played_games, seeds, variants

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def candidate_commands(position: Position, variant: Variant) -> list[str]:
    """Every canonical command string that could possibly apply in ``position``."""
    n, k = variant.columns, variant.slots
    sources = ["w"] + [str(i) for i in range(1, n + 1)] + [f"f{i}" for i in range(1, k + 1)]
    targets = [str(i) for i in range(1, n + 1)] + ["f"] + [f"f{i}" for i in range(1, k + 1)]
    result = ["s", "r", "finish"]
    for s in sources:
        for t in targets:
            if s.startswith("f") and t.startswith("f"):
                continue
            result.append(f"{s}-{t}")
            if s[0].isdigit() and t[0].isdigit() and s != t:
                height = len(position.tableau[int(s) - 1])
                result.extend(f"{s}-{t}x{c}" for c in range(1, height + 2))
    return result


def equivalence_key(position: Position) -> tuple[object, ...]:
    """A position up to the order of foundation slots (RULES.md section 5: slot choice)."""
    return (position.tableau, position.hidden, tuple(sorted(position.foundations)), position.stock, position.waste,
            position.redeals_left)


@SETTINGS
@given(played_games())
def test_every_card_is_in_exactly_one_place(case: tuple[Game, list[str]]) -> None:
    """RULES.md section 1: 52 x decks cards, each copy in exactly one place, after any play."""
    game, _ = case
    counts = game.position.card_counts()
    assert sorted(counts) == list(range(52))
    assert set(counts.values()) == {game.variant.decks}
    assert sum(counts.values()) == game.variant.card_total
    assert len(game.position.tableau) == game.variant.columns
    assert len(game.position.foundations) == game.variant.slots


@SETTINGS
@given(played_games())
def test_legal_moves_are_sound_and_complete(case: tuple[Game, list[str]]) -> None:
    """Every listed command applies and moves the listed number of cards; every
    command that applies is listed or gives the same position as a listed one."""
    game, _ = case
    position, variant = game.position, game.variant
    listed = legal_moves(position, variant)
    texts = [str(m.command) for m in listed]
    assert len(texts) == len(set(texts)), "duplicates in the legal-move list"
    listed_results = set()
    for legal in listed:
        applied = apply(position, variant, legal.command)
        assert applied.cards == legal.cards
        listed_results.add(equivalence_key(applied.position))
    for text in candidate_commands(position, variant):
        try:
            applied = apply(position, variant, parse_command(text))
        except IllegalCommandError:
            assert text not in texts
            continue
        assert text in texts or equivalence_key(applied.position) in listed_results, text


@SETTINGS
@given(played_games(undo="full"), st.integers(1, 5))
def test_undo_restores_the_exact_position(case: tuple[Game, list[str]], depth: int) -> None:
    """RULES.md section 8: each undo returns exactly to the position before the command."""
    game, _ = case
    path = [game.position] + [step.before for step in reversed(game.history)]
    for expected in path[1 : depth + 1]:
        moves = game.moves
        game.play("u")
        assert game.position == expected
        assert game.moves == moves + 1


@SETTINGS
@given(played_games(undo="full"), st.randoms(use_true_random=False))
def test_a_copy_is_independent(case: tuple[Game, list[str]], rng: random.Random) -> None:
    """Game.copy (the server plays a command on a copy, kept once it is stored): any one accepted command,
    undo included, played on the copy leaves the original's position, counters, history and legal moves as
    they were, and the copy ends where the same command played on the original ends."""
    game, _ = case
    legal = game.legal_moves()
    if not legal:
        return
    before = (game.position, game.moves, game.undos, list(game.history))
    command = rng.choice(legal).command
    other = game.copy()
    other.play(command)
    assert (game.position, game.moves, game.undos, list(game.history)) == before
    assert game.legal_moves() == legal
    game.play(command)
    assert (other.position, other.moves, other.undos, other.history) == (
        game.position, game.moves, game.undos, game.history)


@SETTINGS
@given(played_games())
def test_replay_is_deterministic(case: tuple[Game, list[str]]) -> None:
    """A record of the commands replays to the same position, twice identically."""
    game, commands = case
    record = parse_record({
        "format": 1, "variant": game.variant.name, "autoplay": game.autoplay, "undo": game.undo_policy.value,
        "deal": format_position(game.deal), "moves": commands,
    })
    first, second = replay(record), replay(record)
    assert first == second
    assert first.final == game.position
    assert first.moves_counted == game.moves == len(commands)
    assert all(r.ok for r in first.results)


@SETTINGS
@given(played_games())
def test_position_text_round_trips(case: tuple[Game, list[str]]) -> None:
    """RULES.md section 10: formatting is canonical and parsing inverts it."""
    game, _ = case
    text = format_position(game.position)
    assert parse_position(text, game.variant) == game.position
    assert format_position(parse_position(text, game.variant)) == text
    view = redact(game.position)
    view_text = format_view(view)
    assert parse_view(view_text, game.variant) == view
    assert format_view(parse_view(view_text, game.variant)) == view_text
    assert parse_view(text, game.variant) == view


def _hide_differently(position: Position, rng: random.Random) -> Position:
    """The same position with the stock and face-down cards shuffled among their places."""
    places = [("stock", i) for i in range(len(position.stock))]
    places += [(c, i) for c, h in enumerate(position.hidden) for i in range(h)]
    cards = [position.stock[i] if where == "stock" else position.tableau[where][i] for where, i in places]
    rng.shuffle(cards)
    stock = list(position.stock)
    tableau = [list(column) for column in position.tableau]
    for (where, i), card in zip(places, cards):
        if where == "stock":
            stock[i] = card
        else:
            tableau[where][i] = card
    return position._replace(stock=tuple(stock), tableau=tuple(map(tuple, tableau)))


@SETTINGS
@given(variants, seeds, st.randoms(use_true_random=False), st.lists(st.integers(0, 10**6), max_size=80),
       st.sampled_from(["none", "safe", "full"]), st.booleans())
def test_redaction_hides_stock_order_and_face_down_cards(variant: Variant, seed: str, rng: random.Random,
                                                         choices: list[int], undo: str, autoplay: bool) -> None:
    """RULES.md section 8: two deals differing only in hidden places look identical,
    as text and as encoded bytes, and offer the same commands, until a differing
    card is revealed."""
    original = deal(seed, variant)
    other = _hide_differently(original, rng)
    a = Game(original, variant, autoplay=autoplay, undo=undo)
    b = Game(other, variant, autoplay=autoplay, undo=undo)
    for choice in [None, *choices]:
        if choice is not None:
            legal = a.legal_moves()
            if not legal:
                break
            command = legal[choice % len(legal)].command
            a.play(command)
            b.play(command)
        view_a, view_b = format_view(redact(a.position)), format_view(redact(b.position))
        if view_a != view_b:
            # Allowed only right after a card came to light: a draw, a redeal or a flip
            # (on the fresh deal: a flip by the first auto-play).
            if not a.history:
                assert autoplay and (autoplay_of(original, variant).revealed or autoplay_of(other, variant).revealed)
            else:
                last = a.history[-1]
                assert last.command.kind in ("draw", "redeal") or last.revealed or b.history[-1].revealed
            break
        assert view_a.encode() == view_b.encode()
        assert [str(m.command) for m in a.legal_moves()] == [str(m.command) for m in b.legal_moves()]


@st.composite
def endgames(draw: st.DrawFn) -> Position:
    """Classic positions with stock and waste empty and at most ~14 cards left, dealt at random."""
    tops, left = [], []
    for suit in range(4):
        for _ in range(2):
            height = draw(st.integers(10, 13))
            tops.append(suit * 13 + height - 1)
            left.extend(suit * 13 + r for r in range(height, 13))
    order = draw(st.permutations(left))
    cuts = sorted(draw(st.lists(st.integers(0, len(order)), min_size=9, max_size=9)))
    bounds = [0, *cuts, len(order)]
    tableau = tuple(tuple(order[bounds[i]:bounds[i + 1]]) for i in range(10))
    slots = draw(st.permutations(tops))
    return Position(tableau, (0,) * 10, tuple(slots), (), (), 0)


def brute_force_can_clear(position: Position) -> bool:
    """Try every order of top cards onto every slot that takes them (no shortcuts)."""
    seen: set[tuple[object, ...]] = set()

    def clear(heights: tuple[int, ...], tops: tuple[int, ...]) -> bool:
        if not any(heights):
            return True
        if (heights, tops) in seen:
            return False
        seen.add((heights, tops))
        for i, h in enumerate(heights):
            if not h:
                continue
            card = position.tableau[i][h - 1]
            for s, top in enumerate(tops):
                if top == card - 1 and card % 13 and clear(heights[:i] + (h - 1,) + heights[i + 1:],
                                                           tops[:s] + (card,) + tops[s + 1:]):
                    return True
        return False

    return clear(tuple(len(c) for c in position.tableau), tuple(sorted(position.foundations)))


@settings(max_examples=300, deadline=None)
@given(endgames())
def test_finish_is_offered_exactly_when_some_order_clears_the_tableau(position: Position) -> None:
    """RULES.md section 5: finish applies iff some order of top cards clears the tableau;
    checked against a brute-force search over every order and every slot."""
    from server.engine import can_finish, find_variant

    expected = brute_force_can_clear(position)
    assert can_finish(position) == expected
    variant = find_variant("classic")
    if expected:
        assert apply(position, variant, parse_command("finish")).position.is_won
