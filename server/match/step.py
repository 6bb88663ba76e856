"""What one transition of the lifecycle table carries to its effects (:mod:`server.match.effects`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.lifecycle import CountdownPlan, Transition
from ..core.player import Commit, PlayerStatus, StuckWrite
from ..core.ranking import Standing
from ..store import MatchMeta

if TYPE_CHECKING:
    from .session import Session


@dataclass(slots=True)
class GameEnd:
    """A game the ``END_PLAYER`` script ends: player ``name`` as ``status`` at ``time_ms`` (ms from the start),
    announcing the encoded ``event``."""

    name: str
    status: PlayerStatus
    time_ms: int
    event: bytes


@dataclass(slots=True)
class Step:
    """One transition of match ``code`` being carried out: its row and what its effects read.

    Each field is read by the effects named beside it and is left at its default by rows without them."""

    code: str
    transition: Transition
    meta: MatchMeta | None = None
    """The match as read when the transition was decided (ARM_START, DAILY_STARTED, PUBLISH_START ...)."""
    session: Session | None = None
    """The player's connection (TAKE_SEAT, MARK_READY, COMMIT, STUCK, a dead game's END_PLAYER, CLAIM_NEXT)."""
    frame: bytes = b""
    """The encoded frame the script publishes (countdown, start event, closed error, results)."""
    fields: dict[str, Any] = field(default_factory=dict)
    """Meta fields the ``TRANSITION`` script sets with the state."""
    plan: CountdownPlan | None = None
    """The countdown's instants (ARM_START)."""
    name: str = ""
    """The joining player's name (TAKE_SEAT)."""
    token: str = ""
    """The joining player's new token (TAKE_SEAT)."""
    player_key: str = ""
    """The new player key of a name this join claimed, else ``""`` (TAKE_SEAT: told in ``joined``)."""
    recovery_code: str = ""
    """The new recovery code of a name this join claimed, else ``""`` (TAKE_SEAT)."""
    keep_s: int = 0
    """Seconds a closed match's keys are kept (TELL_CLOSED)."""
    foundation: int = 0
    """Cards up at the start, by the deal's auto-play (PUBLISH_START)."""
    write: Commit | StuckWrite | None = None
    """A player's proposal to store (COMMIT, STUCK)."""
    ends: list[GameEnd] = field(default_factory=list)
    """The games ``END_PLAYER`` ends (GAME_DEAD: the player's own; DEADLINE: every game still playing)."""
    standings: list[Standing] = field(default_factory=list)
    """The players' ends of game (DAILY_RECORD)."""
    same_deal: bool = False
    """A ``restart``: the next round keeps the deal (CLAIM_NEXT)."""
    candidate: str = ""
    """The next round's code should this call set it (CLAIM_NEXT)."""
    answer: Any = None
    """What the script answered, for the caller: ``(status, active)`` of COMMIT and END_PLAYER, ``(next code,
    claimed, names)`` of CLAIM_NEXT."""
