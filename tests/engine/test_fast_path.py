"""The engine's optional C hot path (server/engine/_cengine.c) against the pure Python reference.

``rules.legal_moves``, ``rules.apply``, ``rules.autoplay`` and ``view.redact`` run part of their work in C when the extension
is built; with ``pure=True`` they run the Python alone, the reference. Here both give the same legal list,
the same auto-play and the same view, and ``Game.play_listed`` (apply, auto-play and the next legal list fused in one
C call) the same games as ``Game.play`` and ``Game.legal_moves``, on random positions of every preset: positions reached by random play (undo, redeals,
draws, auto-play on and off) and random hand-made positions that play rarely reaches (long runs, several
empty columns with a run to move into them, face-down cards in every variant, an empty stock with the
waste, endgames where finish applies). ``tests/benchmarks/move_cost_bench.py --check`` runs the same
comparison on the benchmark's tens of thousands of positions.
"""

from __future__ import annotations

import random

import msgspec
import pytest

from protocol import messages as m
from protocol.codec import encode
from protocol.commands import DRAW, FINISH, REDEAL, Command, Pile
from server.engine import PRESETS, Game, Position, Variant, apply, deal, legal_moves, redact, rules
from server.engine.errors import IllegalCommandError
from server.engine.position import EMPTY_SLOT
from server.engine.rules import Applied, _c_table, _fits, autoplay, play_op
from server.views import _CARD_FRAMES, _CARD_TEXTS, _SLOT_FRAMES, _SLOT_TEXTS, position_frame, view_message

_cengine = pytest.importorskip("server.engine._cengine", reason="the C extension is not built")

FOUNDATION_TO_COLUMN = Variant("foundation_to_column_test", foundation_to_column=True, redeals=2)
"""No preset lets cards come down from the foundations; the listing's order around those moves is checked too."""

VARIANTS = [*PRESETS.values(), FOUNDATION_TO_COLUMN]


def random_position(variant: Variant, rng: random.Random) -> Position:
    """A random valid position of ``variant`` (every card once per deck, somewhere).

    Foundation slots get random heights (slot i holds suit i mod 4), each column is empty (often), random
    cards, or random cards under a run built down by the variant's rule (up to a whole king-to-ace run),
    with a random count of face-down cards under it; the rest is split between stock and waste, now and
    then all of it in the waste or the tableau (no stock: redeal, finish).
    """
    endgame = rng.random() < 0.15
    pool = [code for code in range(52) for _ in range(variant.decks)]
    foundations = []
    for slot in range(variant.slots):
        suit = slot % 4
        height = rng.choice([0, 0, 1, 3, 6, 9, 12, 13]) if not endgame else rng.randint(9, 13)
        for rank in range(height):
            pool.remove(suit * 13 + rank)
        foundations.append(suit * 13 + height - 1 if height else EMPTY_SLOT)
    rng.shuffle(pool)
    table = variant.builds_on
    tableau, hidden = [], []
    for _ in range(variant.columns):
        column: list[int] = []
        if pool and rng.random() > 0.25:
            column = [pool.pop() for _ in range(min(len(pool), rng.randint(0, 4 if endgame else 7)))]
            if rng.random() < 0.5 and pool:
                run = [column.pop() if column else pool.pop()]
                while len(run) < rng.randint(1, 13):
                    fitting = [c for c in pool if c in table[run[-1]]]
                    if not fitting:
                        break
                    card = rng.choice(fitting)
                    pool.remove(card)
                    run.append(card)
                column += run
        tableau.append(tuple(column))
        hidden.append(rng.randint(0, len(column) - 1) if column and rng.random() < 0.4 and not endgame else 0)
    if endgame:
        while pool:  # every card in the tableau: finish may apply
            tableau[rng.randrange(variant.columns)] += (pool.pop(),)
    split = rng.choice([0, len(pool), rng.randint(0, len(pool))])
    stock, waste = tuple(pool[:split]), tuple(pool[split:])
    return Position(tuple(tableau), tuple(hidden), tuple(foundations), stock, waste,
                    rng.randint(0, variant.redeals))


