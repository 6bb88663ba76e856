"""The player-view planner: a command chosen from what the player sees only (RULES.md section 8).

:func:`plan` takes a :class:`~server.engine.view.View`, never a position, so neither a hint nor a bot can
learn the stock's order or a face-down card from it. What a player of classic knows besides the view is
*which* cards are hidden (the deck minus every card in sight), not their order. The stronger levels use
that by hindsight optimisation (Yoon, Fern and Givan; Bjarnason, Fern and Tadepalli on Klondike): deal the
hidden cards at random into the stock and the face-down places a number of times (*samples*, drawn from the
view and the caller's seed alone), and for each sample and each candidate command ask the solver, with a
small node budget and the whole sample known, whether the game can still be won after that command
(:func:`~server.engine.solver.search.verdict`). The command that wins in the most samples is chosen (fewest
proven lost next, then the one-look hint's preference, :func:`~server.engine.hint.ranked`). Samples are
taken whole, all candidates each, so a decision cut short by its time budget compares every command on the
same samples. When nothing is hidden any more (the stock is empty and every card is face up, or its order
is known because the player saw it in the waste before a redeal) the one position is searched instead.

The weakest level, ``casual``, thinks like a beginner: today's one-look hint, with a slip now and then
(another useful-looking command, chosen at random).

Every level skips commands that return to a position already seen (the views the caller passes as
``seen``, which includes undoing the command before). Pure: reads no clock of its own (a time budget needs
the caller's ``clock``), no I/O; the same arguments and node budget always give the same command.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from protocol.cards import suit_of
from protocol.commands import Command

from .hint import _visible_position, ranked
from .position import EMPTY_SLOT, Position
from .rng import DealRandom, shuffle
from .rules import apply, autoplay, legal_moves
from .solver.search import verdict
from .variants import Variant
from .view import View, redact


@dataclass(frozen=True, slots=True)
class Level:
    """A named strength of the planner.

    ``samples``: hidden orders sampled per decision (0: no search, the one-look hint); ``nodes``: the solver's
    node budget per (sample, command) question; ``seconds``: the decision's time budget (applied when the
    caller passes a clock); ``slips``: the share of decisions, per thousand, that take another useful-looking
    command at random (a beginner's mistakes); ``complete``: ask the complete search (which can prove a
    command lost) rather than the greedy one (which finds wins in fewer nodes)."""

    name: str
    samples: int
    nodes: int
    seconds: float
    slips: int = 0
    complete: bool = False
    description: str = ""


LEVELS: tuple[Level, ...] = (
    Level("casual", 0, 0, 0.0, slips=200,
          description="plays like a beginner: the one-look hint, with a slip one move in five"),
    Level("club", 4, 300, 0.25, description="looks a little ahead on 4 guesses of the stock"),
    Level("expert", 8, 1_000, 1.0, description="looks ahead on 8 guesses of the stock"),
    Level("strong", 16, 2_000, 2.0, description="looks ahead on 16 guesses of the stock, within 2 s"),
)
"""The levels, weakest first (README.md of the solver gives their measured strength)."""

_BY_NAME = {level.name: level for level in LEVELS}


def find_level(name: str) -> Level:
    """The level called ``name``; raises ``ValueError`` naming the levels for any other name."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown level {name!r}: {', '.join(_BY_NAME)}") from None


@dataclass(frozen=True, slots=True)
class Decision:
    """What :func:`plan` chose: ``command`` (pinned notation; ``None`` when no legal command leads to a
    position not seen before), ``candidates`` (the commands weighed), ``samples`` (the hidden orders decided
    for every candidate; 0 when no search ran or the time ran out first), ``wins`` (for ``command``, in how
    many of them the solver won after it), ``how``: ``"none"``, ``"only"`` (one candidate), ``"look"`` (the
    one-look preference), ``"slip"`` (a casual slip), ``"search"``."""

    command: str | None
    candidates: int = 0
    samples: int = 0
    wins: int = 0
    how: str = "none"


