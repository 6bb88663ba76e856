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


def test_the_compose_files_cluster_profile_runs_servers_behind_a_proxy_on_a_3_plus_3_cluster() -> None:
    """docker-compose.yml's profile ``cluster`` parses, its servers name only known settings and reach the
    cluster, the proxy sends to the servers' service without sticky sessions, and the cluster is 3 masters with
    a replica each; every service of the profile is in it alone, so a plain ``docker compose up`` stays the
    single Redis and one server."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    default = sorted(name for name, service in services.items() if "profiles" not in service)
    assert default == ["redis", "server"]
    assert all(service["profiles"] == ["cluster"] for name, service in services.items() if name not in default)
    nodes = sorted(name for name in services if name.startswith("redis-") and name[6:].isdigit())
    assert nodes == [f"redis-{n}" for n in range(1, 7)]
    for name in nodes:
        command = " ".join(services[name]["command"])
        assert services[name]["image"].startswith("redis:7") and "--cluster-enabled yes" in command, name
    create = " ".join(services["redis-cluster-init"]["command"])
    assert "redis-cli --cluster create" in create and "--cluster-replicas 1" in create and "1 2 3 4 5 6" in create
    server = services["cluster-server"]
    assert server["build"] == "." and "ports" not in server  # reached through the proxy only
    assert server["depends_on"]["redis-cluster-init"]["condition"] == "service_completed_successfully"
    environment = server["environment"]
    assert set(environment) <= set(ENVIRONMENT_VARIABLES), set(environment) - set(ENVIRONMENT_VARIABLES)
    settings = Settings.from_environ({k: str(v) for k, v in environment.items()})
    assert settings.redis_url is not None and settings.redis_url.split("//")[1].split(":")[0] in nodes
    assert settings.redis_wait_replicas == 1 and settings.port == 8000 and settings.host == "0.0.0.0"
    caddyfile = compose["configs"]["caddyfile"]["content"]
    assert services["proxy"]["ports"] == ["8000:8000"]
    assert "reverse_proxy" in caddyfile and "dynamic a cluster-server 8000" in caddyfile
    assert "flush_interval -1" in caddyfile  # Server-Sent Events pass as they come
    assert "cookie" not in caddyfile and "ip_hash" not in caddyfile and "lb_policy random" in caddyfile
