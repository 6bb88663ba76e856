"""A game with no legal command left ends as dead at once (RULES.md section 5).

When the legal list a player was just sent is empty (no draw, no redeal, no
move, no undo), no sequence of legal moves exists, so the game is dead by
definition: the server ends it without asking the solver. The verdict comes
from what the player sees, so it is given with face-down cards still in the
tableau (where the solver's verdict is withheld: it would reveal them).
"""

from __future__ import annotations

from protocol import messages as m
from server.engine import Game, find_variant, parse_position, redact

from .conftest import ServerProcess
from .wsclient import Player, create_match

# Emperor (build down in alternate colour), stock and waste empty, autoplay off. The only legal command
# is 1-f (TS onto a spade slot at 9); it turns up column 1's KS, and then nothing is legal: the tops are
# black kings, black queens and black jacks (no red card to build on them, none fits another, none fits a
# foundation), no column is empty, and 21 cards stay face down.
NO_MOVE_LEFT = """Foundations: 9S 9S 9C 9C 9H 9H 9D 9D
Stock:
Waste:
Redeals left: 0
1: (KS) TS
2: (TS) (QH) (QD) KS
3: (JS) (QH) (KD) KC
4: (JS) (KH) (KD) KC
5: (TC) (KH) QS
6: (TC) (TD) QS
7: (TH) (TD) QC
8: (TH) (JD) QC
9: (JH) (JD) JC
10: (JH) (QD) JC
"""


def test_the_position_has_exactly_one_command_and_then_none() -> None:
    variant = find_variant("emperor")
    game = Game(parse_position(NO_MOVE_LEFT, variant), variant, autoplay=False, undo="full")
    assert [str(move.command) for move in game.legal_moves()] == ["1-f"]
    game.play("1-f")
    assert [str(move.command) for move in game.legal_moves()] == ["u"]  # only the undo
    assert sum(redact(game.position).hidden) == 21


async def _play_one(server: ServerProcess, undo: str) -> tuple[Player, m.PositionReply, str]:
    created = create_match(server.url, variant="emperor", deal=NO_MOVE_LEFT, players=1, solvable_only=False,
                           autoplay=False, undo=undo)
    player = Player(server.ws_url)
    await player.connect()
    await player.join(created["code"], "solo")
    await player.send(m.Ready())
    started = await player.expect(m.Started)
    assert isinstance(started, m.Started)
    reply = await player.play("1-f")
    assert isinstance(reply, m.PositionReply), reply
    return player, reply, created["code"]


async def test_no_legal_command_ends_the_game_as_dead_with_cards_still_face_down(server: ServerProcess) -> None:
    async def run() -> None:
        player, reply, code = await _play_one(server, "none")
        assert reply.legal == [] and reply.foundation == 73 and sum(reply.view.hidden) == 21
        finished = await player.expect(m.Finished, timeout=5)
        assert isinstance(finished, m.Finished)
        assert (finished.name, finished.status, finished.moves, finished.foundation) == ("solo", "dead", 1, 73)
        results = await player.expect(m.Results, timeout=5)
        assert isinstance(results, m.Results) and results.match == code
        assert [(r.rank, r.name, r.status, r.moves, r.foundation) for r in results.ranking] == [
            (1, "solo", "dead", 1, 73)]
        refused = await player.play("u")
        assert isinstance(refused, m.Error) and refused.code == "game_over"
        await player.close()

    await run()


async def test_with_an_undo_left_the_game_goes_on(server: ServerProcess) -> None:
    async def run() -> None:
        player, reply, _ = await _play_one(server, "full")
        assert [move.command for move in reply.legal] == ["u"] and reply.status == "playing"
        undone = await player.play("u")
        assert isinstance(undone, m.PositionReply) and undone.status == "playing"
        assert [move.command for move in undone.legal] == ["1-f"] and undone.moves == 2
        await player.close()

    await run()


# Classic, every card face up, stock and waste empty: the only commands shuffle a queen of spades between
# the two kings of spades (6-2, then 2-3 and back); every ten lies under a king that no empty column can
# ever take, so no card can go up again. The solver (in the dead-game worker) proves it dead.
SHUFFLE_ONLY = """Foundations: TS 9S 9C 9C 9H 9H 9D 9D
Stock:
Waste:
Redeals left: 0
1: QD JD JS KD
2: TD KS
3: JH KS
4: TC TH QS KH KH JS TC JC
5: QH
6: TD KC QH QS
7: JC
8: JD
9: QC TH TS QD QC KC
10: JH KD
"""


def test_the_shuffle_only_position_is_dead_by_the_engine() -> None:
    from server.engine.dead import Verdict, is_dead  # the engine's own verdict

    variant = find_variant("classic")
    game = Game(parse_position(SHUFFLE_ONLY, variant), variant, autoplay=True, undo="none")
    assert [str(move.command) for move in game.legal_moves()] == ["6-2", "6-3"]
    game.play("6-2")
    assert [str(move.command) for move in game.legal_moves()] == ["2-3"]
    assert is_dead(game.position, variant) is Verdict.DEAD


async def _shuffle_once(server: ServerProcess, undo: str) -> Player:
    created = create_match(server.url, variant="classic", deal=SHUFFLE_ONLY, players=1, solvable_only=False,
                           undo=undo)
    player = Player(server.ws_url)
    await player.connect()
    await player.join(created["code"], "solo")
    await player.send(m.Ready())
    assert isinstance(await player.expect(m.Started), m.Started)
    reply = await player.play("6-2")
    assert isinstance(reply, m.PositionReply) and reply.status == "playing" and reply.foundation == 73
    return player


async def test_a_dead_game_with_no_undo_ends_when_the_solver_says_so(server: ServerProcess) -> None:
    async def run() -> None:
        player = await _shuffle_once(server, "none")
        finished = await player.expect(m.Finished, timeout=10)
        assert isinstance(finished, m.Finished)
        assert (finished.status, finished.moves, finished.foundation) == ("dead", 1, 73)
        results = await player.expect(m.Results, timeout=5)
        assert isinstance(results, m.Results) and [r.status for r in results.ranking] == ["dead"]
        await player.close()

    await run()


async def test_a_dead_game_with_an_undo_left_is_told_then_ends_when_none_is_left(server: ServerProcess) -> None:
    async def run() -> None:
        player = await _shuffle_once(server, "safe")
        told = await player.expect(m.PositionReply, timeout=10)
        assert isinstance(told, m.PositionReply) and told.status == "dead" and told.moves == 1
        assert [move.command for move in told.legal] == ["2-3", "u"]
        undone = await player.play("u")  # back to the deal: dead as well, and nothing is left to undo
        assert isinstance(undone, m.PositionReply) and undone.status == "playing" and undone.moves == 2
        finished = await player.expect(m.Finished, timeout=10)
        assert isinstance(finished, m.Finished) and (finished.status, finished.moves) == ("dead", 2)
        await player.close()

    await run()
