"""No import circle anywhere in the project's packages (DESIGN.md layout).

A circle makes import order matter (a module half-initialised when its
partner runs) and hides which layer builds on which. The graph is grimp's
(it parses every import statement, those inside functions and under
``TYPE_CHECKING`` included, so a late import does not hide a circle).
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
    """``from .watch import watch`` inside ``client_cli.__main__._run``; ``server.rounds`` imports
    ``server.match.context`` under ``TYPE_CHECKING`` only."""
    assert graph.direct_import_exists(importer="client_cli.__main__", imported="client_cli.watch")
    assert graph.direct_import_exists(importer="server.rounds", imported="server.match.context")


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
