"""Server settings, read from the environment in one place (Starlette ``Config``).

=====================================  =========  ==============================================
variable                               default    meaning
=====================================  =========  ==============================================
``FTR_HOST``                           127.0.0.1  address to listen on
``FTR_PORT``                           8000       port to listen on
``FTR_PUBLIC_URL``                     (unset)    address friends reach the server at (``https://race.example.org``
                                                  behind a TLS proxy, ``http://192.168.1.20:8000`` on a LAN):
                                                  the join line and ``join_url`` use it; unset: the address
                                                  each request came to
``REDIS_URL``                          (unset)    Redis to use (``redis://host:port/db``): one Redis,
                                                  or any node of a Redis Cluster (the server asks it
                                                  ``INFO cluster`` at start and uses redis-py's cluster
                                                  client when ``cluster_enabled:1``); unset: start an
                                                  embedded Redis
``FTR_DATA_DIR``                       user data  folder of the embedded Redis's database file, owned by
                                                  one server process at a time (a second one refuses)
``FTR_REDIS_WAIT_REPLICAS``            0          replicas each commit of a move waits for (Redis ``WAIT``)
                                                  before its player is answered, so a failover of its
                                                  master loses no acknowledged move (0: no wait)
``FTR_REDIS_WAIT_MS``                  1000       longest such wait (ms); past it the move is answered
                                                  anyway and a warning logged
``FTR_COUNTDOWN_S``                    3          seconds between "start" and the deal
``FTR_RETENTION_S``                    86400      seconds a finished match's keys are kept
``FTR_MAX_PLAYERS``                    8          most players one match may have
``FTR_RATE``                           20         messages per second a connection may send
``FTR_BURST``                          40         messages a connection may send at once
``FTR_MAX_FRAME_BYTES``                4096       largest WebSocket frame accepted (bytes)
``FTR_MATCHES_PER_MIN``                30         matches one address may create per minute
``FTR_POOL_TARGET``                    2          verified solvable deals kept ready per variant
``FTR_SOLVER_WORKERS``                 1          solver worker processes (0: no deal pool)
``FTR_SOLVER_SECONDS``                 10         solver budget per candidate deal (seconds)
``FTR_DEAD_BUDGET``                    20000      dead-game search budget (positions)
``FTR_SOLVER``                         (unset)    ``python``: the solver runs its pure search even where the
                                                  optional C search is built (read here, passed to the
                                                  solver as ``pure``: the engine reads no environment)
``FTR_LOBBY_TIMEOUT_S``                7200       seconds a match may wait to start before it is closed
``FTR_UNTIMED_LIMIT_S``                86400      time limit of a match created with ``time_limit_s`` 0
                                                  (so an abandoned game cannot keep it open for ever;
                                                  0: such matches have none)
``FTR_DAILY_SECRET``                   (unset)    secret of the daily seeds; unset: made once, kept in Redis
``FTR_DAILY_VARIANTS``                 classic,   variants of the daily challenge (comma-separated;
                                       relaxed    empty: no daily challenge)
``FTR_CLOCK_OFFSET_MS``                0          shift of the server's clock (ms; tests and demos only)
``FTR_MAX_WATCHERS``                   500        spectator connections per match (per server process)
``FTR_WATCHER_QUEUE``                  1024       events a spectator may fall behind by before
                                                  it is dropped (it resumes from its last id)
``FTR_REMATCH_WINDOW_S``               30         seconds after the first ``rematch`` in which the
                                                  previous round's players join the next round: it
                                                  starts when all are in and ready, or after the
                                                  window with whoever is in and ready
``FTR_RESOLVE_S``                      10         seconds the server keeps asking Redis whether a command
                                                  whose commit got no answer was stored, before it tells
                                                  the player ``unknown_outcome``
``FTR_HELLO_TIMEOUT_S``                10         seconds from a ``/play`` connection's start to
                                                  its ``hello`` (then ``hello_first``, close 1008)
``FTR_HEADER_TIMEOUT_S``               10         seconds a connection has to send a whole request
                                                  head, from its start or the previous answer,
                                                  and a request body (then closed)
``FTR_KEEPALIVE_S``                    5          seconds an idle HTTP connection is kept open
                                                  between requests
``FTR_MAX_HEADER_BYTES``               16384      largest request head (bytes; then 431, closed)
``FTR_MAX_CONNECTIONS_PER_ADDRESS``    256        open connections (HTTP and WebSocket) one
                                                  address may hold; past it a new one is closed
``FTR_MAX_WRITE_BUFFER_BYTES``         1048576    unsent bytes a WebSocket may pile up (a client
                                                  that never reads) before it is closed (1008)
``FTR_FORWARDED_ALLOW_IPS``            (unset)    proxies (comma-separated addresses, or ``*``)
                                                  whose ``X-Forwarded-For`` / ``-Proto`` headers
                                                  are trusted; unset: none, the TCP peer counts
``FTR_LOG_LEVEL``                      info       level of the server's and uvicorn's log lines:
                                                  ``debug``, ``info``, ``warning``, ``error`` or
                                                  ``critical`` (server/logs.py)
``FTR_LOG_FORMAT``                     text       ``text``: one line a record, from its UTC time;
                                                  ``json``: one JSON object a line (``time``,
                                                  ``level``, ``logger``, ``message``, ``match``,
                                                  ``connection``)
=====================================  =========  ==============================================

Pings, pongs and unfinished message fragments, which never reach the application's rate limit, have a
budget of their own per connection of the same ``FTR_RATE`` a second and ``FTR_BURST`` at once (past it
the connection is closed with 1008; server/connections.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import platformdirs
from starlette.config import Config

from .logs import LOG_FORMATS, LOG_LEVELS


@dataclass(frozen=True, slots=True)
class Settings:
    """The server's settings (see the module docstring for the variables)."""

    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str = ""
    redis_url: str | None = None
    data_dir: str = ""
    redis_wait_replicas: int = 0
    redis_wait_ms: int = 1000
    countdown_s: float = 3.0
    retention_s: int = 86400
    max_players: int = 8
    rate: float = 20.0
    burst: int = 40
    max_frame_bytes: int = 4096
    matches_per_min: int = 30
    pool_target: int = 2
    solver_workers: int = 1
    solver_seconds: float = 10.0
    dead_budget: int = 20000
    pure_solver: bool = False
    lobby_timeout_s: int = 7200
    untimed_limit_s: int = 86400
    daily_secret: str | None = None
    daily_variants: tuple[str, ...] = ("classic", "relaxed")
    clock_offset_ms: int = 0
    watcher_queue: int = 1024
    max_watchers: int = 500
    rematch_window_s: float = 30.0
    resolve_s: float = 10.0
    hello_timeout_s: float = 10.0
    header_timeout_s: float = 10.0
    keepalive_s: int = 5
    max_header_bytes: int = 16384
    max_connections_per_address: int = 256
    max_write_buffer_bytes: int = 1 << 20
    forwarded_allow_ips: str = ""
    log_level: str = "info"
    log_format: str = "text"

    @classmethod
    def from_environ(cls, environ: dict[str, str] | None = None) -> Settings:
        """Read every setting from ``environ`` (default: ``os.environ``). Raises ``ValueError`` naming the variable
        for a value of the wrong kind or not among a setting's choices."""
        config = Config(environ=environ if environ is not None else dict(os.environ))
        return cls(
            host=config("FTR_HOST", default="127.0.0.1"),
            port=config("FTR_PORT", cast=int, default=8000),
            public_url=config("FTR_PUBLIC_URL", default="").strip().rstrip("/"),
            redis_url=config("REDIS_URL", default=None) or None,
            data_dir=config("FTR_DATA_DIR", default="") or platformdirs.user_data_dir("forty-thieves-race"),
            redis_wait_replicas=config("FTR_REDIS_WAIT_REPLICAS", cast=int, default=0),
            redis_wait_ms=config("FTR_REDIS_WAIT_MS", cast=int, default=1000),
            countdown_s=config("FTR_COUNTDOWN_S", cast=float, default=3.0),
            retention_s=config("FTR_RETENTION_S", cast=int, default=86400),
            max_players=config("FTR_MAX_PLAYERS", cast=int, default=8),
            rate=config("FTR_RATE", cast=float, default=20.0),
            burst=config("FTR_BURST", cast=int, default=40),
            max_frame_bytes=config("FTR_MAX_FRAME_BYTES", cast=int, default=4096),
            matches_per_min=config("FTR_MATCHES_PER_MIN", cast=int, default=30),
            pool_target=config("FTR_POOL_TARGET", cast=int, default=2),
            solver_workers=config("FTR_SOLVER_WORKERS", cast=int, default=1),
            solver_seconds=config("FTR_SOLVER_SECONDS", cast=float, default=10.0),
            dead_budget=config("FTR_DEAD_BUDGET", cast=int, default=20000),
            pure_solver=config("FTR_SOLVER", default="").strip().lower() == "python",
            lobby_timeout_s=config("FTR_LOBBY_TIMEOUT_S", cast=int, default=7200),
            untimed_limit_s=config("FTR_UNTIMED_LIMIT_S", cast=int, default=86400),
            daily_secret=config("FTR_DAILY_SECRET", default=None) or None,
            daily_variants=tuple(v.strip() for v in config("FTR_DAILY_VARIANTS", default="classic,relaxed").split(",")
                                 if v.strip()),
            clock_offset_ms=config("FTR_CLOCK_OFFSET_MS", cast=int, default=0),
            watcher_queue=config("FTR_WATCHER_QUEUE", cast=int, default=1024),
            max_watchers=config("FTR_MAX_WATCHERS", cast=int, default=500),
            rematch_window_s=config("FTR_REMATCH_WINDOW_S", cast=float, default=30.0),
            resolve_s=config("FTR_RESOLVE_S", cast=float, default=10.0),
            hello_timeout_s=config("FTR_HELLO_TIMEOUT_S", cast=float, default=10.0),
            header_timeout_s=config("FTR_HEADER_TIMEOUT_S", cast=float, default=10.0),
            keepalive_s=config("FTR_KEEPALIVE_S", cast=int, default=5),
            max_header_bytes=config("FTR_MAX_HEADER_BYTES", cast=int, default=16384),
            max_connections_per_address=config("FTR_MAX_CONNECTIONS_PER_ADDRESS", cast=int, default=256),
            max_write_buffer_bytes=config("FTR_MAX_WRITE_BUFFER_BYTES", cast=int, default=1 << 20),
            forwarded_allow_ips=config("FTR_FORWARDED_ALLOW_IPS", default="").strip(),
            log_level=_one_of(config, "FTR_LOG_LEVEL", LOG_LEVELS, "info"),
            log_format=_one_of(config, "FTR_LOG_FORMAT", LOG_FORMATS, "text"),
        )


