"""``forty-thieves replay FILE``: step through a game record, forwards and backwards.

The client has no rules of its own, and a record is only a deal and the
commands played: the server computes the positions (``POST /replays``,
answered with every position redacted as a player sees it, refused
commands with the engine's reason), and this command draws them with the
race screen's renderer. The server's address is ``--server`` or
``FTR_SERVER``, as for every command.

Keys (on a terminal): Right, n, Space or Enter: next; Left, p or
Backspace: back; Home / End: first / last; q: quit. Not on a terminal (or
with ``--json``): every step printed, in the plain layout (or one JSON
line each). Exit status 0 when every command of the record was legal, 1
when any was refused (it is shown and skipped), 2 for an unreadable
record or no server.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass

import msgspec
from rich.text import Text

from protocol import messages as m

from .render import clock, plain_view, screen, to_ansi
from .server_link import ClientError, ServerRefused, replay_record
from .state import RaceState, with_card_symbols


@dataclass(frozen=True, slots=True)
class Step:
    """The position after ``index`` commands of the record (0: the deal, after its auto-play)."""

    index: int
    command: str
    ok: bool
    reason: str
    view: m.WireView
    legal: list[m.WireLegalMove]
    moves: int
    status: str
    time_ms: int = 0
    """When the command was played (ms from the start; the record's ``times_ms``, 0 when it has none)."""
    foundation: int = 0
    """Cards on the foundations after the step."""


def steps_of(text: str, server: str) -> tuple[list[Step], str]:
    """Every position of the record in ``text`` as the server at ``server`` replays it: the deal, then one
    step per command; and the variant. Raises :class:`ClientError` for a record the server refuses (``not a
    game record: ...``) or no server."""
    try:
        replayed = asyncio.run(replay_record(server, text.encode()))
    except ServerRefused as error:
        if error.code == "malformed":
            raise ClientError(f"not a game record: {error}") from None
        raise
    times = _times_of(text)
    steps = [Step(i, step.command, step.ok, step.reason, step.view, step.legal, step.moves, step.status,
                  times[i - 1] if 0 < i <= len(times) else 0, step.foundation)
             for i, step in enumerate(replayed.steps)]
    # A record from the server (GET /matches/{code}/replays/{name}) also says how the game ended: a resigned,
    # timed-out or dead game shows that on its last step, at the time it ended.
    result = _result_of(text)
    if result is not None and steps[-1].status == "playing" and result.get("status") not in (None, "playing", "won"):
        last = steps[-1]
        ended_ms = result.get("time_ms")
        steps[-1] = Step(last.index, last.command, last.ok, last.reason, last.view, [], last.moves,
                         str(result["status"]), ended_ms if isinstance(ended_ms, int) else last.time_ms,
                         last.foundation)
    return steps, replayed.variant


def _extra(text: str, key: str) -> object:
    """A field of the record's JSON (RULES.md's ``times_ms``, or what a server's replay adds: ``name``,
    ``result``), or None."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data.get(key) if isinstance(data, dict) else None


def _times_of(text: str) -> list[int]:
    """The record's ``times_ms`` (when each command was played, ms from the start), or [] when it has none."""
    times = _extra(text, "times_ms")
    return [t if isinstance(t, int) else 0 for t in times] if isinstance(times, list) else []


def _result_of(text: str) -> dict[str, object] | None:
    """The ``result`` object of a server's replay record (status, moves, foundation, time_ms), if any."""
    result = _extra(text, "result")
    return result if isinstance(result, dict) else None


def _player_of(text: str) -> str:
    """The player's name in a server's replay record, or ''."""
    name = _extra(text, "name")
    return name if isinstance(name, str) else ""


def state_of(step: Step, total: int, variant: str, name: str) -> RaceState:
    """A :class:`RaceState` showing ``step`` (for the race screen's renderer)."""
    state = RaceState(code=name, name=name, phase="playing", view=step.view, legal=step.legal, moves=step.moves,
                      status=step.status, connected=True, time_ms=step.time_ms, foundation=step.foundation,
                      fixed_clock_ms=step.time_ms)
    state.settings = m.Settings(variant, True, 1, 0, True, "safe", False)
    line = state.line(name)  # the players' panel: the one player of the record
    line.moves, line.foundation, line.status = step.moves, step.foundation, step.status
    verdict = "" if step.ok else f" REFUSED: {with_card_symbols(step.reason)}"  # cards as the screen shows them
    state.message = (f"step {step.index}/{total}" + (f": {step.command}" if step.command else ": the deal")
                     + verdict + "   (Right/n next, Left/p back, Home/End, q quit)")
    return state


def replay(path: str, server: str, *, as_json: bool = False) -> int:
    """Show every position of the record at ``path`` (see the module docstring); the exit status."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as error:
        raise ClientError(f"cannot read {path}: {error}") from None
    steps, variant = steps_of(text, server)
    total = len(steps) - 1
    all_ok = all(step.ok for step in steps)
    if as_json or not (sys.stdin.isatty() and sys.stdout.isatty()):
        for step in steps:
            if as_json:
                print(json.dumps({"step": step.index, "command": step.command, "ok": step.ok, "reason": step.reason,
                                  "moves": step.moves, "status": step.status, "time_ms": step.time_ms,
                                  "foundation": step.foundation, "view": msgspec.to_builtins(step.view)}))
            else:
                head = "the deal" if not step.index else f"{step.command}" + ("" if step.ok else f" REFUSED: {step.reason}")
                print(f"step {step.index}/{total}: {head} (moves {step.moves}, {step.status}, time {clock(step.time_ms)})")
                print(plain_view(step.view))
                print()
        return 0 if all_ok else 1
    _browse(steps, variant, _player_of(text) or os.path.basename(path))
    return 0 if all_ok else 1


def _browse(steps: list[Step], variant: str, name: str) -> None:
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import ANSI
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window

    color = not os.environ.get("NO_COLOR")
    at = [0]
    keys = KeyBindings()

    def move(delta: int | None, to: int | None = None) -> None:
        at[0] = max(0, min(len(steps) - 1, to if to is not None else at[0] + (delta or 0)))

    keys.add("right")(lambda e: move(1))
    keys.add("n")(lambda e: move(1))
    keys.add(" ")(lambda e: move(1))
    keys.add("enter")(lambda e: move(1))
    keys.add("left")(lambda e: move(-1))
    keys.add("p")(lambda e: move(-1))
    keys.add("backspace")(lambda e: move(-1))
    keys.add("home")(lambda e: move(None, 0))
    keys.add("end")(lambda e: move(None, len(steps) - 1))
    for key in ("q", "c-c", "c-d", "escape"):
        keys.add(key)(lambda e: e.app.exit())

    def draw() -> ANSI:
        size = app.output.get_size()
        width, height = max(40, size.columns), max(12, size.rows)
        lines = screen(state_of(steps[at[0]], len(steps) - 1, variant, name), width, height + 1)
        lines[-1] = Text("replay: Right/n next  Left/p back  Home/End first/last  q quit", style="dim")
        return ANSI(to_ansi(lines, width, color).rstrip("\n"))

    app: Application[None] = Application(layout=Layout(Window(FormattedTextControl(draw), wrap_lines=False)),
                                         key_bindings=keys, full_screen=True)
    app.run()
