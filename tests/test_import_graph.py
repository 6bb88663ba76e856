"""The import graph of the project's packages: no circle, and every import in the direction DESIGN.md fixes.

A circle makes import order matter (a module half-initialised when its
partner runs) and hides which layer builds on which. The direction is
DESIGN.md's "client_cli -> protocol <- server; server.engine -> protocol
only": the client runs on the protocol alone (the server sends the legal
moves and positions), and the rules engine knows nothing of the server
built on it. The graph is grimp's (it parses every import statement, those
inside functions and under ``TYPE_CHECKING`` included, so a late import
hides neither a circle nor a wrong direction).
"""

from __future__ import annotations

import grimp
import pytest

PACKAGES = ("server", "protocol", "client_cli")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def circles(graph: grimp.ImportGraph) -> list[tuple[str, ...]]:
    """One shortest circle through each module import that closes one, each circle once."""
    found: dict[frozenset[str], tuple[str, ...]] = {}
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                found.setdefault(frozenset(back), (importer, *back))
    return sorted(found.values())


def test_the_graph_covers_the_packages(graph: grimp.ImportGraph) -> None:
    modules = graph.modules
    for name in ("server.engine.rules", "server.engine.solver.search", "protocol.messages", "client_cli.daily",
                 "client_cli.__main__", "server.matches"):
        assert name in modules
    assert graph.direct_import_exists(importer="server.engine.dead", imported="server.engine.solver.progress")


def test_late_and_type_checking_imports_are_in_the_graph(graph: grimp.ImportGraph) -> None:
    """``from .watch import watch`` inside ``client_cli.__main__._run``; ``server.match.rounds`` imports
    ``server.match.context`` under ``TYPE_CHECKING`` only."""
    assert graph.direct_import_exists(importer="client_cli.__main__", imported="client_cli.watch")
    assert graph.direct_import_exists(importer="server.match.rounds", imported="server.match.context")


def test_a_circle_is_found() -> None:
    """One import added to the real graph (rules importing the game built on it) closes a circle the check
    reports."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    graph.add_import(importer="server.engine.rules", imported="server.engine.game", line_number=1,
                     line_contents="from .game import Game")
    assert ("server.engine.game", "server.engine.rules", "server.engine.game") in circles(graph)


def test_no_import_circle(graph: grimp.ImportGraph) -> None:
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(" -> ".join(circle) for circle in found)


FORBIDDEN = (
    ("client_cli", "server"),
    ("protocol", "server"),
    ("protocol", "client_cli"),
    ("server.engine", "server"),
    ("server.engine", "client_cli"),
)
"""``(importer, imported)``: no module of the first package imports one of the second (the engine's own modules
aside, for the engine inside ``server``). Direct imports are enough: every chain the wrong way (through
``protocol``, say) has a step that is itself one of these."""

COMMAND_LINES_MAY_IMPORT = {"server.about"}
"""A command line (a ``__main__`` module) prints the installation's ``--version`` line from the one module that
says it for all three commands (``server/about.py``: the version and which C paths import); it imports
nothing of the project (checked below), so it cannot bring the server in."""


def wrong_way(graph: grimp.ImportGraph) -> list[str]:
    """Every direct import against :data:`FORBIDDEN`, as ``importer -> imported (line N: text)``, sorted."""
    found = []
    for importer, imported in FORBIDDEN:
        for pattern in (f"{importer} -> {imported}", f"{importer} -> {imported}.**",
                        f"{importer}.** -> {imported}", f"{importer}.** -> {imported}.**"):
            for edge in graph.find_matching_direct_imports(pattern):
                source, target = edge["importer"], edge["imported"]
                if target == importer or target.startswith(importer + "."):
                    continue  # within the importer's own package (the engine inside server)
                if source.endswith(".__main__") and target in COMMAND_LINES_MAY_IMPORT:
                    continue
                for detail in graph.get_import_details(importer=source, imported=target):
                    found.append(f"{source} -> {target} (line {detail['line_number']}: {detail['line_contents']})")
    return sorted(set(found))


def test_imports_point_one_way(graph: grimp.ImportGraph) -> None:
    found = wrong_way(graph)
    if found:
        pytest.fail("imports against DESIGN.md's direction:\n" + "\n".join(found), pytrace=False)


def test_a_wrong_way_import_is_found() -> None:
    """Imports added to the real graph, one per rule and one from a command line, are each reported with their
    line."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    before = set(wrong_way(graph))
    added = [("client_cli.render", "server.views", "from server.views import view_message"),
             ("protocol.messages", "server.engine.rules", "from server.engine.rules import LegalMove"),
             ("protocol.codec", "client_cli.state", "from client_cli.state import RaceState"),
             ("server.engine.game", "server.settings", "from server.settings import Settings"),
             ("server.engine.__main__", "server.app", "from server.app import build_app")]
    for importer, imported, text in added:
        graph.add_import(importer=importer, imported=imported, line_number=7, line_contents=text)
    assert set(wrong_way(graph)) - before == {f"{i} -> {t} (line 7: {text})" for i, t, text in added}


def test_the_version_module_brings_nothing_of_the_project() -> None:
    """What :data:`COMMAND_LINES_MAY_IMPORT` lets a command line import reaches no other module of ours."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    for module in COMMAND_LINES_MAY_IMPORT:
        assert not {found for found in graph.find_upstream_modules(module)
                    if found.split(".")[0] in PACKAGES and found != module}, module
