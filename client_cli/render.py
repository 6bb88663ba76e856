"""Drawing a :class:`~client_cli.state.RaceState`: the race screen and a plain layout.

- :func:`screen` builds the race screen as rich text lines for a terminal
  of ``width`` x ``height`` (80 x 24 is the smallest it is made for): the
  header (match, variant, moves, clock, countdown), the eight foundation
  slots, the stock count and the waste with its top card, the columns
  with suit symbols and colours (hearts and diamonds red), the other
  players' progress on the right, a message line and a help line; the
  ranked results in place of the columns at the end. Colours go through
  rich, which honours ``NO_COLOR``.
- :func:`to_ansi` renders those lines to a string of ANSI escapes (what
  the prompt_toolkit screen shows).
- :func:`plain` is the layout for output that is not a terminal: the
  RULES.md section 10 notation (``TD``, ``Stock: 52``), no colour, no
  box drawing.
"""

from __future__ import annotations

import io
import shlex
import time
from typing import Any

from rich.cells import set_cell_size
from rich.console import Console
from rich.text import Text

from protocol import messages as m
from protocol.cards import UNKNOWN

from .commands import table_moves
from .ghost import gap, gap_words, ghost_now
from .server_link import server_option
from .state import ENDED, RaceState, card_label

COLUMN_WIDTH = 5
"""Characters per column: a card is at most 3 wide (``10♠``), two spaces between."""
SIDE_WIDTH = 20
"""Characters of the players' panel right of the columns."""
FOOTER_LINES = 3
"""Message line, help line, and the input line the prompt draws under the screen."""


def now_ms() -> int:
    return int(time.time() * 1000)


def fit(text: str, cells: int) -> str:
    """``text`` cut to ``cells`` terminal cells and padded to them (full-width letters, CJK and most emoji
    take two cells: a name cut by characters could overflow its column and wrap the screen). Linear time;
    ``cells`` below 0 counts as 0 (a long label left no room)."""
    return set_cell_size(text, max(cells, 0))


def wrap(text: str, cells: int = 80) -> list[str]:
    """``text`` broken between words into lines of at most ``cells`` terminal cells (wide characters count
    two, as in :func:`fit`; a word longer than a line is split), for what the client prints before or after
    the race screen on an 80-column terminal."""
    from rich.console import Console

    return [line.plain.rstrip() for line in Text(text).wrap(Console(width=cells), cells)]


def _crop(line: Text, cells: int) -> Text:
    """A copy of ``line`` cut to at most ``cells`` terminal cells."""
    line = line.copy()
    line.truncate(cells, overflow="crop")
    return line


def card_text(card: str, *, top: bool = False, width: int = 3) -> Text:
    """A card as rich text: red for hearts and diamonds, bold when it is playable."""
    if card in ("-", ""):
        return Text("·".center(width), style="dim")
    if card == UNKNOWN:
        return Text("░░░"[:width].ljust(width), style="dim")
    style = "red" if card[1] in "DH" else "default"
    if top:
        style += " bold"
    return Text(card_label(card).ljust(width), style=style)


UNTIMED_SHOWN_MS = 3_600_000
"""An untimed match's time left shows in its last hour (ms)."""


def clock(ms: int) -> str:
    seconds = max(0, ms) // 1000
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else f"{seconds // 60}:{seconds % 60:02d}"


