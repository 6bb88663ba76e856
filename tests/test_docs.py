"""The project's Markdown pages hold together: every relative link and ``#anchor`` resolves, the README stays a
front door, the settings table says what ``server/settings.py`` declares, and the code's citations of RULES.md
name sections it has.

Links and headings are read with markdown-it-py (the CommonMark parser rich already brings), so a link inside a
code span or block is no link, as on GitHub. An anchor matches a heading by GitHub's rule: the heading's text
lowercased, every character but letters, digits, marks, ``-``, ``_`` and spaces dropped, spaces made ``-``, and
``-1``, ``-2``, ... added to repeats.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt

from server.settings import DECLARATIONS

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = {".venv", ".git", "build", "dist", "node_modules", "artifacts", ".pytest_cache", ".hypothesis"}
RULES = ROOT / "server" / "engine" / "RULES.md"


def markdown_files(root: Path = ROOT) -> list[Path]:
    """Every ``.md`` file of the project, outside virtual environments, build output and test artifacts."""
    return sorted(path for path in root.rglob("*.md")
                  if not any(part in SKIPPED or part.endswith(".egg-info") for part in path.relative_to(root).parts))


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def github_slug(text: str) -> str:
    """The anchor GitHub gives a heading of ``text`` (before the ``-1`` of a repeat)."""
    kept = "".join(ch for ch in text.strip().lower()
                   if ch.isalnum() or ch in "-_ " or unicodedata.category(ch).startswith("M"))
    return kept.replace(" ", "-")


def _inline_text(token) -> str:  # type: ignore[no-untyped-def]
    """A heading's text as GitHub renders it: text and code spans, without the markup."""
    return "".join(child.content for child in token.children or () if child.type in ("text", "code_inline"))


