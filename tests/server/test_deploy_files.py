"""docker-compose.yml parses and names only settings the server knows (a misspelt variable would be ignored silently)."""

from __future__ import annotations

from pathlib import Path

import yaml

from server.settings import ENVIRONMENT_VARIABLES, Settings

ROOT = Path(__file__).resolve().parents[2]


def test_compose_file_parses_and_uses_only_known_settings() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert services["redis"]["image"].startswith("redis:7")
    environment = services["server"]["environment"]
    assert set(environment) <= set(ENVIRONMENT_VARIABLES), set(environment) - set(ENVIRONMENT_VARIABLES)
    assert environment["REDIS_URL"].startswith("redis://redis:")
    settings = Settings.from_environ({k: str(v) for k, v in environment.items()})
    assert settings.redis_url == environment["REDIS_URL"] and settings.port == 8000
    assert services["server"]["build"] == "."
    assert (ROOT / "Dockerfile").exists()


def test_every_setting_is_documented_in_the_settings_module() -> None:
    import server.settings as module

    for name in ENVIRONMENT_VARIABLES:
        assert f"``{name}``" in (module.__doc__ or ""), name


def test_ftr_solver_python_is_read_into_the_settings() -> None:
    """The server reads ``FTR_SOLVER`` once, into ``pure_solver``, which it passes to the solver."""
    assert Settings.from_environ({}).pure_solver is False
    assert Settings.from_environ({"FTR_SOLVER": "python"}).pure_solver is True
    assert Settings.from_environ({"FTR_SOLVER": " Python "}).pure_solver is True
    assert Settings.from_environ({"FTR_SOLVER": "c"}).pure_solver is False