def _header(state: RaceState, width: int, now: int) -> Text:
    variant = state.settings.variant if state.settings else ""
    left = f" Forty Thieves Race  {state.title}" if state.title else f" Forty Thieves Race  {state.code}  {variant}"
    if state.phase == "countdown":
        right = f"starts in {state.countdown_s(now):.0f} s "
    elif state.phase in ("playing", "finished"):
        right = f"moves {state.moves}  time {clock(state.elapsed_ms(now))}"
        left_ms = state.deadline_ms - now - state.clock_offset_ms
        # No limit chosen (a game alone, a race of 0 s): the server's cap of an untimed match (24 h) shows only in
        # its last hour, not as a countdown the player never asked for (as the play page).
        untimed = state.settings is not None and not state.settings.time_limit_s
        if state.deadline_ms and (not untimed or left_ms < UNTIMED_SHOWN_MS) and state.phase == "playing" \
                and state.status not in ENDED:
            right += f" (left {clock(left_ms)})"
        right += " "
    else:
        right = f"{state.phase} "
    if not state.connected and state.phase != "finished":
        right = "reconnecting… " + right
    if len(left) + 1 + len(right) > width:  # the clock and time left matter more than the game's name
        left = left.replace(" Forty Thieves Race ", "", 1)
    pad = max(1, width - len(left) - len(right))
    return _crop(Text(left + " " * pad + right, style="reverse"), width)


def _foundations(view: m.WireView) -> Text:
    line = Text("Foundations ", style="bold")
    for top in view.foundations:
        line.append_text(card_text(top))
        line.append(" ")
    return line