def played_positions(variant: Variant, rng: random.Random, games: int, commands: int) -> list[tuple[Position, list]]:
    """Positions of random legal play (undo now and then), each with the game's legal list there."""
    out = []
    for g in range(games):
        game = Game(deal(str(rng.randrange(10**6)), variant), variant, autoplay=g % 4 != 3,
                    undo=("full", "safe", "none")[g % 3])
        for _ in range(commands):
            legal = game.legal_moves()
            out.append((game.position, legal))
            if not legal:
                break
            undos = [m for m in legal if m.command.kind == "undo"]
            move = undos[0] if undos and rng.random() < 0.1 else rng.choice(legal)
            game.play(move.command)
    return out


def assert_same(position: Position, variant: Variant) -> list:
    fast = legal_moves(position, variant)
    assert fast == legal_moves(position, variant, pure=True), position
    assert redact(position) == redact(position, pure=True), position
    assert_same_view(position)
    return fast


def assert_same_view(position: Position) -> None:
    """The wire view of the C path and of the reference are equal, and so are the frames that carry them."""
    fast, reference = view_message(position), view_message(position, pure=True)
    assert fast == reference, position
    frame = m.PositionReply(7, "1-2", fast, [], 3, 0, position.foundation_cards, "playing", 1234)
    assert encode(frame) == encode(msgspec.structs.replace(frame, view=reference)), position


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_the_c_path_lists_the_same_moves_and_view_on_random_positions(variant: Variant) -> None:
    rng = random.Random(f"fast-path {variant.name}")
    listed = 0
    kinds: set[str] = set()
    for _ in range(300):
        position = random_position(variant, rng)
        moves = assert_same(position, variant)
        listed += len(moves)
        for move in moves:
            command = move.command
            kinds.add(command.kind if command.kind != "move" else
                      f"{command.source.kind}-{command.target.kind}{'-count' if command.count else ''}")
            apply(position, variant, command)  # every listed move is accepted by the checked path
    # The random positions reach every kind of move the variant has (so the comparison covers them).
    expected = {"column-column", "column-foundation", "waste-column", "waste-foundation", "draw", "finish"}
    if variant.move_rule.value != "single":
        expected.add("column-column-count")
    if variant.redeals:
        expected.add("redeal")
    if variant.foundation_to_column:
        expected.add("foundation-column")
    assert expected <= kinds, expected - kinds
    assert listed > 300


@pytest.mark.parametrize("variant", list(PRESETS.values()), ids=lambda v: v.name)
def test_the_c_path_gives_the_same_legal_lists_and_views_in_played_games(variant: Variant) -> None:
    rng = random.Random(f"fast-path games {variant.name}")
    for position, legal in played_positions(variant, rng, games=6, commands=40):
        assert [move for move in legal if move.command.kind != "undo"] == legal_moves(position, variant, pure=True)
        assert redact(position) == redact(position, pure=True)
        assert_same_view(position)


def test_the_c_listing_declines_what_it_does_not_handle() -> None:
    """A malformed tableau makes the C listing answer None (the caller lists in Python), never a wrong list."""
    variant = PRESETS["classic"]
    position = random_position(variant, random.Random(1))
    table, fits = _c_table(10), b"\1" * 52 * 52

    def c(tableau: tuple, hidden: tuple) -> object:
        return _cengine.column_moves(tableau, hidden, position.foundations, position.waste, fits, 1, 1, table)

    assert c(position.tableau, position.hidden) is not None
    assert c(((52,),) + position.tableau[1:], position.hidden) is None  # no card code 52
    assert c(((-1,),) + position.tableau[1:], position.hidden) is None
    assert c(((1, 2),) + position.tableau[1:], (3,) + position.hidden[1:]) is None  # more face down than cards
    assert c(([1],) + position.tableau[1:], position.hidden) is None  # a list, not a tuple
    assert _cengine.visible_columns(((1, 2),), (3,)) is None
    assert _cengine.visible_columns(((1, 2), (3,)), (1, 0)) == ((2,), (3,))


