"""Browser tests reuse the integration fixtures: a real Redis and real server processes."""

from tests.integration.conftest import make_server, redis_url, server  # noqa: F401 - fixtures
