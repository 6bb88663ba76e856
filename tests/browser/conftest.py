"""Browser tests reuse the integration fixtures: a real Redis and real server processes."""

from tests.integration.conftest import (  # noqa: F401 - fixtures
    fresh_names,
    make_own_server,
    make_server,
    own_redis_url,
    redis_url,
    server,
)
