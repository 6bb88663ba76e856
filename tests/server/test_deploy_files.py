"""docker-compose.yml and the Dockerfile: they parse, name only settings the server knows (a misspelt variable would be
ignored silently), and run as a service should (health checks, start order, restarts, pinned images, a non-root user,
a build that fails without the C extensions, one service per host port). There is no Docker engine here: the files
are read, and the health check commands are run against a stand-in HTTP server."""

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
    assert all(service["profiles"] in (["cluster"], ["monitoring"]) for name, service in services.items()
               if name not in default)
    assert sorted(name for name, service in services.items() if service.get("profiles") == ["monitoring"]) == [
        "grafana", "prometheus"]
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
    assert services["proxy"]["ports"] == ["8080:8000"] and ":8000 {" in caddyfile  # see the port test below
    assert "reverse_proxy" in caddyfile and "dynamic a cluster-server 8000" in caddyfile
    assert "flush_interval -1" in caddyfile  # Server-Sent Events pass as they come
    assert "cookie" not in caddyfile and "ip_hash" not in caddyfile and "lb_policy random" in caddyfile


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def _stages() -> list[list[str]]:
    """The Dockerfile's stages, each a list of its instructions (continuation lines joined, comments left out)."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    stages: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            stages.append([])
        stages[-1].append(line)
    return stages


def test_every_image_is_pinned_to_an_exact_release() -> None:
    """No floating tags (``redis:7``, ``caddy:2``, ``python:3.11-slim``): a rebuild or a pull gets what was tried."""
    import re

    images = {service["image"] for service in _compose()["services"].values() if "image" in service}
    assert images, "no images"
    for image in images:
        assert re.fullmatch(r"(redis|caddy|prom/prometheus|grafana/grafana):v?\d+\.\d+\.\d+(-[a-z0-9.]+)?", image), image
    bases = [stage[0].split()[1] for stage in _stages()]
    assert len(bases) == 2 and len(set(bases)) == 1, bases  # build and run on the same interpreter
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm", bases[0]), bases


def test_services_check_their_health_start_in_order_and_restart() -> None:
    compose = _compose()
    services = compose["services"]
    redises = ["redis"] + [f"redis-{n}" for n in range(1, 7)]
    for name in redises:
        assert "redis-cli ping" in " ".join(services[name]["healthcheck"]["test"]), name
    for name in ("server", "cluster-server"):
        assert services[name]["healthcheck"]["test"][0] == "CMD" and "/readyz" in services[name]["healthcheck"]["test"][-1]
    assert services["server"]["depends_on"] == {"redis": {"condition": "service_healthy"}}
    assert services["redis-cluster-init"]["depends_on"] == {f"redis-{n}": {"condition": "service_healthy"}
                                                           for n in range(1, 7)}
    assert services["proxy"]["depends_on"] == {"cluster-server": {"condition": "service_healthy"}}
    for name, service in services.items():
        # The one-shot set-up exits 0 when done: "unless-stopped" would start it again and again.
        assert service["restart"] == ("no" if name == "redis-cluster-init" else "unless-stopped"), name
        for dependency in service.get("depends_on", {}).values():
            assert dependency["condition"] in ("service_healthy", "service_completed_successfully"), name


def test_no_two_services_publish_one_host_port() -> None:
    """Under the cluster profile both the single server and the proxy start unless the proxy is named: each
    publishes a host port of its own (8000 and 8080), and the file's header and the server's page say which."""
    services = _compose()["services"]
    published = [(name, str(port).split(":")[0]) for name, service in services.items()
                 for port in service.get("ports", [])]
    hosts = [port for _, port in published]
    assert len(hosts) == len(set(hosts)), published
    assert dict(published) == {"server": "8000", "proxy": "8080", "prometheus": "9090", "grafana": "3000"}
    header = (ROOT / "docker-compose.yml").read_text().split("\nx-")[0]
    readme = (ROOT / "server" / "README.md").read_text()
    for text in (header, readme):
        assert "http://localhost:8080/" in text and "--profile cluster up --scale cluster-server=3 proxy" in text


def test_the_image_runs_as_an_unprivileged_user() -> None:
    run = _stages()[-1]
    users = [line.split()[1] for line in run if line.upper().startswith("USER ")]
    assert users and users[-1] not in ("root", "0") and not users[-1].startswith("0:"), users
    assert any("useradd" in line and line.rstrip().endswith(users[-1]) for line in run), run


def test_the_build_fails_when_the_c_extensions_did_not_build() -> None:
    """pip builds them as optional extensions: without a compiler the wheel is built anyway, pure Python. The
    build stage imports every C path (server/about.py's list) from the installed wheel, after installing it,
    and fails otherwise."""
    from server.about import C_PATHS

    build = _stages()[0]
    installed = next(i for i, line in enumerate(build) if line.startswith("RUN pip install"))
    checks = [line for line in build[installed + 1:] if line.startswith("RUN") and "import" in line]
    assert checks, build
    assert all(module in checks[0] for module in C_PATHS.values()), checks[0]
    assert "cd /" in checks[0] and "exit 1" in checks[0]  # not the source folder's modules; a failing step


def test_the_build_stage_copies_what_the_package_metadata_names() -> None:
    """``pyproject.toml``'s readme and license files must be in the build context the wheel is built from."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    named = [project["readme"], *project.get("license-files", [])]
    copied = " ".join(line for line in _stages()[0] if line.startswith("COPY "))
    for name in named:
        assert name in copied.split(), (name, copied)


def test_the_health_check_asks_readyz_and_fails_on_anything_but_200() -> None:
    """The server's health check command (compose's and the image's: the same), run here against a stand-in
    HTTP server on ``FTR_PORT``: 200 on /readyz passes; 503 (Redis unreachable), a missing route or nothing
    listening fail."""
    import json
    import os
    import subprocess
    import sys
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    compose_test = _compose()["services"]["server"]["healthcheck"]["test"]
    image_check = next(line for line in _stages()[-1] if line.startswith("HEALTHCHECK"))
    assert json.loads(image_check.split(" CMD ", 1)[1]) == compose_test[1:]
    assert _compose()["services"]["cluster-server"]["healthcheck"]["test"] == compose_test

    status = {"code": 200}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status["code"] if self.path == "/readyz" else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    stand_in = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=stand_in.serve_forever, daemon=True).start()
    port = stand_in.server_address[1]

    def check(env_port: int) -> int:
        argv = [sys.executable if part == "python" else part for part in compose_test[1:]]
        return subprocess.run(argv, env=dict(os.environ, FTR_PORT=str(env_port)), capture_output=True,
                              timeout=30, check=False).returncode

    try:
        assert check(port) == 0
        status["code"] = 503
        assert check(port) != 0
    finally:
        stand_in.shutdown()
        stand_in.server_close()
    assert check(port) != 0  # nothing listens any more