def _stock_waste(state: RaceState, view: m.WireView, width: int) -> Text:
    line = Text("Stock ", style="bold")
    line.append(f"{view.stock:<3}")
    if view.redeals_left:
        line.append(f"(redeals {view.redeals_left}) ", style="dim")
    if view.stock and table_moves(state.legal):
        # In brackets after a gap: right after the count, "Stock 22 moves on the table" read as 22 moves.
        line.append(" (table has moves)  ", style="cyan")
    line.append("Waste ", style="bold")
    room = max(1, (width - len(line.plain) - 6) // 4)
    shown = view.waste[-room:]
    if len(view.waste) > len(shown):
        line.append("… ", style="dim")
    for i, card in enumerate(shown):
        last = i == len(shown) - 1
        if last:
            line.append("[")
        line.append_text(card_text(card, top=last, width=len(card_label(card))))
        line.append("]" if last else " ")
    if not view.waste:
        line.append("empty", style="dim")
    return line


STATUS_MARKS = {"playing": "", "won": "WON", "dead": "stuck", "resigned": "gave up", "timeout": "time"}
"""A player's status as the players' panel marks it (a ghost's the same, ``ghost`` while it plays)."""


def _players(state: RaceState, now: int | None = None) -> list[Text]:
    lines = [Text("Players", style="bold underline")]
    total = state.total_cards or 104
    for line in sorted(state.players.values(), key=lambda p: (-p.foundation, p.moves, p.name)):
        me = line.name == state.name
        name = line.name + (" (you)" if me else "")
        style = "bold" if me else "cyan" if line.bot else ""  # a bot's lines in cyan, all through the race
        if state.phase in ("lobby", "preparing", "countdown"):
            mark = "bot" if line.bot else "ready" if line.ready else ("away" if not line.connected else "")
            lines.append(Text(f"{fit(name, 12)} {mark}".rstrip(), style=style))
            continue
        # A bot says so while it plays, not by colour alone.
        status = "bot" if line.bot and line.status == "playing" else STATUS_MARKS.get(line.status, line.status)
        # How the game ended goes on the name line: the counts line has no room left for "gave up".
        label = f" {status}"[:9] if status else ""  # a status from a replay file may be anything
        lines.append(Text(fit(name, SIDE_WIDTH - 1 - len(label)).rstrip() + label, style=style))
        lines.append(Text(f" {line.foundation:>3}/{total} {line.moves:>3}m"[:SIDE_WIDTH - 1],
                          style="green" if line.status == "won" else "dim" if line.status in ENDED else ""))
    return lines + _ghost_lines(state, total, now)


def _ghost_lines(state: RaceState, total: int, now: int | None = None) -> list[Text]:
    """The ghost's lines of the players' panel: its label (marked ``ghost``), its cards up and moves on its
    recorded times, and the gap at my cards up; nothing without a ghost or before the start."""
    shadow = ghost_now(state, now_ms() if now is None else now)
    if shadow is None or state.ghost is None:
        return []
    status = "ghost" if shadow.status == "playing" else STATUS_MARKS.get(shadow.status, shadow.status)
    lines = [Text(fit(shadow.label, SIDE_WIDTH - 2 - len(status)).rstrip() + f" {status}", style="italic"),
             Text(f" {shadow.foundation:>3}/{total} {shadow.moves:>3}m"[:SIDE_WIDTH - 1], style="dim italic")]
    words = gap_words(state.ghost, gap(state), short=True)
    return lines + ([Text(f" {words}"[:SIDE_WIDTH - 1], style="yellow")] if words else [])


def ghost_result(state: RaceState) -> str:
    """The results' line of a ghost race: ``"Against ann's best (0:01.4, resigned): 0.4 s behind ann's best"``;
    ``""`` without a ghost."""
    ghost = state.ghost
    if ghost is None:
        return ""
    words = gap_words(ghost, gap(state)) or "no card up since the deal"
    ended = ENDED_WORDS.get(ghost.status, ghost.status)
    return f"Against {ghost.label} ({clock_tenths(ghost.time_ms)}, {ended}): {words}"


ENDED_WORDS = {"dead": "stuck", "timeout": "time up"}
"""How a game ended in the ghost's results line where the status is not the word: the page's (common.js
``STATUS``), so that both say the same line."""


def _tableau(view: m.WireView, rows: int, room: int) -> list[Text]:
    """The columns, bottom card first; a column longer than ``rows`` shows its first card, ``+k``, then its top."""
    step = COLUMN_WIDTH if len(view.tableau) * COLUMN_WIDTH <= room else 4
    columns: list[list[str]] = []
    for hidden, cards in zip(view.hidden, view.tableau):
        columns.append([UNKNOWN] * hidden + list(cards))
    lines = [Text("".join(f"{i + 1:>2}".ljust(step) for i in range(len(columns))), style="bold")]
    shown: list[list[str]] = []
    for column in columns:
        if len(column) > rows:
            keep = rows - 2
            column = [column[0], f"+{len(column) - keep - 1}"] + column[-keep:]
        shown.append(column)
    depth = max([len(c) for c in shown] + [1])
    for row in range(depth):
        line = Text()
        for index, column in enumerate(shown):
            if row < len(column):
                card = column[row]
                if card.startswith("+"):
                    line.append(f"{card:<{step}}", style="dim")
                else:
                    line.append_text(card_text(card, top=row == len(column) - 1))
                    line.append(" " * (step - 3))
            elif row == 0:
                line.append("·".center(3) + " " * (step - 3), style="dim")
            else:
                line.append(" " * step)
        lines.append(line)
    return lines


def results_lines(results: m.Results, me: str = "") -> list[Text]:
    lines = [Text(" #  name                 status    time     moves undos hints cards", style="bold")]
    for row in results.ranking:
        style = "bold" if row.name == me else ""
        if row.status == "won":
            style += " green"
        name = fit(row.name, 14).rstrip() + " [bot]" if row.bot else row.name  # the server played it: no one's record
        lines.append(Text(f"{row.rank:>2}  {fit(name, 20)} {row.status:<9} {clock(row.time_ms):>7} {row.moves:>6} "
                          f"{row.undos:>5} {row.hints:>5} {row.foundation:>5}", style=style.strip()))
    lines.append(Text(""))
    if not results.seed:  # a daily attempt: the seed stays secret until the day is over
        if results.streak is not None:  # the player's streak as the server recorded it, this day counted
            lines.append(Text(streak_line({"streak": results.streak, "best_streak": results.best_streak or 0,
                                           "freezes": results.freezes or 0}), style="bold"))
        lines.append(Text(f"seed revealed after the day (commitment {results.commitment[:16]}…: SHA-256 of the seed)",
                          style="dim"))
        return lines
    # Two lines: on one, an 80-column screen cut the commitment off (a 32-character seed and nonce fill it).
    lines.append(Text(f"seed {results.seed!r}, nonce {results.nonce}", style="dim"))
    lines.append(Text(f"commitment {results.commitment[:16]}… = SHA-256 of nonce + seed", style="dim"))
    return lines + players_lines(results, me)


def players_lines(results: m.Results, me: str = "") -> list[Text]:
    """What the match did to its named players' histories: each new record (:func:`record_line`; a player's
    screen shows only their own, the 24 rows have no room for everyone's) and each pair's head-to-head over
    all their races (:func:`rivalry_line`); nothing for a server keeping none."""
    mine = any(row.name == me for row in results.ranking)
    lines = [Text(record_line(note, me), style="bold green" if note.name == me else "green")
             for note in results.records if not mine or note.name == me]
    lines += [Text(rivalry_line(pair, me)) for pair in results.head_to_head]
    return [Text(""), *lines] if lines else []


def clock_tenths(ms: int) -> str:
    """``3:31.4``: a time to the tenth of a second (under an hour; longer ones as :func:`clock`), for records,
    which a fraction of a second may break."""
    return clock(ms) if ms >= 3_600_000 else f"{clock(ms)}.{max(0, ms) // 100 % 10}"


def _amount(what: str, value: int) -> str:
    """A record's value in words: ``3:31.4`` (a time), ``212 moves``, ``87 cards up``."""
    if what == "time":
        return clock_tenths(value)
    return plural(value, "move") if what == "moves" else f"{plural(value, 'card')} up"


def deal_words(label: str) -> str:
    """Where a deal's record is, from its label: ``on deal seed 1234``, ``on deal 3f2a9c01be77`` (a chosen
    position's, labelled ``deal 3f2a9c01be77``), ``on the daily of 2026-12-07`` (``daily 2026-12-07``)."""
    if label.startswith("daily "):
        return f"on the daily of {label[len('daily '):]}"
    return f"on {label}" if label.startswith("deal ") else f"on deal {label}"


def record_line(note: m.RecordNote, me: str = "") -> str:
    """A new personal record in words: ``New record on deal seed 1234: 212 moves, 9 fewer than your best``,
    ``New record in classic: 3:31.0, 0:12.5 faster than your best``, ``First win on deal seed 1234: 212 moves``
    (``previous`` -1); another player's starts with their name and says "their best"."""
    where = deal_words(note.deal) if note.deal else f"in {note.variant}"
    amount = _amount(note.what, note.value)
    if note.previous < 0:
        text = (f"first game of {note.variant}: {amount}" if note.what == "cards" else f"first win {where}: {amount}")
    else:
        gain = abs(note.previous - note.value)
        by = {"time": f"{clock_tenths(gain)} faster", "moves": f"{gain} fewer", "cards": f"{gain} more"}[note.what]
        text = f"new record {where}: {amount}, {by} than {'your' if note.name == me else 'their'} best"
    return text[0].upper() + text[1:] if note.name == me else f"{note.name}: {text}"


def rivalry_line(pair: m.Rivalry, me: str = "") -> str:
    """``ann 23-17 bob between the two of them, over all their races (41, 1 drawn)``; ``me`` (the viewer's
    name), when it is ``pair.b``, goes first: ``bob 17-23 ann ...``."""
    if me and me == pair.b:
        pair = m.Rivalry(pair.b, pair.a, pair.b_wins, pair.a_wins, pair.draws, pair.races)
    drawn = f", {pair.draws} drawn" if pair.draws else ""
    return (f"{pair.a} {pair.a_wins}-{pair.b_wins} {pair.b} between the two of them, over all their races "
            f"({pair.races}{drawn})")


def recovery_lines(name: str, code: str, server: str, width: int = 80, *, claimed: bool = True) -> list[str]:
    """What the client says once when a join or a daily attempt claimed ``name`` (``claimed``; else a recovery
    gave a new code, and the first sentence is left out): the recovery code and what it is for (the key itself
    stays in the tokens file), in lines of at most ``width`` cells."""
    command = f"forty-thieves recover {shlex.quote(name)} {code}"
    option = server_option(server)
    typed = ([f"    {command}{option}"] if 4 + len(command) + len(option) <= width or not option
             else [f"    {command} \\", f"      {option.strip()}"])
    intro = wrap(f"{name} is your name on this server now (its key is kept on this machine).", width)
    return [*(intro if claimed else []),
            *wrap("Its recovery code, shown only this once (keep it somewhere safe):", width),
            f"    {code}",
            *wrap("On another machine, or if this one loses the key, it gives the name a new key:", width),
            *typed]


def series_lines(state: RaceState) -> list[Text]:
    """The series standings after a round after the first (rounds won, cards, total time), else nothing."""
    if state.round <= 1 or not state.series:
        return []
    lines = [Text(""), Text(f"Series after round {state.round}", style="bold underline"),
             Text("    name                 rounds won  cards   total time", style="bold")]
    for place, standing in enumerate(state.series, 1):
        style = "bold" if standing.get("name") == state.name else ""
        lines.append(Text(f"{place:>2}  {fit(str(standing.get('name', '')), 20)} {int(standing.get('rounds_won', 0)):>10} "
                          f"{int(standing.get('foundation', 0)):>6} {clock(int(standing.get('time_ms', 0))):>12}",
                          style=style))
    return lines


def plural(count: int, word: str) -> str:
    """``1 player``, ``2 players``, ``0 undos``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def streak_line(figures: dict[str, Any]) -> str:
    """A named player's daily streak in words, from the server's ``streak``, ``best_streak``, ``freezes`` (an
    attempt's answer, a board entry, ``GET /players/{name}``): ``"Streak 5 (best 9) · 1 freeze"``; the pages
    say the same."""
    return (f"Streak {int(figures.get('streak', 0))} (best {int(figures.get('best_streak', 0))}) · "
            f"{plural(int(figures.get('freezes', 0)), 'freeze')}")


def waiting_for(state: RaceState) -> list[str]:
    """The other players still playing (their names, in the standings' order)."""
    return [p.name for p in sorted(state.players.values(), key=lambda p: (-p.foundation, p.moves, p.name))
            if p.name != state.name and p.status == "playing"]


def won_banner(state: RaceState) -> Text:
    """``You won in 4:12, 167 moves``."""
    return Text(f"★ You won in {clock(state.time_ms)}, {plural(state.moves, 'move')} ★", style="bold green")


def _waiting_text(names: list[str]) -> str:
    return "waiting for " + (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0])


def _notice(state: RaceState) -> Text:
    """The line under the board: the last message, or what the position offers."""
    if state.message:
        return Text(state.message, style="yellow")
    if state.phase == "preparing":
        return Text("Preparing a solvable deal (a classic one may take a while)…", style="cyan")
    if state.phase == "lobby":
        return Text("Type ready when you are" + (" (or start to start now, you are the host)" if state.host else ""),
                    style="cyan")
    if state.phase == "countdown":
        return Text("Get ready: the deal comes at the start instant.", style="cyan")
    if state.phase == "finished" and state.daily:
        return Text("Your attempt is over: forty-thieves daily --leaderboard shows the board. q quits", style="cyan")
    if state.phase == "finished":
        others = [name for name in state.rematch if name != state.name]
        if others:  # who is waiting says the match is over: the line keeps to 80 columns with a name of 16
            wanted = f"{', '.join(others)} want{'s' if len(others) == 1 else ''} a rematch."
            return Text(f"{wanted} Type rematch for the next round; q quits.", style="cyan")
        return Text("The match is over. Type rematch for the next round; q quits.", style="cyan")
    if state.status == "dead":
        choices = (["u to undo"] if state.can("u") else []) + (["restart"] if state.may_restart else []) + ["resign"]
        choice = ", ".join(choices[:-1]) + f", or {choices[-1]}" if len(choices) > 1 else choices[0]
        return Text(f"No card can reach a foundation any more: {choice}.", style="bold red")
    if state.status == "won":
        others = waiting_for(state)
        return Text(f"You won! {_waiting_text(others)}…" if others else "You won!", style="bold green")
    if state.status in ENDED:
        others = waiting_for(state)
        return Text(f"Your game ended ({state.status}); {_waiting_text(others) if others else 'waiting for the others'}…",
                    style="cyan")
    if state.can("finish"):
        return Text("Everything can go up: type finish", style="bold green")
    return Text("")


FINAL_HELP_LINE = "q quits (the results stay printed)"


def help_line(state: RaceState) -> str:
    """The race screen's last line: the keys and words that do something in this match (``u undo`` unless its
    undo policy is ``none``, ``hint`` only where it allows hints: the server refuses them otherwise)."""
    settings = state.settings
    undo = settings is None or settings.undo != "none"
    hints = settings is not None and settings.hints
    return "  ".join(["? help", "Tab: legal moves", "37 = 3-7", "w-f", "s draw", *(["u undo"] if undo else []),
                      *(["hint"] if hints else []), "resign", "q quit"])


def screen(state: RaceState, width: int = 80, height: int = 24, now: int | None = None) -> list[Text]:
    """The race screen as ``height - 1`` lines of at most ``width`` cells (the prompt takes the last line)."""
    now = now_ms() if now is None else now
    lines = [_header(state, width, now)]
    body_rows = height - 1 - FOOTER_LINES
    body: list[Text] = []
    view = state.view
    offset = 2 if view is not None else 0
    if state.phase == "finished" and state.results is not None:
        round_label = f" of round {state.round}" if state.round > 1 else ""
        body = [won_banner(state), Text("")] if state.status == "won" else []
        body += [Text(f"Results{round_label}", style="bold underline")] + results_lines(state.results, state.name)
        body += [Text(ghost_result(state), style="yellow")] if state.ghost is not None else []
        body += series_lines(state)
    elif view is not None and state.status == "won":  # nothing left on the table: the win, and who still plays
        others = waiting_for(state)
        body = [_foundations(view), Text(""), Text(""), won_banner(state), Text("")]
        if others:
            body.append(Text(_waiting_text(others) + " (still playing)", style="cyan"))
    elif view is not None:
        body = [_foundations(view), _stock_waste(state, view, width)]
        body += _tableau(view, body_rows - len(body) - 1, width - SIDE_WIDTH)
    else:
        body, offset = _lobby(state, width)
    side = _players(state, now)
    main_width = width - SIDE_WIDTH
    for row in range(body_rows):
        left = body[row] if row < len(body) else Text("")
        if state.phase == "finished" or row < offset:
            lines.append(_crop(left, width))
            continue
        right = side[row - offset] if row - offset < len(side) else Text("")
        left = _crop(left, main_width)
        left.pad_right(main_width - left.cell_len)
        lines.append(Text.assemble(left, _crop(right, SIDE_WIDTH)))
    lines.append(_crop(_notice(state), width))
    lines.append(Text((FINAL_HELP_LINE if state.phase == "finished" else help_line(state))[:width], style="dim"))
    return lines


def join_lines(code: str, server: str, width: int) -> list[str]:
    """The command friends type to join, indented by two; when it is wider than ``width``, cut before
    ``--server`` with a shell line continuation (pasted whole, the two lines still run as one command)."""
    command = f"forty-thieves join {code} --name NAME"
    option = server_option(server)
    if 2 + len(command) + len(option) <= width or not option:
        return [f"  {command}{option}"]
    return [f"  {command} \\", f"   {option}"]


def _lobby(state: RaceState, width: int = 80) -> tuple[list[Text], int]:
    """The lobby's lines, and how many of the first ones take the full width (the players' panel starts below
    them: the join command must not be cut)."""
    lines = [Text(f"Match {state.code}", style="bold"), Text("")]
    players = state.settings.players if state.settings else 2
    if state.settings:
        s = state.settings
        limit = clock(s.time_limit_s * 1000) if s.time_limit_s else "none"
        lines.append(Text(f"{s.variant}, {plural(s.players, 'player')}, time limit {limit}, undo {s.undo}, "
                          f"hints {'on' if s.hints else 'off'}"))
        if s.chosen_deal:
            lines.append(Text("The host chose this deal: they may have seen it before.", style="yellow"))
    if players > 1:
        lines.append(Text("Friends join with:"))
        lines += [Text(line, style="bold") for line in join_lines(state.code, state.public_server or state.server,
                                                                  width)]
    if state.claimed is not None:
        name, code = state.claimed
        lines += [Text(f"{name} is your name on this server now. Its recovery code:", style="yellow"),
                  Text(f"  {code}  (printed again when you quit: keep it safe)", style="bold yellow")]
    full = len(lines)
    if state.commitment:
        lines.append(Text(f"commitment {state.commitment[:32]}…", style="dim"))
    if state.phase == "countdown":
        lines += [Text(""), Text(f"Starting in {state.countdown_s(now_ms()):.1f} s", style="bold green")]
    return lines, full


def to_ansi(lines: list[Text], width: int = 80, color: bool = True) -> str:
    """Render lines to ANSI text (no colour when ``color`` is False or ``NO_COLOR`` is set)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=True, color_system="standard" if color else None,
                      no_color=(not color) or None, legacy_windows=False, highlight=False, emoji=False)
    for line in lines:
        line.no_wrap = True
        line.overflow = "crop"
        console.print(line, end="\n", soft_wrap=False, crop=True)
    return buffer.getvalue()


# ---------------------------------------------------------------- plain layout


def plain_view(view: m.WireView) -> str:
    """A view in the RULES.md notation: redacted position text (``Stock: 52``, ``??``)."""
    lines = ["Foundations: " + " ".join(view.foundations), f"Stock: {view.stock}",
             "Waste: " + " ".join(view.waste), f"Redeals left: {view.redeals_left}"]
    for i, (hidden, cards) in enumerate(zip(view.hidden, view.tableau)):
        lines.append(f"{i + 1}: " + " ".join([UNKNOWN] * hidden + list(cards)))
    return "\n".join(line.rstrip() for line in lines)


def plain(state: RaceState, now: int | None = None) -> str:
    """The plain layout: a status line, the position in notation, the players, the notice."""
    now = now_ms() if now is None else now
    variant = state.settings.variant if state.settings else ""
    head = f"match {state.code} {variant} {state.phase}: moves {state.moves}, time {clock(state.elapsed_ms(now))}"
    out = [f"{head}, status {state.status}"]
    if state.phase == "finished" and state.results is not None:
        out += [t.plain for t in results_lines(state.results, state.name) + series_lines(state)]
        out += [ghost_result(state)] if state.ghost is not None else []
    elif state.view is not None:
        out.append(plain_view(state.view))
        out.append("legal: " + " ".join(x.command for x in state.legal))
    for line in state.players.values():
        out.append(f"player {line.name}: {line.foundation} cards, {line.moves} moves, {line.status}")
    shadow = ghost_now(state, now)
    if shadow is not None and state.ghost is not None:
        words = gap_words(state.ghost, gap(state))
        out.append(f"ghost {shadow.label}: {shadow.foundation} cards, {shadow.moves} moves, {shadow.status}"
                   + (f", {words}" if words else ""))
    notice = _notice(state).plain
    if notice:
        out.append(notice)
    return "\n".join(out)
