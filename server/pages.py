"""The web pages: static HTML, CSS and JavaScript, no build step.

=====================  ======================================================
path                   serves
=====================  ======================================================
``/``                  ``index.html``: create a race (``POST /matches``) or
                       enter a match code, links to the daily
``/join/{code}``       ``play.html``: the link friends are sent: join by name,
                       ready, race, results, rematch (WebSocket ``/play``)
``/watch/{code}``      ``watch.html``: live standings, countdown, clock, then
                       the final ranking and each player's replay
``/daily``             ``daily.html`` for a browser (``Accept: text/html``);
                       any other ``GET /daily`` (the daily challenge's JSON)
                       goes on to the application's routes
``/static/NAME``       the files of ``server/static/`` (the web app manifest
                       ``manifest.webmanifest`` and its icons included)
=====================  ======================================================

The spectators' pages read only the public endpoints (``GET /matches/{code}``,
``/results``, ``/replays/{name}?positions=1``, the Server-Sent Events of
``/matches/{code}/events`` and of the daily challenge); the play page speaks
the players' protocol (``/play``, msgpack frames) like any client. None holds
rules: the server sends every position and every legal move.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

STATIC_DIR = Path(__file__).with_name("static")
"""Folder of the page's files (shipped with the package)."""

_NO_CACHE = {"Cache-Control": "no-cache"}

# StaticFiles types files by the mimetypes table, which knows .webmanifest only where the system's
# mime.types does: the web app manifest is JSON of its own type everywhere.
mimetypes.add_type("application/manifest+json", ".webmanifest")


def page_response(name: str) -> FileResponse:
    """The page ``name`` of :data:`STATIC_DIR` as HTML, never cached (a new release's page is read at once)."""
    return FileResponse(STATIC_DIR / name, media_type="text/html; charset=utf-8", headers=_NO_CACHE)


async def index_page(request: Request) -> Response:
    """``GET /``: the landing page."""
    return page_response("index.html")


async def watch_page(request: Request) -> Response:
    """``GET /watch/{code}``: the match page (the code is read by the page's script from its address)."""
    return page_response("watch.html")


async def play_page(request: Request) -> Response:
    """``GET /join/{code}``: the play page (the code is read by the page's script from its address)."""
    return page_response("play.html")


class PagesMiddleware:
    """Serves ``daily.html`` for a browser's ``GET /daily``; everything else passes through untouched.

    ``/daily`` is both the page and the daily challenge's JSON (its HTTP
    contract): a browser navigating there asks for ``text/html``, the
    page's own ``fetch`` asks for ``application/json``.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD") and scope["path"] in ("/daily", "/daily/"):
            accept = dict(scope["headers"]).get(b"accept", b"")
            if b"text/html" in accept:
                await page_response("daily.html")(scope, receive, send)
                return
        await self.app(scope, receive, send)


__all__ = ["STATIC_DIR", "PagesMiddleware", "StaticFiles", "index_page", "page_response", "play_page", "watch_page"]