def test_the_monitoring_profile_scrapes_every_server_and_loads_the_dashboard() -> None:
    """Prometheus scrapes the single server and each cluster server (Docker's DNS names every replica) at the
    port they listen on; Grafana gets Prometheus as its default data source, under the uid the dashboard's
    ``datasource`` variable is given, and the dashboard file the compose file mounts is the one in the package,
    which parses and asks for the server's metric families."""
    import json

    compose = _compose()
    services = compose["services"]
    port = services["server"]["environment"]["FTR_PORT"]
    assert services["cluster-server"]["environment"]["FTR_PORT"] == port
    prometheus = yaml.safe_load(compose["configs"]["prometheus"]["content"])
    [job] = prometheus["scrape_configs"]
    assert job.get("metrics_path", "/metrics") == "/metrics"
    assert job["static_configs"] == [{"targets": [f"server:{port}"]}]
    assert job["dns_sd_configs"] == [{"names": ["cluster-server"], "type": "A", "port": int(port)}]
    [source] = yaml.safe_load(compose["configs"]["grafana-datasource"]["content"])["datasources"]
    assert source["type"] == "prometheus" and source["url"] == "http://prometheus:9090" and source["isDefault"]
    [provider] = yaml.safe_load(compose["configs"]["grafana-dashboards"]["content"])["providers"]
    mounted = {volume.split(":")[1]: volume.split(":")[0] for volume in services["grafana"]["volumes"]
               if volume.startswith("./")}
    [outside] = [outside for inside, outside in mounted.items()
                 if inside.startswith(provider["options"]["path"] + "/")]
    dashboard = json.loads((ROOT / outside).read_text())
    assert outside == "./server/deploy/grafana-dashboard.json"
    queries = " ".join(target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", []))
    for family in ("ftr_http_requests_total", "ftr_commands_total", "ftr_solver_decision_seconds"):
        assert family in queries, family
    assert [v["type"] for v in dashboard["templating"]["list"] if v["name"] == "datasource"] == ["datasource"]