def _one_of(config: Config, name: str, choices: tuple[str, ...], default: str) -> str:
    """Variable ``name``'s value (any case, blanks around it ignored; unset or empty: ``default``), which must be
    one of ``choices``: else ``ValueError`` naming the variable."""
    value = config(name, default="").strip().lower() or default
    if value not in choices:
        raise ValueError(f"{name} is {value!r}: expected one of {', '.join(choices)}")
    return value


ENVIRONMENT_VARIABLES = (
    "FTR_HOST", "FTR_PORT", "FTR_PUBLIC_URL", "REDIS_URL", "FTR_DATA_DIR", "FTR_REDIS_WAIT_REPLICAS", "FTR_REDIS_WAIT_MS",
    "FTR_COUNTDOWN_S", "FTR_RETENTION_S", "FTR_MAX_PLAYERS",
    "FTR_RATE", "FTR_BURST", "FTR_MAX_FRAME_BYTES", "FTR_MATCHES_PER_MIN", "FTR_POOL_TARGET", "FTR_SOLVER_WORKERS",
    "FTR_SOLVER_SECONDS", "FTR_DEAD_BUDGET", "FTR_SOLVER", "FTR_LOBBY_TIMEOUT_S", "FTR_UNTIMED_LIMIT_S", "FTR_DAILY_SECRET", "FTR_DAILY_VARIANTS", "FTR_CLOCK_OFFSET_MS",
    "FTR_WATCHER_QUEUE", "FTR_MAX_WATCHERS", "FTR_REMATCH_WINDOW_S", "FTR_RESOLVE_S", "FTR_HELLO_TIMEOUT_S", "FTR_HEADER_TIMEOUT_S", "FTR_KEEPALIVE_S",
    "FTR_MAX_HEADER_BYTES", "FTR_MAX_CONNECTIONS_PER_ADDRESS", "FTR_MAX_WRITE_BUFFER_BYTES", "FTR_FORWARDED_ALLOW_IPS",
    "FTR_LOG_LEVEL", "FTR_LOG_FORMAT",
)
"""Every environment variable the server reads (a test checks docker-compose.yml names only these)."""
