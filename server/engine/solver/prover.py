"""An exact prover for one deal, searched layer by layer so that a finished layer can be dropped.

**The monotone key.** For a variant whose cards never come down from the
foundations (``Variant.foundation_to_column`` false, as in classic and relaxed:
RULES.md section 6), every state ``x`` has the layer

    ``layer(x) = (redeals used, cards drawn in this pass, cards up)``

with ``cards drawn in this pass`` the cards turned from the stock since the
deal or the last redeal (the stock only shrinks between redeals), and no
command lowers it in lexicographic order (RULES.md section 2, command by
command): a draw leaves the redeals, raises the draws by one and the cards
up by what auto-play takes; a column-to-column or waste-to-column command
changes neither the stock, the redeals nor the foundations (auto-play after
it only raises the cards up); a command to the foundations raises the cards up;
a redeal raises the redeals used (the draws restart at 0, which the
lexicographic order allows); foundation-to-column does not exist in these
variants, and ``finish`` is the foundation commands in one. Auto-play only
moves cards up. So every state reached from a layer ``L`` lies in ``L`` or in
a later layer, and once every layer before ``L`` is done, every state of ``L``
is either one of the seeds the earlier layers handed on or reached from
them inside ``L``: ``L`` is then searched completely (breadth-first, a
transposition set of ``L``'s own states) and never met again. Only the
current layer's states and the seeds of the later ones are held; a finished
layer's records (each state's parent and command, for the solution) are
handed to the caller to keep on disk (:mod:`.proof_file`).

**The reductions** are exactly those of the complete search of
:func:`server.engine.solver.search.solve` with its default rules
(server/engine/solver/README.md: each is proven exact for an exhausted
search): the move generator of ``_Expander`` (all moves, not whole runs; the
moves it drops give the same state up to column order), auto-play of safe
cards, the transposition key up to column and slot order
(:func:`.state.key`'s identity), a state a draw leads to that
:func:`.lock.locked` proves lost is not expanded, a state whose next stock
card is inert (:func:`.dominance.inert`) or whose waste top
:func:`.lock.waste_top_stuck` proves unmovable expands only its draw. The
search order does not enter any of their proofs (the least-winning-distance
argument of :mod:`.dominance` needs only that every kept state is expanded),
so an exhausted layered search expands exactly the states an exhausted
complete search expands: the same node count (the tests check it).

**Verdicts.** ``solved``: the moves, traced back through the layers'
records and replayed to a win through :class:`server.engine.game.Game`;
``unsolvable``: every layer exhausted. Pure: no I/O and no clock of its own;
:func:`run` takes the caller's clock and a :class:`Store` for the records and
the checkpoints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeAlias

from ..game import Game
from ..position import Position, format_position
from ..variants import Variant
from .dominance import inert
from .lock import locked, waste_top_stuck
from .search import FULL, _Expander, _won
from .state import Rules, State, autoplay, from_position

Step: TypeAlias = tuple[str, ...]
"""The commands of one search step: the command, then (with the game's auto-play off) its auto-play moves."""
Record: TypeAlias = tuple[int, Step]
"""A state's (parent's index, the step from the parent); the start's parent is -1."""
LayerKey: TypeAlias = tuple[int, int, int]
"""(redeals used, cards drawn in this pass, cards up): never lowered by a command (module docstring)."""
Seed: TypeAlias = "tuple[bytes, int, Step] | None"
"""A state handed on to a later layer: (its encoding, the parent's index, the step), or None for a state a draw
led to that the lock check proved lost (kept so that no other parent hands it on again, as the complete search's
transposition table keeps it)."""

FORMAT = 1
"""Version of :meth:`LayeredProof.snapshot`'s layout."""


def encode(state: State) -> bytes:
    """A state as bytes, columns in their real order (the steps name real column numbers)."""
    columns, hidden, foundations, stock, waste, redeals = state
    parts = [bytes((len(columns), redeals, len(foundations), len(stock), len(waste))), foundations, stock, waste]
    for column, down in zip(columns, hidden):
        parts.append(bytes((len(column), down)))
        parts.append(column)
    return b"".join(parts)


def decode(data: bytes) -> State:
    """The inverse of :func:`encode`."""
    count, redeals, slots, stock_length, waste_length = data[:5]
    at = 5
    foundations = data[at:at + slots]
    at += slots
    stock = data[at:at + stock_length]
    at += stock_length
    waste = data[at:at + waste_length]
    at += waste_length
    columns: list[bytes] = []
    hidden: list[int] = []
    for _ in range(count):
        length, down = data[at], data[at + 1]
        columns.append(data[at + 2:at + 2 + length])
        hidden.append(down)
        at += 2 + length
    return tuple(columns), tuple(hidden), foundations, stock, waste, redeals


def canonical(state: State) -> bytes:
    """The transposition identity of :func:`.state.key` (columns and slots unordered) as one byte string."""
    columns, hidden, foundations, stock, waste, redeals = state
    cols = sorted(bytes((down,)) + column for column, down in zip(columns, hidden))
    return b"".join((foundations, bytes((len(stock), len(waste), redeals)), stock, waste, b"\xff".join(cols)))


class Store(Protocol):
    """Where a proof keeps what it drops: the finished layers' records and its checkpoints."""

    def append_layer(self, first: int, records: list[Record]) -> None:
        """Keep the records of a finished layer, whose states have the indices ``first, first + 1, ...``."""

    def record(self, index: int) -> Record:
        """The record of state ``index`` of a finished layer (for tracing a solution back)."""

    def checkpoint(self, snapshot: dict[str, object]) -> None:
        """Keep ``snapshot`` (:meth:`LayeredProof.snapshot`) so that the proof can resume from it."""


class MemoryStore:
    """A :class:`Store` in memory (tests; a proof that need not resume)."""

    def __init__(self) -> None:
        self.records: dict[int, Record] = {}
        self.saved: dict[str, object] | None = None

    def append_layer(self, first: int, records: list[Record]) -> None:
        for offset, record in enumerate(records):
            self.records[first + offset] = record

    def record(self, index: int) -> Record:
        return self.records[index]

    def checkpoint(self, snapshot: dict[str, object]) -> None:
        self.saved = snapshot


@dataclass
class Counts:
    """What a proof has done so far (over the finished layers: a resumed proof continues these counts).

    ``nodes``: states expanded (the search's node count); ``locked``: states a draw led to that the lock check
    proved lost (not expanded); ``draw_only``: states expanded by
    their draw alone; ``layers``: layers finished; ``largest_layer``: most states expanded in one layer, and
    ``largest_key`` that layer's :data:`LayerKey`; ``most_seeds``: most states held for later layers at once
    (measured at layer ends).
    """

    nodes: int = 0
    locked: int = 0
    draw_only: int = 0
    layers: int = 0
    largest_layer: int = 0
    largest_key: LayerKey = (0, 0, 0)
    most_seeds: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"nodes": self.nodes, "locked": self.locked, "draw_only": self.draw_only, "layers": self.layers,
                "largest_layer": self.largest_layer, "largest_key": list(self.largest_key),
                "most_seeds": self.most_seeds}