# (tableau, hidden, foundations, waste) the C view builders must decline (None: the Python runs), each a way of
# showing a card it should not: more face down than cards, a negative count, no card code 52, no slot top 52 or
# -2, a waste card 52, a list where a tuple belongs, counts for fewer columns.
MALFORMED_VIEWS = [
    (((0, 1),), (3,), (-1,), ()), (((0, 1),), (-1,), (-1,), ()), (((0, 52),), (0,), (-1,), ()),
    (((0,),), (0,), (52,), ()), (((0,),), (0,), (-2,), ()), (((0,),), (0,), (-1,), (52,)),
    (([0],), (0,), (-1,), ()), (((0,), (1,)), (0,), (-1,), ()),
]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_the_c_view_gives_the_same_wire_view_and_frame_on_thousands_of_positions(variant: Variant) -> None:
    rng = random.Random(f"fast-path view {variant.name}")
    hidden = 0
    for _ in range(2000):
        position = random_position(variant, rng)
        assert_same_view(position)
        hidden += any(position.hidden)
    assert hidden > 500  # many of them with face-down cards to leave out


def test_the_c_view_declines_what_it_does_not_handle() -> None:
    """A malformed position makes the C view answer None (view_message then redacts in Python), never a view
    that could show a card it should not: a face-down count past the column, a code that is no card."""
    def c(tableau: tuple, hidden: tuple, foundations: tuple = (-1,), waste: tuple = ()) -> object:
        return _cengine.view_texts(tableau, hidden, foundations, waste, _CARD_TEXTS, _SLOT_TEXTS)

    # Codes 0, 13, 26: the aces of clubs, diamonds, hearts (protocol.cards); 12 the king of clubs, 51 of spades.
    assert c(((0, 13, 26),), (2,), (12, -1), (51,)) == ([["AH"]], [2], ["KC", "-"], ["KS"])
    for malformed in MALFORMED_VIEWS:
        assert c(*malformed) is None, malformed


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_the_c_autoplay_moves_the_same_cards_on_thousands_of_positions(variant: Variant) -> None:
    """Auto-play with the C search of the next card equals the pure search: the same position after it, the
    same moves in the same order, the same face-down card turned up or not."""
    rng = random.Random(f"fast-path autoplay {variant.name}")
    moved = from_waste = revealed = 0
    for _ in range(2000):
        position = random_position(variant, rng)
        fast = autoplay(position, variant)
        assert fast == autoplay(position, variant, pure=True), position
        moved += bool(fast.moves)
        from_waste += any(source == 0 for source, _ in fast.moves)
        revealed += fast.revealed
    # Enough of them move cards, from the waste and the columns, and turn cards up, to compare those paths.
    assert moved > 200 and from_waste > 20 and revealed > 20, (moved, from_waste, revealed)


@pytest.mark.parametrize("variant", list(PRESETS.values()), ids=lambda v: v.name)
def test_the_c_autoplay_plays_the_same_games(variant: Variant) -> None:
    """Whole games with auto-play on (C) replayed on the pure auto-play reach the same positions."""
    rng = random.Random(f"fast-path autoplay games {variant.name}")
    for g in range(6):
        start = deal(str(rng.randrange(10**6)), variant)
        assert autoplay(start, variant) == autoplay(start, variant, pure=True)
        position = autoplay(start, variant).position
        for _ in range(60):
            legal = legal_moves(position, variant)
            if not legal:
                break
            applied = apply(position, variant, rng.choice(legal).command).position
            fast = autoplay(applied, variant)
            assert fast == autoplay(applied, variant, pure=True), applied
            position = fast.position


def test_the_c_autoplay_declines_what_it_does_not_handle() -> None:
    """A malformed position makes the C search answer None (auto-play then searches in Python), never a move."""
    fits = _fits(PRESETS["classic"])

    def c(tableau: tuple, foundations: tuple = (-1,), waste: tuple = ()) -> object:
        return _cengine.autoplay_next(tableau, foundations, waste, fits, 2)

    # Codes 0 and 13: the aces of clubs and diamonds; 1 the two of clubs.
    assert c(((5, 0),)) == 1 * 64 + 0  # column 1's ace to slot 1
    assert c(((5,),), (-1,), (13,)) == 0  # the waste's ace first
    assert c(((5, 1),), (12, 0)) == 1 * 64 + 1  # the two onto its ace, in slot 2
    assert c(((5,),), (0,)) == -1
    assert c(((52,),)) is None  # no card code 52
    assert c(((-1,),)) is None
    assert c(((0,),), (52,)) is None  # no slot top 52
    assert c(((0,),), (-2,)) is None
    assert c(((0,),), (-1,), (52,)) is None
    assert c(([0],)) is None  # a list, not a tuple
    with pytest.raises(ValueError, match="52"):
        _cengine.autoplay_next(((0,),), (-1,), (), b"", 2)


