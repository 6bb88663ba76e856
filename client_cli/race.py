"""One player in one match: joining, resuming, sending commands, reconnecting.

:class:`RaceClient` owns the player's connection. :meth:`RaceClient.run`
connects, says ``hello``, joins (or resumes with the token kept by
:class:`~client_cli.tokens.TokenStore`), then feeds every message to the
:class:`~client_cli.state.RaceState` and to an optional listener until the
results are in. When the connection drops (the server restarted, the
network broke) it reconnects with exponential backoff and jitter and
resumes: the server rotates the token on every resume and the new one is
written at once; commands sent but not answered are sent again with the
same ``seq`` (the server acknowledges a repeated ``seq`` again and never
applies it twice), and so is one answered ``internal`` or
``unknown_outcome`` (Redis failed while storing it, a failover say), a few
times with backoff.

Numbering: ``play`` and ``resign`` count 1, 2, 3, ... over the commands
the server accepted, and ``hint`` counts its own 1, 2, 3, ... over the
hints answered; the server refuses a number that skips ahead
(``seq_gap``). So one numbered request is out at a time: the next is
numbered when the one before has been answered, and a refused one
(``rejected``, or an ``error`` carrying its ``seq``) leaves its number to
the next. After a
reconnect ``started`` says where both sequences stand.

The interactive screen is :mod:`client_cli.ui`; the scripted mode is
:func:`run_script` here.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shlex
import sys
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any

import msgspec
import websockets

from protocol import messages as m

from .commands import resolve
from .server_link import ClientError, Connection, ServerRefused, Unreachable, backoff, match_state, server_option
from .state import ENDED, RaceState, with_card_symbols
from .tokens import TokenStore

GIVE_UP_S = 120.0
"""Seconds of failed reconnects after which the client stops trying."""

RETRIES = 8
"""Times a play, resign or hint answered ``internal`` or ``unknown_outcome`` is sent again (with the reconnect
backoff's delays, about 20 s in all) before that error is its answer."""

Listener = Callable[[m.ServerMessage], None]


class RaceClient:
    """One player's side of a match (see the module docstring)."""

    def __init__(self, server: str, code: str, name: str | None, *, store: TokenStore | None = None,
                 host_token: str | None = None, auto_ready: bool = False, listener: Listener | None = None,
                 on_change: Callable[[], None] | None = None) -> None:
        self.server, self.code = server, code
        self.store = store or TokenStore()
        entry = self.store.get(server, code)
        players = entry.get("players", {}) if isinstance(entry.get("players"), dict) else {}
        if name is None and len(players) == 1:
            name = next(iter(players))
        if name is None:
            name = entry.get("last_name")
        if not name:
            raise ClientError("give your display name with --name NAME")
        self.name: str = name
        self.host_token = host_token or self.store.host_token(server, code, name)
        self.auto_ready = auto_ready
        self.listener = listener
        self.on_change = on_change or (lambda: None)
        self.on_claim: Callable[[str, str], None] = lambda name, code: None
        """Called with the name and its recovery code when a join claimed the name (once: the server shows
        the code only then); the key itself is kept in the tokens file."""
        self.state = RaceState(server=server, code=code, name=name, host=bool(self.host_token))
        self.connection: Connection | None = None
        self.seq = 0
        """The last ``play``/``resign`` seq the server accepted (``started``, ``position``): the next is this + 1."""
        self.hints_used = 0
        """Hints the server answered (``started``, ``suggestion``): the next ``hint`` seq is this + 1."""
        self.pending: dict[tuple[str, int], m.ClientMessage] = {}
        """Numbered requests sent and not answered, by (sequence, seq): sent again after a reconnect."""
        self.waiting: dict[tuple[str, int], asyncio.Future[m.ServerMessage]] = {}
        self._refusals_then: dict[tuple[str, int], int] = {}
        """Per numbered request out, :attr:`RaceState.refusals` when the player typed it."""
        self._retries: dict[tuple[str, int], Iterator[tuple[int, float]]] = {}
        """Per numbered request out, its retries after ``internal`` / ``unknown_outcome`` still to come: (try, delay)."""
        self._numbering = asyncio.Lock()
        """Held from numbering a request until its answer: one numbered request out at a time."""
        self.done = asyncio.Event()
        self.started = asyncio.Event()
        self.fatal: ClientError | None = None
        self._ping_sent: dict[int, float] = {}
        self._allowance = 0.0
        self._allowance_at = 0.0
        self._pacing = asyncio.Lock()
        self._ready_after_lobby = False
        """Say ready when the next ``lobby`` frame shows the match still in its lobby (set by a resume)."""

    # ------------------------------------------------------------ the connection loop

    async def run(self) -> None:
        """Connect and play until the results are in. Raises :class:`ClientError` on what retrying cannot mend."""
        delays = backoff()
        failing_since: float | None = None
        first = True
        while not self.done.is_set():
            try:
                connection = await Connection.open(self.server)
            except Unreachable as error:
                if first:
                    raise
                failing_since = failing_since or time.monotonic()
                if time.monotonic() - failing_since > GIVE_UP_S:
                    raise Unreachable(self._gave_up(error), error.cause) from None
                self.state.message = "connection lost: reconnecting…"
                self.on_change()
                await asyncio.sleep(next(delays))
                continue
            self.connection = connection
            try:
                await self._enter(connection)
                first, failing_since, delays = False, None, backoff()
                self.state.connected = True
                if self.state.message.startswith("connection lost"):
                    self.state.message = "reconnected"
                self.on_change()
                await self._ping()
                asyncio.ensure_future(self._refresh_standings())  # progress sent while we were away
                for message in list(self.pending.values()):
                    await connection.send(message)
                await self._receive(connection)
            except (websockets.ConnectionClosed, OSError):
                pass
            finally:
                self.connection = None
                self.state.connected = False
                await connection.close()
            if self.fatal is not None:
                raise self.fatal
            if not self.done.is_set():
                self.state.message = "connection lost: reconnecting…"
                self.on_change()
                await asyncio.sleep(next(delays))

    def _gave_up(self, error: Unreachable) -> str:
        """What to tell the player when the server went away mid-match and :data:`GIVE_UP_S` of reconnecting
        failed: what happened, that the game is kept, and the command that resumes it (not the advice for a
        wrong address: this address worked until the connection dropped)."""
        resume = f"forty-thieves join {self.code} --name {shlex.quote(self.name)}{server_option(self.server)}"
        return (f"lost the connection to the server at {self.server} and gave up reconnecting after "
                f"{GIVE_UP_S:.0f} s ({error.cause or error}). The server keeps your game (its time limit still "
                f"counts); once the server is back, resume it with: {resume}")

    async def _enter(self, connection: Connection) -> None:
        """Resume with a kept token, else join; store the (new) token. With ``auto_ready``, say ready: at once
        after a join (the match is in its lobby), after a resume only if the ``lobby`` frame that follows says
        it still is (a ready to a started or ended match is refused, and the refusal showed on the screen)."""
        token = self.store.get(self.server, self.code).get("players", {}).get(self.name)
        if token:
            await connection.send(m.Resume(self.code, token))
            reply = await self._until_joined(connection)
            if isinstance(reply, m.Error) and reply.code == "bad_token":
                token = None  # a token of another server's Redis, or an expired match: join anew
            elif isinstance(reply, m.Error):
                raise self._fail(await self._refused(reply))
        if not token:
            await connection.send(m.Join(self.code, self.name, player_key=self.store.player_key(self.server, self.name)))
            reply = await self._until_joined(connection)
            if isinstance(reply, m.Error):
                raise self._fail(await self._refused(reply))
        assert isinstance(reply, m.Joined)
        self._keep_token(reply.token)
        if reply.player_key:  # this join claimed the name: its key, for every later race and daily of it
            self.store.keep_player_key(self.server, reply.name, reply.player_key)
        if reply.recovery_code:
            self.state.claimed = (reply.name, reply.recovery_code)
            self.on_claim(reply.name, reply.recovery_code)
        self.state.apply(reply)
        self._emit(reply)
        self._ready_after_lobby = False
        if self.auto_ready and not token:
            await connection.send(m.Ready())
        elif self.auto_ready:
            self._ready_after_lobby = True

    async def _refused(self, reply: m.Error) -> ServerRefused:
        """A refused join or resume, as the user reads it: for a match that has ended, the server's message says
        where its results are, and this adds the client's command that prints them. A join by the code of an
        ended round goes on to its next rounds (``next_round``), as the server does, so the command names the
        round the server's message names, not the code that was typed."""
        message = reply.message
        if reply.code == "bad_token":  # a claimed name without its key here (see client_cli/players.py)
            message += (f". If the name is yours, its recovery code gives this machine a new key: forty-thieves "
                        f"recover {shlex.quote(self.name)} CODE{server_option(self.server)}")
        if reply.code == "already_started":
            code, ended = self.code, False
            try:
                for _ in range(100):  # the server's bound on following rounds (server.match.rounds joinable)
                    public = await match_state(self.server, code)
                    ended = public.get("state") == "finished"
                    following = public.get("next_round")
                    if not ended or not following:
                        break
                    code = str(following)
            except ClientError:
                pass  # a round no longer kept: the last one read stands
            if ended:
                message += f" (forty-thieves watch {code}{server_option(self.server)} prints them)"
        return ServerRefused(reply.code, message)

    def _fail(self, error: ClientError) -> ClientError:
        self.fatal = error
        return error

    async def _until_joined(self, connection: Connection) -> m.Joined | m.Error:
        while True:
            message = await asyncio.wait_for(connection.recv(), 30)
            if isinstance(message, (m.Joined, m.Error)):
                return message

    def _keep_token(self, token: str) -> None:
        self.store.keep_player(self.server, self.code, self.name, token)
        if self.host_token:
            self.store.keep_host(self.server, self.code, self.name, self.host_token)

    async def _ping(self) -> None:
        nonce = len(self._ping_sent) + 1
        self._ping_sent[nonce] = time.time() * 1000
        await self.send(m.Ping(nonce))

    async def _receive(self, connection: Connection) -> None:
        while True:
            message = await connection.recv()
            await self._handle(message)
            if self.fatal is not None or self.done.is_set():
                return

    async def _handle(self, message: m.ServerMessage) -> None:
        before = self.state.phase
        self.state.apply(message)
        match message:
            case m.Pong(nonce=nonce, server_time_ms=server_ms):
                sent = self._ping_sent.get(nonce)
                if sent is not None:
                    self.state.clock_offset_ms = int(server_ms - (sent + time.time() * 1000) / 2)
                return
            case m.Lobby(state=state) if self._ready_after_lobby:  # the first lobby frame after a resume
                self._ready_after_lobby = False
                if state in ("preparing", "lobby"):
                    await self.send(m.Ready())
            case m.Lobby(state="lobby") if self.auto_ready and before == "preparing":
                await self.send(m.Ready())  # readiness sent while the deal was prepared does not start the match
            case m.Started(seq=seq, hints=hints):
                self.seq, self.hints_used = max(self.seq, seq), max(self.hints_used, hints)
                self.started.set()
                if not message.legal:
                    asyncio.ensure_future(self._learn_status())
            case m.PositionReply(seq=seq) | m.Rejected(seq=seq):
                if isinstance(message, m.PositionReply):
                    self.seq = max(self.seq, seq)
                    # Its answer clears what the line showed when the command was typed, not a refusal that came
                    # after (typed ahead: "1-2" refused while "s" waited; the reason was never on the screen).
                    if self._refusals_then.get(("command", seq)) == self.state.refusals:
                        self.state.message = ""
                self._answer(("command", seq), message)
            case m.Suggestion(seq=seq, hints=hints):
                self.hints_used = max(self.hints_used, hints)
                self._answer(("hint", seq), message)
            case m.Error(code="rate_limited") if self.waiting:
                asyncio.ensure_future(self._send_again(min(self.waiting)))  # refused unread: send it again later
                return
            case m.Error(code="internal" | "unknown_outcome" as code, seq=int(seq)) if self._retry_later(seq, code):
                return  # sent again shortly: the player sees the answer of the retry
            case m.Error(code="replaced"):
                self.fatal = ClientError("another client resumed this game with your token and took over")
            case m.Error(code="no_match", message=text):  # the server lost the match: nothing left to play
                self.fatal = ClientError(text)
            case m.Error(code="closed", message=text):  # the match never started: nothing left to wait for
                self.fatal = ClientError(text)
            case m.Error(seq=int(seq)):  # it names the numbered request it refuses (others answer no request)
                for key in [key for key in self.waiting if key[1] == seq]:  # one out at a time: at most one
                    self._answer(key, message)
            case m.Results():
                await self._learn_series()
                self.done.set()
        self._emit(message)
        self.on_change()

    async def _refresh_standings(self) -> None:
        """Everyone's public progress from ``GET /matches/{code}`` (events missed while disconnected)."""
        try:
            public = await match_state(self.server, self.code)
        except ClientError:
            return
        if public.get("state") not in ("playing", "finished"):
            return
        for player in public.get("players", []):
            name = player.get("name")
            if name and name != self.name:
                line = self.state.line(name)
                line.moves, line.foundation = int(player.get("moves", 0)), int(player.get("foundation", 0))
                line.status, line.time_ms = str(player.get("status", line.status)), int(player.get("time_ms", 0))
        self.on_change()

    async def _learn_series(self) -> None:
        """The match's round and, after the first, the series standings (``GET /matches/{code}``)."""
        try:
            public = await match_state(self.server, self.code)
        except ClientError:
            return
        self.state.round = int(public.get("round", 1))
        self.state.series = list(public.get("series", {}).get("standings", []))

    async def _learn_status(self) -> None:
        """A resumed game with no legal moves has ended: read my status from the public state."""
        try:
            public = await match_state(self.server, self.code)
        except ClientError:
            return
        for player in public.get("players", []):
            if player.get("name") == self.name and player.get("status") in ENDED:
                self.state.status = player["status"]
                self.state.time_ms = int(player.get("time_ms", 0))
                self.on_change()

    def _answer(self, key: tuple[str, int], message: m.ServerMessage) -> None:
        """``message`` answers the numbered request ``key`` (sequence, seq), if it is waiting."""
        self.pending.pop(key, None)
        future = self.waiting.pop(key, None)
        if future is not None and not future.done():
            future.set_result(message)

    async def _send_again(self, key: tuple[str, int], delay: float = 1.0) -> None:
        await asyncio.sleep(delay)
        message = self.pending.get(key)
        if message is not None:
            await self.send(message)

    def _retry_later(self, seq: int, code: str) -> bool:
        """The numbered request ``seq`` got ``internal`` (Redis failed while storing it: not stored, nothing
        changed) or ``unknown_outcome`` (Redis could not say in time whether it was): schedule the same frame
        again, as protocol/README.md says, unless it has been retried :data:`RETRIES` times already; True
        when it was scheduled. Safe whatever Redis holds: a seq already stored is acknowledged again, never
        applied twice. The delays are the reconnect backoff's (a Redis failover takes seconds)."""
        key = next((key for key in self.waiting if key[1] == seq), None)
        if key is None:
            return False
        retry = next(self._retries.setdefault(key, enumerate(itertools.islice(backoff(), RETRIES), 1)), None)
        if retry is None:
            return False
        tries, delay = retry
        self.state.message = f"the server could not store it ({code}): sending it again, try {tries} of {RETRIES}"
        self._refusals_then[key] = self.state.refusals  # the retry's answer clears this line
        asyncio.ensure_future(self._send_again(key, delay))
        self.on_change()
        return True

    async def _pace(self) -> None:
        """Stay under the server's message rate (``welcome``): a bucket of 10 at 90 % of the rate."""
        connection = self.connection
        rate = connection.welcome.messages_per_second * 0.9 if connection else 0.0
        if rate <= 0:
            return
        async with self._pacing:
            now = time.monotonic()
            self._allowance = min(10.0, self._allowance + (now - self._allowance_at) * rate)
            self._allowance_at = now
            if self._allowance < 1.0:
                await asyncio.sleep((1.0 - self._allowance) / rate)
                self._allowance_at = time.monotonic()
                self._allowance = 1.0
            self._allowance -= 1.0

    def _emit(self, message: m.ServerMessage) -> None:
        if self.listener is not None:
            self.listener(message)

    # ------------------------------------------------------------ commands

    async def send(self, message: m.ClientMessage) -> bool:
        """Send now if connected; False when not (numbered commands are sent again on reconnect)."""
        await self._pace()
        connection = self.connection
        if connection is None:
            return False
        try:
            await connection.send(message)
            return True
        except (websockets.ConnectionClosed, OSError):
            return False

    def _numbered(self, sequence: str, make: Callable[[int], m.ClientMessage]) -> asyncio.Future[m.ServerMessage]:
        """Send ``make(seq)`` once every numbered request before it has been answered; the future gets the answer."""
        future: asyncio.Future[m.ServerMessage] = asyncio.get_running_loop().create_future()
        asyncio.ensure_future(self._send_numbered(sequence, make, future, self.state.refusals))
        return future

    async def _send_numbered(self, sequence: str, make: Callable[[int], m.ClientMessage],
                             future: asyncio.Future[m.ServerMessage], refusals: int) -> None:
        """Number a request of ``sequence`` (``"command"``: play and resign; ``"hint"``) one past the last the
        server accepted, send it, and wait for its answer before the next request is numbered: a refused request
        leaves its number to the next, so no number is ever skipped (the server refuses a skip: ``seq_gap``).
        ``refusals``: the state's count of refusals when the player typed it (see :attr:`RaceState.refusals`)."""
        async with self._numbering:
            seq = (self.hints_used if sequence == "hint" else self.seq) + 1
            key = (sequence, seq)
            self.waiting[key] = future  # _answer sets it
            self._refusals_then[key] = refusals
            self.pending[key] = make(seq)  # sent again after a reconnect until answered
            try:
                await self.send(self.pending[key])
                await asyncio.wait({future})  # until _answer sets it (no caller cancels it)
            finally:
                self.waiting.pop(key, None)
                self.pending.pop(key, None)
                self._refusals_then.pop(key, None)
                self._retries.pop(key, None)

    def play(self, command: str) -> asyncio.Future[m.ServerMessage]:
        """Send a canonical command; the future gets its ``position``, ``rejected`` or ``error``."""
        return self._numbered("command", lambda seq: m.Play(seq, command))

    def resign(self) -> asyncio.Future[m.ServerMessage]:
        """Give up; the future gets the ``position`` (status ``resigned``) or the ``error``."""
        return self._numbered("command", lambda seq: m.Resign(seq))

    def hint(self) -> asyncio.Future[m.ServerMessage]:
        """Ask for a hint; the future gets the ``suggestion`` or the ``error``."""
        return self._numbered("hint", lambda seq: m.Hint(seq))

    async def ready(self) -> None:
        """Say ready now, and again after a reconnect or once a preparing match opens its lobby."""
        self.auto_ready = True
        await self.send(m.Ready())

    async def start(self) -> bool:
        """The host starts the match now; False when this player has no host token."""
        if not self.host_token:
            return False
        await self.send(m.Start(self.host_token))
        return True

    async def restart(self) -> m.NextRound:
        """After the results of a game alone (not a daily attempt): the next round on the same deal
        (``restart``), taken as :meth:`rematch` takes its round. Raises as :meth:`rematch` does, and
        :class:`ServerRefused` ``no_restart`` in a race or a daily attempt."""
        return await self.rematch(m.Restart())

    async def rematch(self, request: m.Rematch | m.Restart | None = None) -> m.NextRound:
        """After the results: ask for the next round (``request``: ``rematch``, or ``restart`` for the same
        deal) and make this client that round's player.

        On a connection of its own: ``resume`` the ended match with the kept token, send ``rematch``, and
        take the ``next_round`` answer: its token is kept in the tokens file under the new code (as a join
        does), the host token too when this player hosts the round, and the client's state starts afresh for
        it, so :meth:`run` then resumes the next round (the server has the player in it, ready). Raises
        :class:`ServerRefused` with the server's refusal (``not_finished``, ``already_started``, ...) and
        :class:`Unreachable` when the server is.
        """
        token = self.store.get(self.server, self.code).get("players", {}).get(self.name)
        if not token:
            raise ClientError(f"no token of {self.name} kept for match {self.code}: join the next round with its code")
        connection = await Connection.open(self.server)
        try:
            await connection.send(m.Resume(self.code, token))
            reply = await self._until_joined(connection)
            if isinstance(reply, m.Error):
                raise ServerRefused(reply.code, reply.message)
            self._keep_token(reply.token)
            await connection.send(request or m.Rematch())
            while True:
                answer = await asyncio.wait_for(connection.recv(), 30)
                if isinstance(answer, m.Error):
                    raise ServerRefused(answer.code, answer.message)
                if isinstance(answer, m.NextRound):
                    break
        finally:
            await connection.close()
        self._follow_round(answer)
        return answer

    async def follow_rematch(self, every_s: float = 2.0) -> None:
        """On the results screen: keep :attr:`RaceState.rematch` (who asked for the next round, in order) up to
        date from ``GET /matches/{code}`` every ``every_s`` seconds, until this client goes on to a round of
        its own (:meth:`rematch` changes its code) or its match is no longer the finished one. :meth:`run`
        leaves the match's socket once the results are in, so the ``rematch`` event never reaches it there;
        without this a player would not learn that a friend is waiting in the next round. An unreachable
        server is asked again at the next turn."""
        code = self.code
        while self.code == code and self.state.phase == "finished":
            try:
                names = (await match_state(self.server, code)).get("rematch")
            except ClientError:
                names = None
            if self.code == code and isinstance(names, list) and names != self.state.rematch:
                self.state.rematch = [str(name) for name in names]
                self.on_change()
            await asyncio.sleep(every_s)

    def _follow_round(self, answer: m.NextRound) -> None:
        """Become the player of round ``answer.round`` (match ``answer.match``), with nothing of the round before."""
        self.code, self.host_token = answer.match, answer.host_token or None
        # Merged, not replaced: another player of this machine may be in the same round.
        self.store.keep_player(self.server, self.code, self.name, answer.token)
        if self.host_token:
            self.store.keep_host(self.server, self.code, self.name, self.host_token)
        self.state = RaceState(server=self.server, code=self.code, name=self.name, host=bool(self.host_token),
                               round=answer.round)
        self.seq = self.hints_used = 0
        self.pending.clear()
        self.waiting.clear()
        self._refusals_then.clear()
        self._retries.clear()
        self.done, self.started, self.fatal = asyncio.Event(), asyncio.Event(), None

    async def close(self) -> None:
        connection = self.connection
        if connection is not None:
            await connection.close()


# ---------------------------------------------------------------- scripted mode


def message_json(message: m.ServerMessage) -> str:
    """One received message as a JSON line (``joined`` without its secrets: the token, the player key and the
    recovery code, which goes to standard error as text: see :func:`run_script`)."""
    data = msgspec.to_builtins(message)
    if isinstance(message, m.Joined):
        for secret in ("token", "player_key", "recovery_code"):
            data.pop(secret, None)
    return json.dumps(data, separators=(",", ":"))


async def script_commands(lines: Iterable[str] | AsyncIterable[str]) -> AsyncIterator[str]:
    """Commands of a script, as its lines come (a list, or lines read as they arrive): one a line; blank
    lines and ``#`` comments skipped."""
    if isinstance(lines, AsyncIterable):
        async for line in lines:
            text = line.strip()
            if text and not text.startswith("#"):
                yield text
    else:
        for line in lines:
            text = line.strip()
            if text and not text.startswith("#"):
                yield text


REPLY_TIMEOUT_S = 60.0


async def run_script(client: RaceClient, lines: Iterable[str] | AsyncIterable[str], *, as_json: bool,
                     out: Any = None) -> int:
    """Play a script (see :mod:`client_cli.__main__` ``join --script``); 0 when the match ended normally.

    ``lines`` may come as they are typed (:func:`client_cli.join.stdin_lines`): each command is played, and
    its answer printed, before the next line is waited for; the end of the lines ends the script (the player
    resigns if still playing), and the player's game or the match ending meanwhile stops the waiting."""
    out = out or sys.stdout

    def say(text: str) -> None:
        print(text, file=out, flush=True)

    if as_json:
        client.listener = lambda message: say(message_json(message))

    def claimed(name: str, code: str) -> None:
        from .render import recovery_lines

        print("\n".join(recovery_lines(name, code, client.server)), file=sys.stderr if as_json else out, flush=True)

    client.on_claim = claimed
    runner = asyncio.ensure_future(client.run())
    try:
        await _wait_any(client.started.wait(), runner)
        if runner.done():
            runner.result()
            return 0 if client.done.is_set() else 1
        if not as_json:
            say(f"started: match {client.code} as {client.name}")
        async for text in _while_playing(client, script_commands(lines), runner):
            resolved = resolve(text, client.state.legal, client.state.view)
            if resolved.action == "play":
                future = client.play(resolved.command)
            elif resolved.action == "resign":
                future = client.resign()
            elif resolved.action == "hint":
                future = client.hint()
            elif resolved.action in ("none", "ready", "start", "help"):
                continue
            else:
                message = resolved.message or f"{text!r} is not a command for a script"
                say(json.dumps({"type": "client_error", "line": text, "message": message}) if as_json
                    else f"{text}: {message}")
                continue
            reply = await _reply(future, runner)
            if not as_json:
                say(_reply_line(text, reply))
        if not client.state.my_game_over and not client.done.is_set():
            reply = await _reply(client.resign(), runner)
            if not as_json:
                say(_reply_line("resign (the script ran out)", reply))
        await _wait_any(client.done.wait(), runner)
        if runner.done():
            runner.result()
        if not as_json and client.state.results is not None:
            from .render import ghost_result, results_lines

            for line in results_lines(client.state.results, client.name):
                say(line.plain)
            if client.state.ghost is not None:  # how the game went against the ghost it raced
                say(ghost_result(client.state))
        return 0 if client.done.is_set() else 1
    finally:
        if not runner.done():
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
        await client.close()


async def _while_playing(client: RaceClient, commands: AsyncIterator[str],
                         runner: asyncio.Future[Any]) -> AsyncIterator[str]:
    """The script's commands, each as it comes, while the player's game and the match go on: waiting for the
    next one ends when the game or the match ends (a change of the client's state), or when the client
    failed (its error is raised)."""
    changed = asyncio.Event()
    before = client.on_change

    def on_change() -> None:
        before()
        changed.set()

    client.on_change = on_change
    following: asyncio.Future[str | None] | None = None
    try:
        while not client.state.my_game_over and not client.done.is_set():
            if following is None:
                following = asyncio.ensure_future(anext(commands, None))
            changed.clear()
            await _wait_any(changed.wait(), runner, following)
            if runner.done() and not client.done.is_set():
                runner.result()  # raises the client's fatal error
            if not following.done():
                continue
            text, following = following.result(), None
            if text is None:
                return
            yield text
    finally:
        client.on_change = before
        if following is not None and not following.done():
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
        await commands.aclose()  # type: ignore[attr-defined]


async def _wait_any(awaitable: Any, runner: asyncio.Future[Any], *others: asyncio.Future[Any]) -> None:
    waiter = asyncio.ensure_future(awaitable)
    await asyncio.wait({waiter, runner, *others}, return_when=asyncio.FIRST_COMPLETED)
    if not waiter.done():
        waiter.cancel()


async def _reply(future: asyncio.Future[m.ServerMessage], runner: asyncio.Future[Any]) -> m.ServerMessage | None:
    await asyncio.wait({future, runner}, timeout=REPLY_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
    if runner.done() and not future.done():
        runner.result()  # raises the client's fatal error
    return future.result() if future.done() else None


def _reply_line(text: str, reply: m.ServerMessage | None) -> str:
    match reply:
        case m.PositionReply():
            return f"{text}: ok ({reply.command}; moves {reply.moves}, foundation {reply.foundation}, {reply.status})"
        case m.Rejected():
            return f"{text}: refused ({with_card_symbols(reply.reason)})"
        case m.Suggestion():
            return f"{text}: {reply.command or 'no suggestion'}"
        case m.Error():
            return f"{text}: error {reply.code} ({reply.message})"
    return f"{text}: no answer"
