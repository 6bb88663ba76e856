"""The pure match core: the server's decisions, with no I/O (no asyncio, Redis, Starlette, clock).

- :mod:`.errors`: :class:`ServiceError`, the refusal a player or an HTTP client gets (a stable code).
- :mod:`.lifecycle`: a match's states, the allowed transitions in one table, what each event does.
- :mod:`.player`: a player's game as a value; a command *proposes* its result (the next value, what to
  store, the events to publish, the reply) and the adapter commits it, then adopts the next value.

The adapters (:mod:`server.matches` and the modules it is split into) read Redis, take ``now_ms`` from the
shared clock, call in here, and carry out what comes back.
"""