def assert_same_frame(position: Position, variant: Variant, rng: random.Random) -> bytes:
    """The C reply frame and the reference's (the message built, then encoded by msgspec) are the same bytes,
    with counters of every msgpack int width and commands of every str length."""
    legal = legal_moves(position, variant)
    seq, moves, undos, found, time_ms = (rng.choice([0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32,
                                                     rng.randrange(2**40)]) for _ in range(5))
    command = rng.choice(["s", "1-2", "10-3x4", "w-f", "u", "", "x" * 31, "y" * 32, "z" * 255, "q" * 256,
                          "\u00e9" * 20, "\u2660" * 40])
    status = rng.choice(["playing", "won", "dead"])
    fast = position_frame(seq, command, position, legal, moves, undos, found, status, time_ms)
    reference = position_frame(seq, command, position, legal, moves, undos, found, status, time_ms, pure=True)
    assert fast == reference, position
    return fast


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_the_c_reply_frame_is_msgspecs_bytes_on_thousands_of_positions(variant: Variant) -> None:
    rng = random.Random(f"fast-path frame {variant.name}")
    hidden = long_legal = 0
    for _ in range(2000):
        position = random_position(variant, rng)
        assert_same_frame(position, variant, rng)
        hidden += any(position.hidden)
        long_legal += len(legal_moves(position, variant)) > 15
    assert hidden > 500 and long_legal > 50, (hidden, long_legal)  # face-down cards left out; array16 lists


@pytest.mark.parametrize("variant", list(PRESETS.values()), ids=lambda v: v.name)
def test_the_c_reply_frame_is_msgspecs_bytes_in_played_games(variant: Variant) -> None:
    rng = random.Random(f"fast-path frame games {variant.name}")
    for position, _ in played_positions(variant, rng, games=6, commands=40):
        assert_same_frame(position, variant, rng)


def test_the_c_reply_frame_writes_long_columns_and_wide_tableaux() -> None:
    """Columns of more than 15 face-up cards and more than 15 columns (msgpack's array16 headers)."""
    variant = Variant("wide_test", columns=20, decks=2)
    rng = random.Random(3)
    pool = [code for code in range(52) for _ in range(2)]
    rng.shuffle(pool)
    tableau = (tuple(pool[:30]),) + tuple((pool[30 + i],) for i in range(19))
    position = Position(tableau, (5,) + (0,) * 19, (-1,) * 8, tuple(pool[49:90]), tuple(pool[90:]), 0)
    assert len(position.tableau[0]) - position.hidden[0] > 15
    frame = assert_same_frame(position, variant, rng)
    assert msgspec.msgpack.decode(frame)["view"]["tableau"][0] == [_CARD_TEXTS[c] for c in pool[5:30]]


def test_the_c_reply_frame_declines_what_it_does_not_handle() -> None:
    """A malformed position makes the C frame answer None (the reply is then built and encoded in Python),
    never a frame that could show a card it should not."""
    def c(tableau: tuple, hidden: tuple, foundations: tuple = (-1,), waste: tuple = ()) -> object:
        return _cengine.position_frame(1, "s", tableau, hidden, foundations, 0, waste, 0, [], {}, 1, 0, 0, "playing", 5,
                                       _CARD_FRAMES, _SLOT_FRAMES)

    frame = c(((0, 13, 26),), (2,), (12, -1), (51,))
    assert isinstance(frame, bytes)
    view = msgspec.msgpack.decode(frame)["view"]
    assert view == {"tableau": [["AH"]], "hidden": [2], "foundations": ["KC", "-"], "stock": 0, "waste": ["KS"],
                    "redeals_left": 0}
    for malformed in MALFORMED_VIEWS:
        assert c(*malformed) is None, malformed

    def legal(moves: list, commands: dict) -> object:
        return _cengine.position_frame(1, "s", ((0,),), (0,), (-1,), 0, (), 0, moves, commands, 1, 0, 0, "playing", 5,
                                       _CARD_FRAMES, _SLOT_FRAMES)

    draw = legal_moves(Position(((0,),), (0,), (-1,), (1,), (), 0), PRESETS["classic"])[-1]
    assert str(draw.command) == "s"
    assert legal([draw], {}) is None  # a command it has not met: the caller adds it and asks again
    frame = legal([draw], {id(draw.command): (draw.command, encode("s"))})  # type: ignore[arg-type]
    assert isinstance(frame, bytes) and msgspec.msgpack.decode(frame)["legal"] == [["s", 1]]
    assert legal([("not a pair",)], {}) is None
    with pytest.raises(TypeError):  # an entry that is not (command, its encoded text)
        legal([draw], {id(draw.command): (draw.command, "s")})
    with pytest.raises(TypeError):
        legal([draw], {id(draw.command): (object(), encode("s"))})  # type: ignore[arg-type]


