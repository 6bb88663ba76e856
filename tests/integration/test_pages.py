"""The spectators' page is served by the server itself: static files, no build step."""

from __future__ import annotations

import time

import httpx

from server.pages import STATIC_DIR


def test_pages_and_their_files_are_served(server) -> None:  # type: ignore[no-untyped-def]
    page = httpx.get(server.url + "/watch/anycode")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.text == (STATIC_DIR / "watch.html").read_text()
    assert '<meta name="viewport"' in page.text
    for name in ("app.css", "common.js", "watch.js", "daily.js"):
        served = httpx.get(f"{server.url}/static/{name}")
        assert served.status_code == 200 and served.text == (STATIC_DIR / name).read_text(), name
    assert httpx.get(server.url + "/static/nope.js").status_code == 404
    assert httpx.get(server.url + "/").text == (STATIC_DIR / "index.html").read_text()


def test_daily_is_the_page_for_a_browser_and_json_for_anyone_else(server) -> None:  # type: ignore[no-untyped-def]
    browser = httpx.get(server.url + "/daily", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert browser.status_code == 200 and browser.text == (STATIC_DIR / "daily.html").read_text()
    # The JSON waits for today's deal on a fresh server (the solver worker prepares it): no 5 s default timeout.
    script = httpx.get(server.url + "/daily", headers={"Accept": "application/json"}, timeout=120)
    assert not script.headers.get("content-type", "").startswith("text/html")  # the daily challenge's own answer


def test_the_match_state_carries_the_server_clock_in_a_header(server) -> None:  # type: ignore[no-untyped-def]
    created = httpx.post(server.url + "/matches", json={"variant": "relaxed", "seed": "4"}).json()
    before = time.time() * 1000
    answer = httpx.get(f"{server.url}/matches/{created['code']}")
    after = time.time() * 1000
    assert before - 1000 <= int(answer.headers["X-Server-Time-Ms"]) <= after + 1000  # one machine, one clock
    assert "now_ms" not in answer.json()  # the body is the state alone (comparable before and after)