def anchors(path: Path) -> set[str]:
    """The anchors of ``path``'s headings, repeats numbered as GitHub numbers them."""
    tokens = _parser().parse(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found: set[str] = set()
    for opening, inline in itertools.pairwise(tokens):
        if opening.type != "heading_open":
            continue
        slug = github_slug(_inline_text(inline))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


class _HtmlTargets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.targets += [value for name, value in attrs if name in ("href", "src") and value]


def link_targets(path: Path) -> list[str]:
    """Every link and image target of ``path``: Markdown links and images, and ``href``/``src`` of raw HTML."""
    targets: list[str] = []

    def walk(tokens) -> None:  # type: ignore[no-untyped-def]
        for token in tokens:
            if token.type == "link_open":
                targets.append(str(token.attrGet("href")))
            elif token.type == "image":
                targets.append(str(token.attrGet("src")))
            elif token.type in ("html_inline", "html_block"):
                parser = _HtmlTargets()
                parser.feed(token.content)
                targets.extend(parser.targets)
            if token.children:
                walk(token.children)

    walk(_parser().parse(path.read_text(encoding="utf-8")))
    return targets


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """The relative links of ``path`` that do not resolve, each as ``target: why``. A link with a scheme
    (``https:``, ``mailto:``) is not checked; any other must name a file or folder inside ``root`` and, with a
    ``#anchor``, a heading of that Markdown file (of ``path`` itself for a bare ``#anchor``)."""
    problems: list[str] = []
    for target in link_targets(path):
        parts = urlsplit(target)
        if parts.scheme or parts.netloc:
            continue
        if parts.path.startswith("/"):
            problems.append(f"{target}: a site-absolute path, which resolves nowhere in the repository")
            continue
        file = (path.parent / unquote(parts.path)).resolve() if parts.path else path
        if not file.is_relative_to(root.resolve()):
            problems.append(f"{target}: outside the project")
        elif not file.exists():
            problems.append(f"{target}: no such file")
        elif parts.fragment:
            if file.suffix != ".md":
                problems.append(f"{target}: an anchor into a file that is not Markdown")
            elif unquote(parts.fragment) not in anchors(file):
                problems.append(f"{target}: no heading of {file.relative_to(root.resolve())} has that anchor")
    return problems


def test_every_relative_link_and_anchor_of_the_markdown_pages_resolves() -> None:
    files = markdown_files()
    assert ROOT / "README.md" in files and RULES in files
    problems = [f"{path.relative_to(ROOT)}: {problem}" for path in files for problem in broken_links(path)]
    assert problems == []


def test_the_link_check_finds_a_missing_file_a_wrong_anchor_and_a_link_outside(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## Ünïcode: `code` & more!\n\n## Ünïcode: `code` & more!\n")
    (tmp_path / "page.md").write_text(
        "# A page\n\n## Its second part\n\n"
        "[ok](other.md#ünïcode-code--more) [ok, repeat](other.md#ünïcode-code--more-1) [ok](#its-second-part)\n"
        "[missing](nowhere.md) [bad anchor](other.md#other) [bad anchor](#its-third-part)\n"
        "[outside](../elsewhere.md) `[in code](nowhere.md)` <img src=\"gone.png\"> [web](https://example.org/x)\n")
    (tmp_path.parent / "elsewhere.md").write_text("# Elsewhere\n")
    assert broken_links(tmp_path / "page.md", root=tmp_path) == [
        "nowhere.md: no such file",
        "other.md#other: no heading of other.md has that anchor",
        "#its-third-part: no heading of page.md has that anchor",
        "../elsewhere.md: outside the project",
        "gone.png: no such file",
    ]


def test_the_readme_is_a_front_door_with_racing_in_a_browser_on_its_first_screen() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 260, len(lines)
    first_screen = "\n".join(lines[:60])
    tokens = _parser().parse(first_screen)
    headings = [_inline_text(inline) for opening, inline in itertools.pairwise(tokens)
                if opening.type == "heading_open" and opening.tag != "h1"]
    racing = [heading for heading in headings if re.search(r"\brace\b", heading, re.IGNORECASE)]
    assert racing, headings
    after = first_screen[first_screen.index(racing[0]):]
    assert re.search(r"\bin a browser\b", after, re.IGNORECASE), after
    assert "race-phone.png" in after


def _table_rows(path: Path, header: list[str]) -> list[list[str]]:
    """The body rows of the first table of ``path`` whose header cells are ``header``, cells as plain text."""
    tokens = _parser().parse(path.read_text(encoding="utf-8"))
    tables: list[list[list[str]]] = []
    row: list[str] = []
    for token in tokens:
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            row = []
        elif token.type == "inline" and tables and token.level > 0:
            row.append(_inline_text(token))
        elif token.type == "tr_close":
            tables[-1].append(row)
    matching = [table for table in tables if table and table[0] == header]
    assert matching, f"no table headed {header} in {path}"
    return matching[0][1:]


def test_the_settings_table_of_the_server_page_is_what_settings_py_declares() -> None:
    rows = _table_rows(ROOT / "server" / "README.md", ["variable", "default", "meaning"])
    assert [row[:2] for row in rows] == [[d.variable, d.shown] for d in DECLARATIONS.values()]


CITATION = re.compile(r"RULES\.md,? (?:section|sections|§) ?(\d+)((?:(?:,| and|-| to) ?\d+)*)")


def test_the_rules_sections_the_code_cites_are_sections_of_the_rules_in_the_engine_folder() -> None:
    numbers = {int(n) for n in re.findall(r"^## (\d+)\.", RULES.read_text(encoding="utf-8"), re.MULTILINE)}
    assert numbers == set(range(1, 11))
    cited: dict[int, set[str]] = {}
    sources = [path for suffix in ("py", "js", "c", "md") for path in ROOT.rglob(f"*.{suffix}")
               if not any(part in SKIPPED for part in path.relative_to(ROOT).parts) and "vendor" not in path.parts]
    for path in sources:
        for first, more in CITATION.findall(path.read_text(encoding="utf-8", errors="replace")):
            for number in [first, *re.findall(r"\d+", more)]:
                cited.setdefault(int(number), set()).add(str(path.relative_to(ROOT)))
    assert cited, "no citation found: the pattern is wrong"
    assert {number: files for number, files in cited.items() if number not in numbers} == {}