def random_command(variant: Variant, rng: random.Random) -> Command:
    """Any command of the notation's shapes, legal or not, columns and slots out of range now and then."""
    kind = rng.random()
    if kind < 0.1:
        return rng.choice([DRAW, REDEAL, FINISH])
    column = Pile("column", rng.randint(0, variant.columns + 1))
    slot = Pile("foundation", rng.randint(0, variant.slots + 1) if rng.random() < 0.3 else 0)
    source, target = rng.choice([(column, Pile("column", rng.randint(1, variant.columns))), (column, slot),
                                 (Pile("waste", 0), column), (Pile("waste", 0), slot),
                                 (Pile("foundation", rng.randint(1, variant.slots)), column)])
    count = rng.choice([None, None, rng.randint(1, 14)]) if source.kind == target.kind == "column" else None
    return Command("move", source, target, count)


def assert_same_apply(position: Position, variant: Variant, command: Command) -> Applied | None:
    """The C apply and the reference give the same result, or the same refusal (its error and its words)."""
    try:
        reference = apply(position, variant, command, pure=True)
    except IllegalCommandError as error:
        with pytest.raises(IllegalCommandError) as raised:
            apply(position, variant, command)
        assert (raised.value.code, str(raised.value)) == (error.code, str(error)), (position, command)
        return None
    fast = apply(position, variant, command)
    assert fast == reference and type(fast) is Applied and type(fast.position) is Position, (position, command)
    return fast


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_the_c_apply_gives_the_same_results_and_refusals_on_thousands_of_positions(variant: Variant) -> None:
    """Every listed move and random commands (most refused) on random positions: the same position, cards and
    face-down card turned up, or the same error."""
    rng = random.Random(f"fast-path apply {variant.name}")
    applied = refused = revealed = 0
    for _ in range(1000):
        position = random_position(variant, rng)
        for move in legal_moves(position, variant):
            result = assert_same_apply(position, variant, move.command)
            assert result is not None
            applied += 1
            revealed += result.revealed
        for _ in range(5):
            refused += assert_same_apply(position, variant, random_command(variant, rng)) is None
    assert applied > 3000 and refused > 1000 and revealed > 100, (applied, refused, revealed)


@pytest.mark.parametrize("variant", list(PRESETS.values()), ids=lambda v: v.name)
def test_the_c_apply_plays_the_same_games(variant: Variant) -> None:
    rng = random.Random(f"fast-path apply games {variant.name}")
    for position, legal in played_positions(variant, rng, games=6, commands=40):
        for move in legal:
            if move.command.kind != "undo":
                assert assert_same_apply(position, variant, move.command) is not None