class Stopped(Exception):
    """A layer was abandoned (its state bound was reached): the proof object is no longer consistent; resume from
    the last checkpoint."""


@dataclass
class LayeredProof:
    """The layered search of one position (module docstring); :func:`run` drives it.

    Build a fresh one with :meth:`start`, a resumed one with :meth:`resume`. ``verdict`` is ``"unknown"`` until
    the search ends, then ``"solved"`` (``moves``: a winning command list for the game's auto-play setting
    ``autoplay_on``, replayed through the engine) or ``"unsolvable"``.
    """

    position: Position
    variant: Variant
    autoplay_on: bool
    pending: dict[LayerKey, dict[bytes, Seed]]
    next_index: int = 0
    counts: Counts = field(default_factory=Counts)
    verdict: str = "unknown"
    moves: tuple[str, ...] = ()
    _rules: Rules | None = None

    @classmethod
    def start(cls, position: Position, variant: Variant, *, autoplay_on: bool = True) -> LayeredProof:
        """A proof of ``position`` from its first layer. Raises ``ValueError`` for a variant whose cards come down
        from the foundations (no monotone key)."""
        if variant.foundation_to_column:
            raise ValueError("the layered prover needs foundations that never shrink (no foundation_to_column)")
        proof = cls(position, variant, autoplay_on, {})
        rules = proof.rules
        first, initial = autoplay(rules, from_position(position, variant))
        prefix: Step = () if autoplay_on else tuple(initial)
        if _won(first):
            proof._finish_won(list(prefix))
        elif locked(rules, first):
            proof.verdict = "unsolvable"
        else:
            proof.pending[proof.layer(first)] = {canonical(first): (encode(first), -1, prefix)}
        return proof

    @classmethod
    def resume(cls, position: Position, variant: Variant, snapshot: dict[str, object], *,
               autoplay_on: bool = True) -> LayeredProof:
        """The proof :meth:`snapshot` saved. Raises ``ValueError`` when the snapshot is of another format, deal,
        variant or auto-play setting (nothing is changed then)."""
        expected = {"format": FORMAT, "deal": format_position(position), "variant": variant.name,
                    "autoplay": autoplay_on}
        for name, value in expected.items():
            if snapshot.get(name) != value:
                raise ValueError(f"the saved proof is not of this input: its {name} differs")
        pending = snapshot["pending"]
        counts = snapshot["counts"]
        assert isinstance(pending, dict) and isinstance(counts, dict)
        proof = cls(position, variant, autoplay_on, {tuple(k): v for k, v in pending.items()})
        next_index = snapshot["next_index"]
        assert isinstance(next_index, int)
        proof.next_index = next_index
        proof.counts = Counts(**{**counts, "largest_key": tuple(counts["largest_key"])})
        verdict, moves = snapshot["verdict"], snapshot["moves"]
        assert isinstance(verdict, str) and isinstance(moves, list)
        proof.verdict, proof.moves = verdict, tuple(moves)
        return proof

    def snapshot(self) -> dict[str, object]:
        """Everything needed to resume, as plain data (dicts, lists, tuples, bytes, ints, strings), taken between
        layers."""
        return {"format": FORMAT, "deal": format_position(self.position), "variant": self.variant.name,
                "autoplay": self.autoplay_on, "pending": {tuple(k): v for k, v in self.pending.items()},
                "next_index": self.next_index, "counts": self.counts.as_dict(), "verdict": self.verdict,
                "moves": list(self.moves)}

    @property
    def rules(self) -> Rules:
        if self._rules is None:
            self._rules = Rules(self.variant, autoplay_on=self.autoplay_on)
        return self._rules

    def layer(self, state: State) -> LayerKey:
        """:data:`LayerKey` of ``state`` (module docstring)."""
        _, _, foundations, stock, _, redeals = state
        used = self.position.redeals_left - redeals
        # In the first pass the draws made; after a redeal the pass's length is not a function of the state (cards
        # left the talon since), but within a pass the stock only shrinks, so 255 - its length orders the same.
        turned = len(self.position.stock) - len(stock) if used == 0 else 255 - len(stock)
        return used, turned, sum(foundations)

    @property
    def seeds(self) -> int:
        """States held for later layers (those proven lost included)."""
        return sum(len(layer) for layer in self.pending.values())

    def next_layer(self) -> LayerKey | None:
        """The layer :meth:`step` searches next, or None when none is left."""
        return min(self.pending) if self.pending else None

    def step(self, store: Store, *, states: int | None = None) -> None:
        """Search the next layer completely, hand its records to ``store`` and its later states on as seeds.

        Sets ``verdict`` to ``"solved"`` (a win met: the moves traced back through ``store`` and replayed) or
        ``"unsolvable"`` (no layer left). ``states``: the most states one layer may hold; past it the layer is
        abandoned with :class:`Stopped` (this object is then inconsistent: resume from the last checkpoint).
        """
        if self.verdict != "unknown":
            return
        current = self.next_layer()
        if current is None:
            self.verdict = "unsolvable"
            return
        seeds = self.pending.pop(current)
        rules = self.rules
        expander = _Expander(rules)
        moves = expander.moves
        targets = rules.targets
        layer_of = self.layer
        first = self.next_index
        seen = set(seeds)
        queue: list[bytes] = []
        records: list[Record] = []
        for seed in seeds.values():
            if seed is not None:
                queue.append(seed[0])
                records.append((seed[1], seed[2]))
        del seeds
        nodes = locked_count = draw_only = 0
        autoplay_on = self.autoplay_on
        face_down = rules.face_down
        dominates = rules.safe_dominates  # the draw-only rules need auto-play to be a dominance (search._search)
        at = 0
        while at < len(queue):
            index = first + at
            state = decode(queue[at])
            queue[at] = b""  # expanded: its bytes are not needed again
            at += 1
            nodes += 1
            safe = targets(state[2])[1]
            children = moves(state)
            if dominates and not face_down and state[3] and inert(rules, state[2], state[3][0]):
                children = children[-1:]  # only the draw, whose child dominates the state (.dominance)
                draw_only += 1
            elif dominates and state[3] and waste_top_stuck(rules, state):
                children = children[-1:]  # only the draw: exact, see lock.waste_top_stuck
            for text, nxt, exposed in children:
                if exposed == FULL or (exposed >= 0 and exposed in safe):
                    nxt, auto = autoplay(rules, nxt)
                else:
                    auto = []
                step = (text,) if autoplay_on else (text, *auto)
                if _won(nxt):
                    self._trace_win(store, first, records, index, step)
                    return
                k = canonical(nxt)
                where = layer_of(nxt)
                if where == current:
                    if k in seen:
                        continue
                    seen.add(k)
                    queue.append(encode(nxt))
                    records.append((index, step))
                    if states is not None and len(queue) > states:
                        raise Stopped(f"layer {current} passed {states} states")
                    continue
                later = self.pending.setdefault(where, {})
                if k in later:
                    continue
                if text == "s" and locked(rules, nxt):
                    locked_count += 1
                    later[k] = None
                    continue  # provably lost (checked after draws only, as the complete search does)
                later[k] = (encode(nxt), index, step)
        store.append_layer(first, records)
        self.next_index = first + len(records)
        c = self.counts
        c.nodes += nodes
        c.locked += locked_count
        c.draw_only += draw_only
        c.layers += 1
        if nodes > c.largest_layer:
            c.largest_layer, c.largest_key = nodes, current
        c.most_seeds = max(c.most_seeds, self.seeds)
        while self.pending and all(seed is None for seed in self.pending[min(self.pending)].values()):
            del self.pending[min(self.pending)]  # a layer of lost states only: nothing to expand there
        if not self.pending:
            self.verdict = "unsolvable"

    def _trace_win(self, store: Store, first: int, records: list[Record], index: int, last: Step) -> None:
        steps: list[Step] = [last]
        while index >= 0:
            parent, step = records[index - first] if index >= first else store.record(index)
            steps.append(step)
            index = parent
        self._finish_won([text for step in reversed(steps) for text in step])

    def _finish_won(self, moves: list[str]) -> None:
        game = Game(self.position, self.variant, autoplay=self.autoplay_on, undo="none")
        for text in moves:
            game.play(text)
        if not game.is_won:
            raise AssertionError("prover bug: the traced solution does not win when replayed through the engine")
        self.verdict, self.moves = "solved", tuple(moves)


