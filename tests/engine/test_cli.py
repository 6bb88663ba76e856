"""The engine's command line (``deal``, ``replay``, ``solve``), run as a real subprocess, as people and scripts run it."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from server.about import version_line
from server.engine import deal, find_variant, format_position

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((Path(__file__).parent / "examples").glob("*.json"))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "server.engine", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_replay_json_matches_the_example_records(path: Path) -> None:
    """Per-move verdicts, final position and move count as the independent implementation gave them."""
    expected = json.loads(path.read_text())["expected"]
    result = run("replay", str(path), "--json")
    got = json.loads(result.stdout)
    assert [(r["i"], r["move"], r["ok"]) for r in got["results"]] == [(r["i"], r["move"], r["ok"]) for r in expected["results"]]
    assert all(("reason" in r) == (not r["ok"]) for r in got["results"])
    assert got["final"] == expected["final"]
    assert got["moves_counted"] == expected["moves_counted"]
    if expected["status"] == "won":
        assert got["status"] == "won"
    assert result.returncode == (0 if all(r["ok"] for r in expected["results"]) else 1)


def test_replay_text_output_has_a_line_per_move_and_the_final_position() -> None:
    path = Path(__file__).parent / "examples" / "random-classic.json"
    record = json.loads(path.read_text())
    result = run("replay", str(path))
    lines = result.stdout.splitlines()
    assert result.returncode == 1
    assert len([line for line in lines if line.strip() and line.split()[0].isdigit()]) >= len(record["moves"])
    assert "refused: unknown command 'S'" in result.stdout
    assert result.stdout.rstrip().endswith(record["expected"]["final"].splitlines()[-1])
    assert f"moves counted: {record['expected']['moves_counted']}" in result.stdout


def test_replay_of_an_all_legal_record_exits_0(tmp_path: Path) -> None:
    record = {"format": 1, "variant": "classic", "autoplay": True, "undo": "safe",
              "deal": format_position(deal("1", find_variant("classic"))), "moves": ["s", "s"]}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(record))
    result = run("replay", str(path), "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout)["moves_counted"] == 2


@pytest.mark.parametrize("content, message", [
    ("not json", "not valid JSON"),
    ("[]", "JSON object"),
    ('{"format": 2, "variant": "classic"}', "format 2"),
    ('{"format": 1, "variant": "nope", "autoplay": true, "undo": "safe", "deal": "", "moves": []}', "unknown variant"),
    ('{"format": 1, "variant": "classic", "autoplay": true, "undo": "sometimes", "deal": "", "moves": []}', "undo"),
    ('{"format": 1, "variant": "classic", "autoplay": true, "undo": "safe", "deal": "Foundations: -", "moves": []}', "deal"),
    ('{"format": 1, "variant": "classic", "autoplay": "yes", "undo": "safe", "deal": "", "moves": []}', "autoplay"),
])
def test_malformed_records_exit_2_with_a_message(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = run("replay", str(path), "--json")
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_missing_record_file_exits_2(tmp_path: Path) -> None:
    result = run("replay", str(tmp_path / "missing.json"))
    assert result.returncode == 2 and "cannot read" in result.stderr


def test_deal_prints_the_position_text() -> None:
    result = run("deal", "--seed", "1", "--variant", "Dress Parade")
    assert result.returncode == 0
    assert result.stdout.strip() == format_position(deal("1", find_variant("rank_and_file")))


def test_deal_redacted_shows_no_hidden_card() -> None:
    result = run("deal", "--seed", "1", "--variant", "emperor", "--redacted")
    position = deal("1", find_variant("emperor"))
    assert "Stock: 64" in result.stdout
    assert "(" not in result.stdout and result.stdout.count("??") == 30
    assert all(line.endswith(" ".join(["??"] * 3 + [line.split()[-1]])) for line in result.stdout.splitlines()[4:])
    assert position.stock  # the full deal has them; the redacted text does not


def test_deal_with_unknown_variant_is_a_usage_error() -> None:
    result = run("deal", "--seed", "1", "--variant", "klondike")
    assert result.returncode == 2 and "unknown variant" in result.stderr


def test_deal_pysol_refuses_lucas_with_the_reason() -> None:
    result = run("deal", "--pysol", "5", "--variant", "lucas")
    assert result.returncode == 2 and "13 columns of 4" in result.stderr


def test_output_into_a_pipe_closed_early_ends_quietly() -> None:
    """``python3 -m server.engine deal --seed 1 | head -1``: no BrokenPipeError traceback when head leaves."""
    with subprocess.Popen([sys.executable, "-m", "server.engine", "deal", "--seed", "1", "--variant", "sixty_thieves"],
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # the reader is gone before the first line
        stderr = process.stderr.read().decode()
        process.wait(60)
    assert "Traceback" not in stderr, stderr


@pytest.mark.parametrize(("value", "search"), [("python", "python search"), ("PYTHON", "python search"),
                                               ("", "c search")])
def test_solve_passes_ftr_solver_to_the_solver(value: str, search: str) -> None:
    """The command line reads ``FTR_SOLVER`` (the engine does not) and passes ``pure`` in."""
    pytest.importorskip("server.engine.solver._csolver", reason="the C extension is not built")
    import os

    env = {**os.environ, "FTR_SOLVER": value}
    result = subprocess.run([sys.executable, "-m", "server.engine", "solve", "--seed", "7", "--nodes", "30000"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("solved (") and search in result.stdout.splitlines()[0], result.stdout


def test_solve_shows_its_state_bound_and_keeps_to_it() -> None:
    """The state bound that can end ``solve --timeout 10 --nodes 1000000000`` before its time cap is
    ``--states``, with its default in ``--help``, and an answer cut short by it says so (a user reading
    ``unknown`` after 6 of 10 seconds must see why)."""
    import time

    from server.engine.solver import Budget

    shown = run("solve", "--help").stdout
    assert "--states N" in shown and f"(default {Budget().states})" in " ".join(shown.split())
    started = time.monotonic()
    result = run("solve", "--seed", "3", "--timeout", "10", "--nodes", "1000000000", "--states", "20000")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("unknown (state memory bound reached (--states 20000))"), result.stdout
    assert time.monotonic() - started < 10  # the bound ends it, long before the time cap
    capped = json.loads(run("solve", "--seed", "3", "--timeout", "1", "--nodes", "1000000000", "--json").stdout)
    assert (capped["result"], capped["reason"]) == ("unknown", "time limit reached")
    assert capped["seconds"] < 5  # the time cap governs when the state bound is not reached


def installed(command: str) -> Path:
    """The console script ``command`` pip installed next to this Python (skips where the checkout was never
    installed, so no such script exists)."""
    script = Path(sys.executable).parent / command
    if not script.exists():
        pytest.skip(f"{command} is not installed next to {sys.executable}")
    return script


def test_the_installed_command_calls_itself_forty_thieves_engine_and_tells_its_version() -> None:
    script = installed("forty-thieves-engine")
    shown = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60, check=True).stdout
    assert shown.startswith("usage: forty-thieves-engine ") and "python -m" not in shown
    assert run("--help").stdout == shown  # one name however it is started
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60, check=True)
    expected = f"forty-thieves-engine {metadata.version('forty-thieves-race')} (Python {platform.python_version()}; "
    assert version.stdout.startswith(expected) and version.stdout.count("\n") == 1, version.stdout
    assert "C paths: engine " in version.stdout and version.stderr == ""


def test_the_version_is_one_line_however_narrow_the_terminal() -> None:
    """argparse fills the version text to the terminal's width: without a compiler (both C paths off) the line
    is about 100 characters and came out on two lines in an 80-column terminal."""
    done = subprocess.run([sys.executable, "-m", "server.engine", "--version"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False, env=os.environ | {"COLUMNS": "40"})
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == version_line("forty-thieves-engine") + "\n"