def plan(view: View, variant: Variant, *, seen: Sequence[View] = (), level: Level | str = "strong",
         seed: str = "0", autoplay_on: bool = True, nodes: int | None = None, seconds: float | None = None,
         clock: Callable[[], float] | None = None, pure: bool = False) -> Decision:
    """Choose a command for the player who sees ``view`` (RULES.md section 8); see the module docstring.

    ``seen``: the views of the game so far, oldest first (the deal's included; ``view`` itself may be last);
    commands that lead back to one of them are never chosen. ``level``: a :class:`Level` or its name.
    ``seed``: the random seed of the samples and of a casual slip (any string). ``autoplay_on``: the game's
    auto-play setting. ``nodes`` overrides the level's nodes per question; ``seconds`` caps the level's time
    budget, measured with ``clock`` (e.g. ``time.monotonic``; without a clock there is no time budget and the
    choice is reproducible). ``pure`` makes the solver run its pure search (the server's ``FTR_SOLVER=python``).
    Raises ``ValueError`` for an unknown level name."""
    chosen = find_level(level) if isinstance(level, str) else level
    visible = _visible_position(view)
    candidates = _candidates(visible, view, variant, set(seen), autoplay_on)
    if not candidates:
        return Decision(None)
    if len(candidates) == 1:
        return Decision(next(iter(candidates)), 1, how="only")
    preference = {command: score for score, command in ranked(view, variant)}
    order = sorted(candidates, key=lambda c: -preference.get(c, 0))  # a stable sort: legal order among equals
    if chosen.samples == 0:
        useful = [c for c in order if c in preference] or order
        rng = DealRandom(f"{seed}/slip")
        if chosen.slips and len(useful) > 1 and rng.below(1000) < chosen.slips:
            return Decision(useful[1 + rng.below(len(useful) - 1)], len(candidates), how="slip")
        return Decision(useful[0], len(candidates), how="look")
    budget = chosen.seconds if seconds is None else min(seconds, chosen.seconds)
    deadline = clock() + budget if clock is not None else None
    per_question = chosen.nodes if nodes is None else nodes
    wins = dict.fromkeys(order, 0)
    lost = dict.fromkeys(order, 0)
    decided = 0
    for sample in _samples(view, variant, seen, seed, chosen.samples):
        won_here = dict.fromkeys(order, 0)
        lost_here = dict.fromkeys(order, 0)
        for command in order:
            if deadline is not None and clock is not None and clock() >= deadline:
                break
            after = apply(sample, variant, candidates[command]).position
            if autoplay_on:
                after = autoplay(after, variant).position
            answer = "solved" if after.is_won else verdict(after, variant, per_question, autoplay_on=autoplay_on,
                                                            complete=chosen.complete, pure=pure)
            won_here[command] = answer == "solved"
            lost_here[command] = answer == "unsolvable"
        else:
            decided += 1
            for command in order:
                wins[command] += won_here[command]
                lost[command] += lost_here[command]
            continue
        break  # the time budget ran out within this sample: it is left out, so every command has the same samples
    if decided == 0:
        return Decision(order[0], len(candidates), how="look")
    best = max(order, key=lambda c: (wins[c], -lost[c]))  # max keeps the first of equals: the preferred one
    return Decision(best, len(candidates), decided, wins[best], "search")


def _candidates(visible: Position, view: View, variant: Variant, seen: set[View],
                autoplay_on: bool) -> dict[str, Command]:
    """The legal commands worth weighing, in legal order: none that leads to a position in ``seen``, and of
    commands that lead to the same position only the first (a run into either of two empty columns).

    The position after a command is known exactly from the view unless the command draws, redeals or turns a
    face-down card up; those lead to a position never seen (a draw or a redeal changes the stock's count or
    the redeals left, which never come back within a game; a face-down card never goes back down)."""
    result: dict[str, Command] = {}
    reached: set[View] = set()
    for legal in legal_moves(visible, variant):
        command = legal.command
        text = str(command)
        if command.kind in ("draw", "redeal"):
            result[text] = command
            continue
        applied = apply(visible, variant, command)
        if applied.revealed:
            result[text] = command
            continue
        after = autoplay(applied.position, variant).position if autoplay_on else applied.position
        if any(after.hidden[i] != visible.hidden[i] for i in range(len(after.hidden))):
            result[text] = command  # auto-play turned a card up: new (and its card is a placeholder here)
            continue
        key = redact(after)
        if key in seen or key in reached:
            continue
        reached.add(key)
        result[text] = command
    return result


def _unseen(view: View, variant: Variant) -> list[int]:
    """The hidden cards (stock and face-down) as a sorted list of codes: the deck minus every card in sight."""
    counts: Counter[int] = Counter({code: variant.decks for code in range(52)})
    for column in view.tableau:
        counts.subtract(column)
    counts.subtract(view.waste)
    for top in view.foundations:
        if top != EMPTY_SLOT:
            counts.subtract(range(suit_of(top) * 13, top + 1))
    return sorted(counts.elements())


def _known_stock(view: View, seen: Sequence[View]) -> tuple[int, ...] | None:
    """The stock's order when the player saw it: after a redeal the stock is the waste of the moment before,
    in the same order (RULES.md section 2), less the cards drawn again since. ``None`` when not known."""
    if view.stock_count == 0:
        return ()
    for before in reversed(seen):
        if before.redeals_left == view.redeals_left + 1 and before.stock_count == 0:
            waste = before.waste
            return waste[len(waste) - view.stock_count:] if len(waste) >= view.stock_count else None
    return None


def _samples(view: View, variant: Variant, seen: Sequence[View], seed: str, count: int) -> list[Position]:
    """``count`` positions that agree with ``view`` (the hidden cards dealt at random from ``seed``), or the one
    position when nothing is hidden. Depends on the view, ``seen`` and ``seed`` only."""
    unseen = _unseen(view, variant)
    stock = _known_stock(view, seen)
    if stock is not None:
        rest = Counter(unseen)
        rest.subtract(stock)
        if min(rest.values(), default=0) < 0:
            stock = None  # the seen views do not fit this one: guess the stock as well
        else:
            unseen = sorted(rest.elements())
    exact = not unseen
    result = []
    for index in range(1 if exact else count):
        cards = list(unseen)
        shuffle(cards, DealRandom(f"{seed}/sample/{index}"))
        tableau = []
        for column, hidden in zip(view.tableau, view.hidden):
            tableau.append(tuple(cards[:hidden]) + column)
            del cards[:hidden]
        result.append(Position(tuple(tableau), view.hidden, view.foundations,
                               stock if stock is not None else tuple(cards), view.waste, view.redeals_left))
    return result


__all__ = ["LEVELS", "Decision", "Level", "find_level", "plan"]
