"""Every error code the server can send is in ``protocol.messages.ERROR_CODES`` and in protocol/README.md's table.

The codes are read from the source of ``server/`` and ``protocol/`` with :mod:`ast`: the code argument of
every call that puts one on the wire (``ServiceError``, ``m.Error``, ``m.Rejected``, ``DailyError``,
``ProtocolError``, ``IllegalCommandError``, the HTTP helpers, ``{"error": ...}`` bodies). A code argument
that is not a string literal must be one of the pass-throughs listed in :data:`PASS_THROUGH` (an
exception's own ``code``, collected where it is raised); any other is a failure, so a new way of sending a code cannot slip past this test.
"""

from __future__ import annotations

import ast
import functools
import pickle
import re
import subprocess
import sys
from pathlib import Path

from protocol.errors import NotationError
from protocol.messages import ERROR_CODES
from server.store.scripts import JOIN

ROOT = Path(__file__).resolve().parents[2]

CODE_ARGUMENT = {"ServiceError": 0, "Error": 0, "DailyError": 1, "ProfileError": 1, "_error": 1, "error_response": 1, "Rejected": 2,
                 "ProtocolError": 1, "IllegalCommandError": 1}
"""Calls that send a code, and the position of the code among their arguments (or keyword ``code``)."""

PASS_THROUGH = {
    ("server/play.py", "error.code"),  # a ServiceError's code, sent as an error frame
    ("protocol/connection.py", "error.code"),  # a ProtocolError's code (a frame that did not decode), likewise
    ("server/app.py", "error.code"),  # a ServiceError's code, as an HTTP error
    ("server/watch.py", "error.code"),  # a ServiceError's code (too_many_watchers), frame or HTTP
    ("server/watch.py", "ended.reason.code"),  # why the hub ended a spectator's subscription: a ServiceError's code
    ("server/daily_web.py", "error.code"),  # a DailyError's code, as an HTTP error
    ("server/daily.py", "error.code"),  # a ProfileError's code (a daily attempt's name), as a DailyError
    ("server/players_web.py", "error.code"),  # a ProfileError's code, as an HTTP error
    ("server/groups_web.py", "error.code"),  # a ProfileError's or DailyError's code, as an HTTP error
    ("server/core/player.py", "code"),  # rejected: the NotationError's or IllegalCommandError's code
    ("server/httpjson.py", "code"),  # error_response's own parameter: {"error": code, ...} (its calls collected)
    ("server/replays.py", "code"),  # likewise its _error helper
    ("protocol/codec.py", "code"),  # ProtocolError.__init__'s own parameter (default collected)
    ("server/engine/errors.py", "code"),  # IllegalCommandError.__init__'s own parameter (default collected)
}
"""Code arguments that are not literals: (file, source of the argument)."""


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


_PARSE = "import ast, pickle, sys; sys.stdout.buffer.write(pickle.dumps([ast.parse(open(p).read(), p) for p in sys.argv[1:]]))"


@functools.cache
def parsed_sources() -> tuple[tuple[str, ast.Module], ...]:
    """``(file, tree)`` of every source file of ``server/`` and ``protocol/``, the file relative to the root."""
    files = sorted((ROOT / "server").rglob("*.py")) + sorted((ROOT / "protocol").rglob("*.py"))
    assert len(files) > 30, files
    names = [str(path.relative_to(ROOT)) for path in files]
    # 3.11.7's ast.parse shares a depth count a finalizer's parse broke mid-way (gh-106905): a new process parses.
    done = subprocess.run([sys.executable, "-I", "-c", _PARSE, *names], cwd=ROOT, capture_output=True, timeout=120,
                          check=True)
    return tuple(zip(names, pickle.loads(done.stdout)))


