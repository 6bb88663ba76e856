"""The interactive race screen: prompt_toolkit around the rich rendering.

A full-screen prompt_toolkit application with two parts: the race screen
(:func:`client_cli.render.screen`, redrawn whenever a message arrives and
twice a second for the clock) and a one-line prompt with history (Up/Down)
and tab completion of the legal moves the server sent. What is typed is
resolved by :func:`client_cli.commands.resolve`; ``?`` shows the help in
place of the board until the next line.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable

from prompt_toolkit.application import Application, get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import BufferControl, FormattedTextControl, HSplit, Layout, Window
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.output.color_depth import ColorDepth
from rich.text import Text

from protocol import messages as m

from .commands import HELP, completions, resolve
from .race import RaceClient
from .render import screen, to_ansi
from .server_link import ClientError
from .state import NOT_STARTED, RaceState


def words_now(state: RaceState) -> tuple[str, ...]:
    """The client's words that mean something now: ``ready``/``start`` before the deal, ``resign`` (and ``hint``
    where the match allows it) after it; the server refuses the others."""
    if state.phase in ("preparing", "lobby", "countdown"):
        return ("ready", "start", "help", "quit")
    restart = ("restart",) if state.may_restart else ()
    if state.phase == "finished":
        return ("help", "quit") if state.daily else ("rematch", *restart, "help", "quit")
    hints = ("hint",) if state.settings is not None and state.settings.hints else ()
    return (*hints, "resign", *restart, "help", "quit")


class LegalCompleter(Completer):
    """Completes the legal moves of the last position the server sent (then the client's own words)."""

    def __init__(self, client: RaceClient) -> None:
        self.client = client

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        prefix = document.text_before_cursor
        for word in completions(prefix, self.client.state.legal, words_now(self.client.state)):
            yield Completion(word, start_position=-len(prefix))


CONFIRM_WORDS = frozenset({"resign", "yes", "y"})
"""What confirms a ``resign`` typed just before (anything else keeps the game going)."""


def completion_line(buffer: Buffer, width: int) -> Text | None:
    """The completions Tab offers, on one line in place of the help line (a menu drawn over the board hid the
    message line), the chosen one in reverse video; ``None`` when Tab is not completing."""
    state = buffer.complete_state
    if state is None or not state.completions:
        return None
    line = Text("Tab: ", style="dim")
    for i, completion in enumerate(state.completions):
        line.append(completion.text, style="reverse" if i == state.complete_index else "")
        line.append(" ")
    line.truncate(width, overflow="ellipsis")
    return line


class RaceScreen:
    """The application and what the player's lines do (see the module docstring)."""

    def __init__(self, client: RaceClient, *, daily: bool = False) -> None:
        self.client = client
        self.daily = daily
        self.show_help = False
        self.confirming_resign = False
        self.color = not os.environ.get("NO_COLOR")
        self.runner: asyncio.Future[None] | None = None
        self.offers: asyncio.Future[None] | None = None
        """After a round's results: who asks for the next round (:meth:`RaceClient.follow_rematch`)."""
        self.error: BaseException | None = None
        client.on_change = self.refresh
        self.claimed: tuple[str, str] | None = None
        """``(name, recovery code)`` when the join claimed the name: printed after the screen, where it stays."""
        client.on_claim = lambda name, code: setattr(self, "claimed", (name, code))
        self.buffer = Buffer(completer=LegalCompleter(client), history=InMemoryHistory(), multiline=False,
                             complete_while_typing=False, accept_handler=self._accept)
        board = Window(FormattedTextControl(self._board, focusable=False), wrap_lines=False, always_hide_cursor=True)
        prompt = Window(BufferControl(self.buffer, input_processors=[BeforeInput("> ", style="bold")]), height=1)
        root = HSplit([board, prompt])
        keys = KeyBindings()

        @keys.add("c-c")
        @keys.add("c-d")
        def _quit(event: object) -> None:
            get_app().exit()

        self.app: Application[None] = Application(
            layout=Layout(root, focused_element=prompt), key_bindings=keys, full_screen=True, refresh_interval=0.5,
            color_depth=ColorDepth.DEPTH_4_BIT if self.color else ColorDepth.DEPTH_1_BIT, mouse_support=False)

    def refresh(self) -> None:
        try:
            self.app.invalidate()
        except Exception:  # noqa: BLE001, S110 - before the app runs there is nothing to redraw
            pass

    def _board(self) -> ANSI:
        size = self.app.output.get_size()
        width, height = max(40, size.columns), max(12, size.rows)
        if self.show_help:
            lines = [Text(line) for line in HELP.splitlines()]
        else:
            lines = screen(self.client.state, width, height)
            offered = completion_line(self.buffer, width)
            if offered is not None:
                lines[-1] = offered
        return ANSI(to_ansi(lines, width, self.color).rstrip("\n"))

    def _accept(self, buffer: Buffer) -> bool:
        text = buffer.text
        self.show_help = False
        state = self.client.state
        resolved = resolve(text, state.legal, state.view)
        action = resolved.action
        confirmed = self.confirming_resign and text.strip().lower() in CONFIRM_WORDS
        self.confirming_resign = False
        if action == "resign" and not confirmed and state.phase == "playing" and not state.my_game_over:
            self.confirming_resign = True
            state.message = "Resign for good? Type resign again (or y) to resign; anything else plays on"
            self.refresh()
            return False
        if confirmed:
            action = "resign"
        if action == "help":
            self.show_help = True
        elif action == "quit":
            self.app.exit()
        elif action == "error":
            state.message = resolved.message
        elif action == "ready":
            asyncio.ensure_future(self.client.ready())
            state.message = "ready: the match starts when everyone is"
        elif action == "start":
            asyncio.ensure_future(self.client.start())
            state.message = "" if self.client.host_token else "only the host (who created the match) can start it"
        elif action == "rematch":
            if state.daily:
                state.message = "the daily challenge has no rematch: one attempt a day"
            elif state.phase != "finished":
                state.message = "rematch comes after the results"
            else:
                state.message = "asking for a rematch…"
                asyncio.ensure_future(self._rematch())
        elif action == "restart":
            if not state.may_restart:
                state.message = ("restart is only for a game alone, once dealt: not in a race nor the daily "
                                 "challenge (restarting is fair only alone)")
            else:
                state.message = "restarting: this deal again, from the start…"
                asyncio.ensure_future(self._restart())
        elif action in ("play", "resign", "hint"):
            if state.phase != "playing":
                state.message = NOT_STARTED if state.phase != "finished" else "the match is over"
            else:
                future = (self.client.play(resolved.command) if action == "play" else
                          self.client.resign() if action == "resign" else self.client.hint())
                if action == "play" and resolved.command != text.strip():
                    state.message = f"{text.strip()} -> {resolved.command}"
                future.add_done_callback(lambda f: self.refresh())
        self.refresh()
        return False

    async def _rematch(self) -> None:
        """``rematch`` on the results screen: into the next round (see :meth:`RaceClient.rematch`), raced on
        this same screen; a refusal shows as the message."""
        try:
            answer = await self.client.rematch()
        except ClientError as error:
            self.client.state.message = str(error)
            self.refresh()
            return
        self.client.state.message = f"round {answer.round}: match {answer.match}"
        self._run_client()

    async def _restart(self) -> None:
        """``restart`` alone: resign the game if it still plays (a game alone ends its match: the results), then
        the next round on the same deal (:meth:`RaceClient.restart`), raced on this same screen; a refusal
        shows as the message."""
        client = self.client
        try:
            if client.state.phase == "playing" and not client.state.my_game_over:
                reply = await client.resign()
                if not isinstance(reply, m.PositionReply):  # refused: the game goes on, its reason on the line
                    self.refresh()
                    return
            await client.done.wait()  # the results: the match's socket is left after them
            if self.runner is not None:
                await asyncio.gather(self.runner, return_exceptions=True)
            self._stop_offers()
            answer = await client.restart()
        except ClientError as error:
            client.state.message = str(error)
            self.refresh()
            return
        client.state.message = f"round {answer.round}: the same deal again (match {answer.match})"
        self._run_client()

    def _run_client(self) -> None:
        """Run the client (the match, or the next round after a rematch); a failure ends the screen."""
        runner = self.runner = asyncio.ensure_future(self.client.run())

        def finished(task: asyncio.Future[None]) -> None:
            if not task.cancelled() and task.exception() is not None:
                self.error = task.exception()
                self.app.exit()
            elif not task.cancelled() and self.client.state.results is not None and not self.daily:
                self._stop_offers()
                self.offers = asyncio.ensure_future(self.client.follow_rematch())
            self.refresh()

        runner.add_done_callback(finished)

    def _stop_offers(self) -> None:
        if self.offers is not None and not self.offers.done():
            self.offers.cancel()

    async def run(self) -> int:
        """Run the screen and the client together; 0 when the match ended with results, 1 when left early."""
        self._run_client()
        try:
            await self.app.run_async()
        finally:
            self._stop_offers()
            if self.offers is not None:
                await asyncio.gather(self.offers, return_exceptions=True)
            runner = self.runner
            if runner is not None and not runner.done():
                runner.cancel()
                await asyncio.gather(runner, return_exceptions=True)
            await self.client.close()
        if self.claimed is not None:
            from .render import recovery_lines

            print("\n".join(recovery_lines(*self.claimed, self.client.server)))
        if self.error is not None:
            raise self.error
        state = self.client.state
        if state.results is not None:
            from .render import ghost_result, results_lines, series_lines

            lines = results_lines(state.results, state.name) + series_lines(state)
            print("\n".join([line.plain for line in lines] + ([ghost_result(state)] if state.ghost else [])))
            return 0
        if self.daily and state.phase in ("preparing", "lobby", "countdown", "playing") and not state.my_game_over:
            print("Left today's daily challenge; your attempt goes on and its clock runs.\n"
                  "Run the same daily command to come back.")
            return 0  # leaving is how the daily is paused: the command did what was asked
        if state.phase == "playing" and not state.my_game_over:
            print(f"Left match {state.code}; your game goes on.\nRun the same join command to come back.")
        return 1


def quiet_listener(message: m.ServerMessage) -> None:
    """No output besides the screen."""
