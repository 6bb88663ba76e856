"""The store's and the core's answers are compared as the enum members they are, never as strings.

Those answers are :class:`~enum.StrEnum` members, so ``status == "ok"`` still works, but a typo in the literal
(``"gmae_over"``) or a value the enum dropped then fails silently: it is just false. Comparing with the member
(``status is JoinStatus.OK``) fails at import instead, and names which answer the code means. Strings stay at
the wire and at Redis's boundary: the rules engine (``server/engine/``: its own words, no such enums) and the
store's decoding of Redis's bytes are not scanned.
"""

from __future__ import annotations

import ast
from enum import Enum
from pathlib import Path

from server.core.lifecycle import State
from server.core.player import CommitStatus, PlayerStatus
from server.store import (
    AttemptStatus,
    ClaimStatus,
    CommitOutcome,
    EndStatus,
    JoinStatus,
    LobbyWrite,
    RoundJoinStatus,
    StuckStatus,
)

ROOT = Path(__file__).resolve().parents[2]
ENUMS: tuple[type[Enum], ...] = (State, PlayerStatus, JoinStatus, ClaimStatus, CommitStatus, CommitOutcome,
                                 EndStatus, StuckStatus, RoundJoinStatus, AttemptStatus, LobbyWrite)
VALUES = frozenset(member.value for enum in ENUMS for member in enum)
"""Every value of the typed answers, computed from the enums themselves (a new member is scanned for at once)."""
NAMES = frozenset({"status", "state", "outcome", "result", "written", "joined", "stored", "claimed", "ended"})
"""What the code calls a typed answer (a variable, an attribute: ``status``, ``meta.state``, ``row.status``)."""
SKIPPED = ("server/engine/",)


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):  # ``record["status"]``: a decoded field by name
        key = node.slice
        return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
    return None


def _literals(node: ast.expr) -> list[str]:
    """The str literals ``node`` is, or holds (a tuple, list or set of them, as after ``in``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [literal for element in node.elts for literal in _literals(element)]
    return []


def string_comparisons(source: str) -> list[tuple[int, str]]:
    """``(line, code)`` of each comparison of a typed answer with the str literal of one of its values:
    ``==``/``!=``/``in``/``is`` chains and ``match`` statements' string cases."""
    found: list[tuple[int, str]] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_name(o) in NAMES for o in operands) and any(v in VALUES for o in operands for v in _literals(o)):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Match) and _name(node.subject) in NAMES:
            for case in node.cases:
                for pattern in ast.walk(case.pattern):
                    if isinstance(pattern, ast.MatchValue) and any(v in VALUES for v in _literals(pattern.value)):
                        case_code = f"match {ast.unparse(node.subject)}: case {ast.unparse(pattern.value)}"
                        found.append((pattern.lineno, case_code))
    return sorted(found)


def scanned() -> list[Path]:
    return [path for path in sorted((ROOT / "server").rglob("*.py"))
            if not path.relative_to(ROOT).as_posix().startswith(SKIPPED)]


def test_the_scan_finds_a_string_comparison() -> None:
    source = ('if status == "ok": pass\n'
              'if meta.state != "finished": pass\n'
              'if row.status in ("won", "dead"): pass\n'
              'match result:\n    case "dup": pass\n'
              'if status is JoinStatus.OK or name == "ok" or status == "solved": pass\n')
    assert [line for line, _ in string_comparisons(source)] == [1, 2, 3, 5]


def test_the_values_come_from_the_enums() -> None:
    assert {"ok", "finished", "won", "seq_gap", "changed", "new", "stored"} <= VALUES
    assert "solved" not in VALUES  # the solver's outcome is the engine's Literal, not one of these


def test_no_typed_answer_is_compared_with_a_string() -> None:
    paths = scanned()
    assert any(path.name == "lobby.py" for path in paths) and not any("engine" in path.parts for path in paths)
    found = [f"{path.relative_to(ROOT)}:{line}: {code}" for path in paths
             for line, code in string_comparisons(path.read_text(encoding="utf-8"))]
    assert not found, "compare with the enum member, not its string:\n" + "\n".join(found)
