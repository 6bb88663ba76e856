"""axe-core in the browser tests: the accessibility violations of a page, serious or critical ones only.

The published browser build of axe-core is vendored in ``tests/browser/vendor/`` (its version and licence
in the README there); it is injected into the page under test, never served to players.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

AXE = Path(__file__).with_name("vendor") / "axe.min.js"
SEVERE = ("serious", "critical")


async def severe_violations(page: Any) -> list[dict[str, Any]]:
    """``axe.run()`` on the whole ``page`` (a Playwright page): its violations of impact serious or critical,
    each ``{id, impact, help, nodes: [target selectors]}``; printed when there are any, for the test's log."""
    if not await page.evaluate("typeof window.axe !== 'undefined'"):
        await page.add_script_tag(path=str(AXE))
    found = await page.evaluate("""async () => (await axe.run(document)).violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' '))}))""")
    severe = [v for v in found if v["impact"] in SEVERE]
    for violation in severe:
        print(f"axe {violation['impact']}: {violation['id']} ({violation['help']}): {violation['nodes']}")
    return severe
