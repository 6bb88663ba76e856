"""Size limits that keep the server readable: no module of ``server/`` outside the rules engine over
:data:`MAX_MODULE_LINES` lines, and no class there over :data:`MAX_CLASS_LINES` (from its decorators to its
last line, as ``ast`` places them). The engine (``server/engine/``) is left out: its rules and search are
long by nature and have the purity test and the rules' own tests instead."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "server"
MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 300


def _modules() -> list[Path]:
    return sorted(path for path in SERVER.rglob("*.py") if not path.is_relative_to(SERVER / "engine"))


def test_no_server_module_outside_the_engine_is_over_500_lines() -> None:
    modules = _modules()
    assert SERVER / "hub.py" in modules and not any(path.is_relative_to(SERVER / "engine") for path in modules)
    too_long = {str(path.relative_to(ROOT)): count for path in modules
                if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert too_long == {}


def _classes(tree: ast.Module) -> list[ast.ClassDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


def _class_lines(node: ast.ClassDef) -> int:
    first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
    return (node.end_lineno or node.lineno) - first + 1


def test_no_class_of_a_server_module_outside_the_engine_is_over_300_lines() -> None:
    too_long = {f"{path.relative_to(ROOT)}:{node.name}": lines for path in _modules()
                for node in _classes(ast.parse(path.read_text(encoding="utf-8"), str(path)))
                if (lines := _class_lines(node)) > MAX_CLASS_LINES}
    assert too_long == {}


def test_a_class_is_measured_from_its_decorator_to_its_last_line() -> None:
    source = "import dataclasses\n\n@dataclasses.dataclass\nclass A:\n    x: int\n\n    def f(self):\n        return 1\n"
    (node,) = _classes(ast.parse(source))
    assert _class_lines(node) == 6