def sent_codes() -> tuple[dict[str, set[str]], set[tuple[str, str]]]:
    """Literal codes by the kind of call that sends them, and the non-literal code arguments (file, source)."""
    found: dict[str, set[str]] = {}
    dynamic: set[tuple[str, str]] = set()

    def literal(kind: str, node: ast.AST, where: str) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.setdefault(kind, set()).add(node.value)
        else:
            dynamic.add((where, ast.unparse(node)))

    for where, tree in parsed_sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _name(node) in CODE_ARGUMENT:
                keyword = next((k.value for k in node.keywords if k.arg == "code"), None)
                index = CODE_ARGUMENT[_name(node)]
                if keyword is not None:
                    literal(_name(node), keyword, where)
                elif len(node.args) > index and not isinstance(node.args[0], ast.Starred):
                    literal(_name(node), node.args[index], where)
                elif node.args and isinstance(node.args[0], ast.Starred):
                    dynamic.add((where, ast.unparse(node.args[0])))
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values):
                    if isinstance(key, ast.Constant) and key.value == "error":
                        literal("json", value, where)
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "problem"
                                                      for t in node.targets):
                for pair in ast.walk(node.value):  # problem = (code, message) if ... else (code, message)
                    if isinstance(pair, ast.Tuple) and len(pair.elts) == 2:
                        literal("problem", pair.elts[0], where)
            elif isinstance(node, ast.FunctionDef) and node.name == "__init__":
                for arg, default in zip(node.args.args[::-1], node.args.defaults[::-1]):
                    if arg.arg == "code":  # ProtocolError(..., code="malformed"), IllegalCommandError(..., "illegal")
                        literal("default", default, where)
    return found, dynamic


def join_statuses() -> set[str]:
    """The refusals of the join script (JOIN in server/store/scripts/matches.py), which MatchService.join sends
    as error codes."""
    return set(re.findall(r"return \{'([a-z_]+)'", JOIN.lua)) - {"ok"}


def readme_table() -> dict[str, str]:
    """The protocol page's error code table: code -> its "sent in" column."""
    text = (ROOT / "protocol" / "README.md").read_text()
    section = text.split("\n## Error codes", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_]+)` \| ([^|]+) \|", section, re.MULTILINE)
    assert len(rows) == len({code for code, _ in rows}), "a code listed twice"
    return {code: where.strip() for code, where in rows}


def test_the_source_reading_finds_what_it_must() -> None:
    """The reader is not vacuous: it sees codes of every kind of call, and the join script's refusals."""
    found, dynamic = sent_codes()
    assert {"seq_gap", "not_host", "no_hints"} <= found["ServiceError"]
    assert {"version", "hello_first", "too_slow"} <= found["Error"]
    assert {"undo_refused", "game_over"} <= found["IllegalCommandError"]
    assert {"already_played", "day_over"} <= found["DailyError"]
    assert {"not_found", "method_not_allowed", "not_finished"} <= found["_error"] | found["error_response"]
    assert {"illegal", "malformed"} <= found["default"]
    assert join_statuses() == {"no_match", "closed", "already_started", "name_taken", "match_full"}
    assert ("server/core/player.py", "code") in dynamic and ("server/play.py", "error.code") in dynamic
    # The join script's refusals are each sent as a code written out (server/match/lobby.py, server/core/lifecycle.py).
    assert join_statuses() <= found["ServiceError"]


def test_every_code_the_server_sends_is_declared_and_every_declared_code_is_sent() -> None:
    found, dynamic = sent_codes()
    unexplained = dynamic - PASS_THROUGH
    assert not unexplained, f"codes sent from expressions this test cannot read: {sorted(unexplained)}"
    sent = set().union(*found.values()) | join_statuses() | {NotationError.code}
    assert sent - set(ERROR_CODES) == set(), "sent but not in ERROR_CODES"
    assert set(ERROR_CODES) - sent == set(), "in ERROR_CODES but never sent"


def test_the_readme_lists_every_code_and_where_it_is_sent() -> None:
    found, _ = sent_codes()
    table = readme_table()
    assert set(table) == set(ERROR_CODES)
    # rejected: the code of the NotationError or IllegalCommandError the engine raised for a command.
    rejected = found["IllegalCommandError"] | {"illegal", NotationError.code}
    assert {code for code, where in table.items() if "`rejected`" in where} == rejected
    frames = found["ServiceError"] | found["Error"] | found.get("problem", set()) | found["ProtocolError"] | join_statuses()
    for code in frames:
        assert "`error`" in table[code], (code, table[code])
    http = found["DailyError"] | found["_error"] | found["error_response"] | found["json"]
    for code in http:
        assert "HTTP" in table[code], (code, table[code])
    for code, where in table.items():
        assert where, code


def test_the_readme_states_the_protocol_version_the_server_speaks() -> None:
    """Version 2 refuses a seq gap (PROTOCOL_VERSION); the README's protocol section still said "Version 1.", so a
    client written from it sent hello with 1 and was refused with ``version``."""
    from protocol.messages import PROTOCOL_VERSION

    text = (ROOT / "protocol" / "README.md").read_text()
    section = text.split("## The play WebSocket (`/play`", 1)[1].split("\n#", 1)[0]
    stated = re.findall(r"\bVersion (\d+)\b", section)
    assert stated == [str(PROTOCOL_VERSION)], stated