def test_the_c_apply_declines_what_it_does_not_handle() -> None:
    """The C apply answers None for what it does not apply (the Python then applies or refuses it), never a
    wrong position: a refused move, a column out of range, a malformed position."""
    variant = PRESETS["classic"]
    fits = _fits(variant)

    def c(tableau: tuple, hidden: tuple, op: int, source: int, target: int, count: int = -1,
          foundations: tuple = (-1,) * 8, stock: tuple = (), waste: tuple = (), columns: int = 2) -> object:
        return _cengine.apply_move(Position, Applied, tableau, hidden, foundations, stock, waste, 0, op, source, target,
                                   count, fits, columns, 1, 1)

    # Codes 0, 1, 2: the ace, two and three of clubs; 15 the three of diamonds (classic builds down in suit).
    assert c(((5, 1), (2,)), (1, 0), 0, 1, 2) == Applied(Position(((5,), (2, 1)), (0, 0), (-1,) * 8, (), (), 0), 1, True)
    assert c(((5, 1), (15,)), (1, 0), 0, 1, 2) is None  # the two of clubs does not go on a diamond
    assert c(((5, 1), (2,)), (1, 0), 0, 1, 1) is None  # onto itself
    assert c(((5, 1), (2,)), (1, 0), 0, 1, 3) is None  # no column 3
    assert c(((5, 0), ()), (1, 0), 1, 1, 0) == Applied(
        Position(((5,), ()), (0, 0), (0,) + (-1,) * 7, (), (), 0), 1, True)
    assert c(((5, 2), ()), (1, 0), 1, 1, 0) is None  # no slot takes a three
    assert c(((5,), ()), (0, 0), 4, 0, 0, stock=(7, 8)) == Applied(Position(((5,), ()), (0, 0), (-1,) * 8, (8,), (7,), 0), 1, False)
    assert c(((5,), ()), (0, 0), 4, 0, 0) is None  # the stock is empty
    assert c(((5, 52), ()), (0, 0), 0, 1, 2) is None  # no card code 52
    assert c(((5,), ()), (2, 0), 0, 1, 2) is None  # more face down than cards
    assert c(((5,), ()), (0, 0), 0, 1, 2, columns=3) is None  # not the variant's column count
    assert c(((5,), ()), (0, 0), 9, 1, 2) is None  # an op it does not know


def reference_play_listed(position: Position, variant: Variant, command: Command,
                          autoplay_on: bool) -> tuple[Position, int, int, bool, list]:
    """What ``play_listed`` stands for, by the pure Python alone: apply, auto-play, the legal list (no undo)."""
    applied = apply(position, variant, command, pure=True)
    after, autoplayed, revealed = applied.position, 0, applied.revealed
    if autoplay_on:
        auto = autoplay(after, variant, pure=True)
        after, autoplayed, revealed = auto.position, len(auto.moves), revealed or auto.revealed
    return after, applied.cards, autoplayed, revealed, legal_moves(after, variant, pure=True)


def assert_same_play_listed(game: Game, text: str) -> bool:
    """``Game.play_listed`` against :meth:`Game.play` then :meth:`Game.legal_moves` on a copy, and the fused C
    (when it takes the command) against the pure reference: the same outcome, position, history and list, or the
    same refusal. True when the command was accepted."""
    reference = game.copy()
    try:
        outcome, legal = reference.play(text), reference.legal_moves()
    except ValueError as error:  # NotationError and IllegalCommandError are ValueErrors
        before = (game.position, game.moves, game.undos, game.history)
        with pytest.raises(type(error)) as raised:
            game.play_listed(text)
        assert str(raised.value) == str(error), text
        assert (game.position, game.moves, game.undos, game.history) == before, text  # nothing changed
        return False
    before = game.position
    op = play_op(text)
    fused = rules.play_listed(before, game.variant, op, game.autoplay) if op is not None else None
    assert game.play_listed(text) == (outcome, legal), (before, text)
    assert (game.position, game.moves, game.undos, game.history) == (
        reference.position, reference.moves, reference.undos, reference.history)
    if fused is not None:
        after, cards, autoplayed, revealed, listed = fused
        expected = reference_play_listed(before, game.variant, op[0], game.autoplay)
        assert (after, cards, autoplayed, revealed) == expected[:4], (before, text)
        assert type(after) is Position
        assert listed is None or listed == expected[4], (before, text)
    return True


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_the_fused_play_gives_the_same_games_and_lists_on_thousands_of_positions(variant: Variant) -> None:
    """Every listed move and random commands (most refused) from random positions, auto-play on and off, every
    undo policy: the fused apply, auto-play and listing (``Game.play_listed``) as the reference plays them."""
    rng = random.Random(f"fast-path fused {variant.name}")
    accepted = refused = autoplayed = left_to_python = 0
    positions = 250 if variant.decks == 2 else 60  # three decks: the reference's finish search is slow
    for i in range(positions):
        position = random_position(variant, rng)
        game = Game(position, variant, autoplay=i % 3 != 2, undo=("full", "safe", "none")[i % 3])
        texts = [str(move.command) for move in game.legal_moves()]
        texts += [str(random_command(variant, rng)) for _ in range(3)]
        for text in texts:
            copy = game.copy()
            if assert_same_play_listed(copy, text):
                accepted += 1
                autoplayed += copy.history[-1].autoplayed > 0 if copy.history else 0
                op = play_op(text)
                fused = op and rules.play_listed(game.position, variant, op, game.autoplay)
                left_to_python += bool(fused) and fused[4] is None
            else:
                refused += 1
    assert accepted > 4 * positions and refused > positions and autoplayed > positions / 10 and (
        left_to_python > positions / 20), (accepted, refused, autoplayed, left_to_python)


