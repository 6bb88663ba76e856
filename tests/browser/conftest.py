"""Browser tests reuse the integration fixtures: a real Redis and real server processes, and no name claimed
by another test (``fresh_names``: names are claimed on first use, and the tests reuse "ann" and "bob")."""

from tests.integration.conftest import (  # noqa: F401 - fixtures
    fresh_names,
    make_own_server,
    make_server,
    own_redis_url,
    redis_url,
    server,
)
