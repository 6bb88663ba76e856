"""The prover's files: a :class:`.prover.Store` on disk, so that a layered proof stops and resumes.

The only module of the solver that touches files (the search itself, :mod:`.prover`, stays pure). A proof of one
deal keeps two files side by side:

- ``NAME.proof``: the checkpoint, :meth:`.prover.LayeredProof.snapshot` (the layer reached as the frontier of
  the later layers, the counts, the verdict) with the length of the trail it goes with; written to a temporary
  file, flushed to disk and renamed over the old one, so a stop at any moment leaves the last complete
  checkpoint (``os.replace`` is atomic on POSIX);
- ``NAME.trail``: the finished layers' records (each state's parent and command), appended layer by layer, for
  tracing a win back. On resuming, whatever the trail holds past the checkpoint's length (layers searched after
  it, whose states the checkpoint's frontier does not know) is cut off: those layers are searched again.

The C prover (:func:`prove`) keeps its own pair, ``PATH`` (the checkpoint: the states waiting at a layer
boundary, packed as the C search packs them, and the counts) and ``PATH.links`` (each state's parent and
move, 8 bytes a state), written by the extension the same way (a temporary file, flushed, renamed); the
checkpoint carries a checksum, so a damaged one is refused rather than searched on.

The pure pair holds Python values written with :mod:`pickle`: the files are the prover's own, read back only by
it; never open one from elsewhere.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import pickle
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:  # POSIX: one process at a time on a proof file
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock
    fcntl = None  # type: ignore[assignment]

from ..game import Game
from ..position import Position
from ..variants import Variant
from .prover import LayeredProof, Record
from .search import RULE_CODES, implementation
from .state import State, from_position


class ProofFile:
    """A :class:`.prover.Store` for the proof named ``name`` in ``directory`` (created if missing).

    :meth:`open` gives the proof to run: resumed from ``NAME.proof`` when it exists, else fresh.
    """

    def __init__(self, directory: Path | str, name: str) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / f"{name}.proof"
        self.trail_path = self.directory / f"{name}.trail"
        self._firsts: list[int] = []  # first state index of each layer in the trail, ascending
        self._chunks: list[tuple[int, int, int]] = []  # (first index, byte offset, byte length) per layer
        self._trail_length = 0
        self._cached: tuple[int, list[Record]] | None = None

    def open(self, position: Position, variant: Variant, *, autoplay_on: bool = True) -> LayeredProof:
        """The proof of ``position``: resumed from the checkpoint if there is one, else from its first layer.

        Raises ``ValueError`` when the checkpoint is of another deal, variant or setting, and ``pickle`` errors
        when it is damaged; the files are left as they are then.
        """
        if not self.path.exists():
            self._write_trail_from_scratch()
            proof = LayeredProof.start(position, variant, autoplay_on=autoplay_on)
            return proof
        with self.path.open("rb") as handle:
            saved = pickle.load(handle)
        proof = LayeredProof.resume(position, variant, saved["snapshot"], autoplay_on=autoplay_on)
        self._chunks = [(first, offset, length) for first, offset, length in saved["chunks"]]
        self._firsts = [chunk[0] for chunk in self._chunks]
        self._trail_length = saved["trail_length"]
        with self.trail_path.open("r+b") as trail:
            trail.truncate(self._trail_length)
        return proof

    def _write_trail_from_scratch(self) -> None:
        self.trail_path.write_bytes(b"")
        self._chunks, self._firsts, self._trail_length, self._cached = [], [], 0, None

    def append_layer(self, first: int, records: list[Record]) -> None:
        if not records:
            return
        data = pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL)
        with self.trail_path.open("ab") as trail:
            trail.write(data)
        self._chunks.append((first, self._trail_length, len(data)))
        self._firsts.append(first)
        self._trail_length += len(data)

    def record(self, index: int) -> Record:
        at = bisect.bisect_right(self._firsts, index) - 1
        if at < 0:
            raise KeyError(index)
        first, offset, length = self._chunks[at]
        if self._cached is None or self._cached[0] != first:
            with self.trail_path.open("rb") as trail:
                trail.seek(offset)
                records: list[Record] = pickle.loads(trail.read(length))
            self._cached = (first, records)
        return self._cached[1][index - first]

    def checkpoint(self, snapshot: dict[str, object]) -> None:
        with self.trail_path.open("ab") as trail:
            os.fsync(trail.fileno())  # the records the checkpoint counts on are on disk before it is
        temporary = self.path.with_suffix(".proof.tmp")
        with temporary.open("wb") as handle:
            pickle.dump({"snapshot": snapshot, "chunks": self._chunks, "trail_length": self._trail_length}, handle,
                        protocol=pickle.HIGHEST_PROTOCOL)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)

    def remove(self) -> None:
        """Delete both files (a decided proof whose verdict is recorded elsewhere)."""
        for path in (self.path, self.trail_path):
            path.unlink(missing_ok=True)


try:  # the C prover (_csolver.c's prove), built with the C search when a compiler is there
    from ._csolver import PROOF_HEAD_SIZE
    from ._csolver import prove as _c_prove
except ImportError:
    _c_prove, PROOF_HEAD_SIZE = None, 0


@dataclass(frozen=True)
class Proved:
    """What one run of :func:`prove` ended with.

    ``verdict``: ``"solved"`` (``moves`` win, replayed through the engine), ``"unsolvable"`` (every layer
    exhausted) or ``"unknown"`` (a budget, ``reason`` says which: ``"nodes"``, ``"time"``, ``"memory"``,
    ``"capacity"``, ``"io"``). ``counts`` (over the whole proof, resumed runs included): ``nodes`` (states
    expanded, as :class:`.prover.Counts`), ``states`` (states kept, the locked ones included), ``locked``,
    ``draw_only``, ``layers``, ``largest_layer`` and ``largest_key`` (:data:`.prover.LayerKey`), ``most_pending``
    (most states waiting for expansion at a layer boundary); of this run alone ``run_nodes`` (states expanded)
    and ``peak_mb`` (its largest storage, MiB).
    """

    verdict: str
    reason: str
    moves: tuple[str, ...]
    counts: dict[str, Any]


def fast_available(position: Position, variant: Variant) -> bool:
    """Whether :func:`prove` takes this input: the C extension is built and the input is one the C search
    supports (:func:`.search.implementation`), with foundations that never shrink."""
    return _c_prove is not None and implementation(position, variant) == "c"


def prove(position: Position, variant: Variant, path: Path | str | None, *, autoplay_on: bool = True,
          nodes: int | None = None, seconds: float | None = None, max_mb: int | None = None,
          checkpoint_seconds: float | None = None, report_seconds: float | None = None,
          lock_every_state: bool = False) -> Proved:
    """The layered proof of :mod:`.prover` run by the C extension: the same states expanded, at 20-30 times
    the pure prover's rate and about a quarter of its memory per waiting state (server/engine/solver/README.md).

    ``path``: the proof's file, resumed when it exists (its links file, 8 bytes a state, lies beside it as
    ``PATH.links``) and written at a stop at a layer boundary, at a verdict and every ``checkpoint_seconds``;
    None writes nothing. ``nodes`` (states this run may expand) and ``seconds`` (this run's wall-clock time) are
    checked at layer boundaries, so a run passes them by up to one layer; ``max_mb`` caps the search's storage
    and stops the run at once, the work since the last checkpoint lost. ``report_seconds``: a progress line on
    standard error (the layer, nodes, states pending, rate, storage) at a layer boundary at most this often.
    ``lock_every_state``: the lock check (:func:`.lock.locked`, exact) on every new state, not only after draws
    (the pure prover's rule): the complete search's rule, with its node count on an exhausted proof; fewer states
    and other counts than the pure prover's (a checkpoint is of one rule: the other is refused). Raises ``ValueError`` when
    :func:`fast_available` is false, ``nodes`` or ``max_mb`` is negative, or the file is of another input or
    damaged (its length or checksum wrong, its links file shorter than its states; the files are left as they
    are), ``OSError`` when a file cannot be opened (a missing links file included), ``BlockingIOError`` (an
    ``OSError``) when another process runs the same proof (``PATH.lock``, POSIX only). A checkpoint that cannot
    be written leaves the last whole one and no temporary file.
    """
    if _c_prove is None or not fast_available(position, variant):
        raise ValueError("the C prover takes 2 decks built in suit, no face-down card and no card back from the "
                         "foundations, within the C search's limits")
    if (nodes is not None and nodes < 0) or (max_mb is not None and max_mb < 0):
        raise ValueError("nodes and max_mb are budgets: 0 or more, or None for no cap")  # -1 is 'no cap' in C
    start = from_position(position, variant)
    with _held(path):
        outcome, moves, counts = _c_prove(
            start[0], start[2], start[3], start[4], start[5], RULE_CODES[variant.move_rule], autoplay_on,
            -1 if nodes is None else nodes, -1.0 if seconds is None else max(seconds, 0.0),
            0 if max_mb is None else max_mb, None if path is None else str(path),
            -1.0 if checkpoint_seconds is None else checkpoint_seconds,
            -1.0 if report_seconds is None else report_seconds, lock_every_state)
    if outcome == "solved":
        game = Game(position, variant, autoplay=autoplay_on, undo="none")
        for text in moves:
            game.play(text)
        if not game.is_won:
            raise AssertionError("prover bug: the traced solution does not win when replayed through the engine")
        return Proved("solved", "", tuple(moves), counts)
    if outcome == "exhausted":
        return Proved("unsolvable", "", (), counts)
    return Proved("unknown", outcome, (), counts)


@contextlib.contextmanager
def _held(path: Path | str | None) -> Iterator[None]:
    """An exclusive lock on ``PATH.lock`` for the run (POSIX ``flock``, released when the process ends, so a
    killed run leaves no stale lock): two processes on one proof file would each checkpoint over the other's
    links. Raises ``BlockingIOError`` when another process holds it."""
    if path is None or fcntl is None:
        yield
        return
    with open(f"{path}.lock", "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as error:
            raise BlockingIOError(error.errno, "another process is running this proof", str(path)) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def waiting(path: Path | str, position: Position, variant: Variant) -> Iterator[State]:
    """The states a C proof file (:func:`prove`) holds waiting for expansion, in the order they were made (their
    queue order within a layer), as :mod:`.state` tuples (columns in canonical order), for studying what a proof
    still has to do.

    ``position`` and ``variant`` must be the proof's (the file stores the talon as a subset of the deal's:
    RULES.md's talon, the deal's waste then its stock). Raises ``ValueError`` for a file of another format.
    """
    start = from_position(position, variant)
    talon = bytes(start[4]) + bytes(start[3])
    mask_bytes = (len(talon) + 7) // 8
    count = len(start[0])
    data = Path(path).read_bytes()
    if not data.startswith(b"FTRPRV3\0") or len(data) < PROOF_HEAD_SIZE:
        raise ValueError("no C proof file of this format")
    if data[40:40 + len(talon)] != talon:  # the header's talon (after the magic and eight 32-bit fields)
        raise ValueError("the file is not of this deal")
    (used,) = struct.unpack_from("<Q", data, PROOF_HEAD_SIZE - 8)
    if PROOF_HEAD_SIZE + used != len(data):
        raise ValueError("a damaged C proof file: its records do not fill it")
    arena = memoryview(data)[PROOF_HEAD_SIZE:]
    at = 8
    while at < used:
        length, pending = struct.unpack_from("<HH", arena, at + 8)
        key = bytes(arena[at + 12 + count: at + 12 + count + length])
        at += (12 + count + length + 7) & ~7
        if not pending:
            continue
        foundations = bytes(h for packed in key[:4] for h in (packed & 15, packed >> 4))
        waste_length, redeals, kept = key[4], key[5], key[6]
        mask = key[7:7 + mask_bytes]
        cards = bytes(card for i, card in enumerate(talon) if mask[i >> 3] >> (i & 7) & 1)
        if len(cards) != kept:
            raise ValueError("a damaged C proof file: a record's talon does not match its length")
        columns: list[bytes] = []
        place = 7 + mask_bytes
        for _ in range(count):
            n = key[place]
            columns.append(key[place + 1: place + 1 + n])
            place += 1 + n
        yield tuple(columns), (0,) * count, foundations, cards[waste_length:], cards[:waste_length], redeals