@pytest.mark.parametrize("variant", list(PRESETS.values()), ids=lambda v: v.name)
def test_the_fused_play_plays_the_same_games(variant: Variant) -> None:
    """Random legal games (undo now and then) played with ``play_listed`` and with ``play``: the same at every step."""
    rng = random.Random(f"fast-path fused games {variant.name}")
    for g in range(6):
        game = Game(deal(str(rng.randrange(10**6)), variant), variant, autoplay=g % 4 != 3,
                    undo=("full", "safe", "none")[g % 3])
        legal = game.legal_moves()
        for _ in range(60):
            if not legal:
                break
            undos = [move for move in legal if move.command.kind == "undo"]
            move = undos[0] if undos and rng.random() < 0.1 else rng.choice(legal)
            assert assert_same_play_listed(game.copy(), str(move.command))
            legal = game.play_listed(str(move.command))[1]


def test_the_fused_play_declines_what_it_does_not_handle(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fused C answers None for a refused command or a malformed position (the Python then plays or refuses
    it), leaves the listing to the Python where a redeal or a finish may be legal, and the game plays the same
    without it."""
    classic, relaxed = PRESETS["classic"], PRESETS["relaxed"]
    one = Position(((5, 1), (2,)) + ((),) * 8, (1, 0) + (0,) * 8, (-1,) * 8, (7,), (), 0)
    after, cards, autoplayed, revealed, legal = rules.play_listed(one, classic, play_op("1-2"), False)
    assert (after.tableau[:2], after.hidden[:2], cards, autoplayed, revealed) == (((5,), (2, 1)), (0, 0), 1, 0, True)
    assert legal == legal_moves(after, classic, pure=True) and str(legal[-1].command) == "s"
    assert rules.play_listed(one, classic, play_op("2-1"), False) is None  # the three does not go on the two
    assert rules.play_listed(one, classic, play_op("1-11"), False) is None  # no column 11
    assert rules.play_listed(one._replace(stock=()), classic, play_op("s"), False) is None  # nothing to draw
    malformed = one._replace(tableau=((5, 52),) + one.tableau[1:])
    assert rules.play_listed(malformed, classic, play_op("1-2"), False) is None  # no card code 52
    wide = one._replace(tableau=one.tableau + ((),), hidden=one.hidden + (0,))
    assert rules.play_listed(wide, classic, play_op("1-11"), False) is None  # not the variant's 10 columns
    huge = one._replace(tableau=((5, 0),) + one.tableau[1:], hidden=(2**70,) + one.hidden[1:])
    assert rules.play_listed(huge, classic, play_op("s"), True) is None  # a count no position has: declined
    assert play_op("u") is None and play_op("r") is None and play_op("f") is None and play_op("1-") is None
    # An empty stock with the waste and a redeal left: the Python lists the rest (the redeal among it).
    waste_left = one._replace(stock=(), waste=(7, 8), redeals_left=1)
    assert rules.play_listed(waste_left, relaxed, play_op("1-2"), False)[4] is None
    assert rules.play_listed(waste_left, classic, play_op("1-2"), False)[4] is not None  # classic has no redeal
    # No stock and no waste: finish may be legal.
    assert rules.play_listed(one._replace(stock=()), classic, play_op("1-2"), False)[4] is None
    # Without the C, the game plays the same through play and legal_moves.
    game = Game(deal("fused", classic), classic)
    expected = game.copy().play_listed("s")
    monkeypatch.setattr(rules, "_c_play_listed", None)
    assert rules.play_listed(game.position, classic, play_op("s"), True) is None
    assert game.play_listed("s") == expected
