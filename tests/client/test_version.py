"""``forty-thieves --version``: the installation's version line, as the engine's and the server's commands
print it (``server/about.py``), and nothing else."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest


def test_the_client_tells_its_version_and_which_c_paths_run() -> None:
    script = Path(sys.executable).parent / "forty-thieves"
    if not script.exists():
        pytest.skip(f"forty-thieves is not installed next to {sys.executable}")
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    expected = f"forty-thieves {metadata.version('forty-thieves-race')} (Python {platform.python_version()}; C paths: "
    assert done.stdout.startswith(expected) and done.stdout.count("\n") == 1, done.stdout
    shown = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60, check=True).stdout
    assert shown.startswith("usage: forty-thieves [-h] [--version]")