def run(proof: LayeredProof, store: Store, *, nodes: int | None = None, seconds: float | None = None,
        clock: Callable[[], float] | None = None, checkpoint_seconds: float | None = None,
        states: int | None = None, report: Callable[[LayeredProof], None] | None = None) -> str:
    """Search layers until a verdict or a budget: returns ``proof.verdict`` (``"unknown"`` when stopped).

    The budgets are checked between layers (a layer is never cut, so a run may pass them by one layer's work):
    ``nodes`` (states expanded by this run), ``seconds`` (wall-clock, read with ``clock``, e.g.
    ``time.monotonic``). ``states`` bounds one layer's states (:meth:`LayeredProof.step`; past it
    :class:`Stopped` is raised and the work since the last checkpoint is lost, never the checkpoint).
    ``store.checkpoint`` gets a snapshot at the end (verdict or budget) and, with a ``clock``, every
    ``checkpoint_seconds`` between layers; ``report`` is called after every layer.
    """
    started = clock() if clock is not None else 0.0
    saved = started
    first_nodes = proof.counts.nodes
    while proof.verdict == "unknown":
        if nodes is not None and proof.counts.nodes - first_nodes >= nodes:
            break
        if seconds is not None and clock is not None and clock() - started >= seconds:
            break
        proof.step(store, states=states)
        if report is not None:
            report(proof)
        if checkpoint_seconds is not None and clock is not None and clock() - saved >= checkpoint_seconds:
            store.checkpoint(proof.snapshot())
            saved = clock()
    store.checkpoint(proof.snapshot())
    return proof.verdict
