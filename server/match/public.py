"""What anyone may read about a match: ``GET /matches/{code}``, the ``lobby`` frame and the lobby events.

Never the seed before the end, never a board unless boards are public (:func:`server.core.lifecycle.boards_public`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from protocol import messages as m
from protocol.codec import encode

from ..core.lifecycle import LOBBY_STATES, boards_public, reveals
from ..engine import find_variant
from ..store import BotSeat, LobbyWrite, MatchMeta, PlayerRecord

if TYPE_CHECKING:
    from .context import MatchContext

LOBBY_EVENT_TRIES = 5
"""Times :meth:`PublicView.publish_lobby` reads the lobby again when it changed before its event was written."""


def lobby_frame(code: str, meta: MatchMeta, players: list[PlayerRecord]) -> m.Lobby:
    """The ``lobby`` frame of match ``code`` from its meta and its players (join order)."""
    return m.Lobby(match=code, state=meta.state.value,  # type: ignore[arg-type]
                   players=[m.PlayerInfo(p.name, p.ready, p.connected or is_bot, is_bot)
                            for p in players for is_bot in (meta.bot(p.name) is not None,)],
                   settings=meta.settings, commitment=meta.commitment)


def _player(record: PlayerRecord, bot: BotSeat | None) -> dict[str, Any]:
    """A player of ``GET /matches/{code}``; a bot (always there) with its level as ``bot``."""
    player = {"name": record.name, "ready": record.ready, "connected": record.connected or bot is not None,
              "status": record.shown_status.value, "moves": record.moves, "foundation": record.foundation,
              "time_ms": record.time_ms}
    return player if bot is None else player | {"bot": bot.level}


def public_record(code: str, meta: MatchMeta, players: list[PlayerRecord]) -> dict[str, Any]:
    """The answer of ``GET /matches/{code}`` without its rounds (see :meth:`PublicView.state`)."""
    state = meta.state
    settings = meta.settings
    result: dict[str, Any] = {
        "code": code, "state": state.value, "settings": msgspec.to_builtins(settings),
        "commitment": meta.commitment, "start_at_ms": meta.start_at_ms, "deadline_ms": meta.deadline_ms,
        "boards_public": boards_public(state, settings.open_boards, bool(meta.daily)),
        "cards": find_variant(settings.variant).card_total,
        "players": [_player(p, meta.bot(p.name)) for p in players],
    }
    if meta.day is not None:  # a daily attempt: its pages link to the day's leaderboard, and ask for its seed there
        result["daily"] = {"date": meta.day[0], "variant": meta.day[1]}
    if meta.practice_day is not None:  # a practice on a past day's deal: on no board
        result["practice"] = {"date": meta.practice_day[0], "variant": meta.practice_day[1]}
    if reveals(state):
        result["seed"] = meta.seed
        result["nonce"] = meta.nonce
    return result


class PublicView:
    """The public read model of matches (see the module docstring)."""

    def __init__(self, service: MatchContext) -> None:
        self.service = service
        self.store = service.store

    async def state(self, code: str) -> dict[str, Any] | None:
        """What anyone may read about match ``code``, never the seed before the end nor a board; ``None``: none.

        ``boards_public``: spectators may see boards now; ``cards``: the variant's card total; the rounds' part
        is :meth:`server.match.rounds.Rounds.public`'s.
        """
        meta = await self.store.matches.meta(code)
        if meta is None:
            return None
        result = public_record(code, meta, await self.store.players.all(code))
        result.update(await self.service.rounds.public(code, meta))
        return result

    async def lobby_message(self, code: str) -> m.Lobby:
        """The ``lobby`` frame as Redis holds it (the match must exist)."""
        meta = await self.store.matches.meta(code)
        assert meta is not None
        return lobby_frame(code, meta, await self.store.players.all(code))

    async def publish_lobby(self, code: str) -> None:
        """Append the lobby as Redis holds it to the match's stream, while the match is in its lobby.

        The frame is written only if nothing it shows changed since it was read, else read again up to
        :data:`LOBBY_EVENT_TRIES` times, and never once the match has left its lobby: no lobby event
        contradicts the countdown or an earlier lobby event. Raises what redis-py raises."""
        for _ in range(LOBBY_EVENT_TRIES):
            meta = await self.store.matches.meta(code)
            if meta is None or meta.state not in LOBBY_STATES:
                return
            players = await self.store.players.all(code)
            frame = encode(lobby_frame(code, meta, players))
            written = await self.store.matches.add_lobby_event(code, frame, meta.state, meta.commitment, players)
            if written is not LobbyWrite.CHANGED:
                return
