# The race server. Build: docker compose build; run: docker compose up (see docker-compose.yml).
# The base image is pinned to an exact release (Python 3.11.16 on Debian 12 "bookworm"): a rebuild gets the same
# interpreter; raise the pin on purpose.
#
# Stage 1 builds the wheels, the optional C extensions included (the solver's search, the engine's hot path: they
# need gcc, which the slim image lacks), and fails the build when they did not build: pip treats them as optional,
# so without this check a missing compiler gave an image that runs the pure Python, several times slower.
FROM python:3.11.16-slim-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY protocol ./protocol
COPY server ./server
COPY client_cli ./client_cli
RUN pip wheel --no-cache-dir --wheel-dir /wheels .
# Installed and imported from outside the source folder, so the installed wheel's extensions are the ones tried.
RUN pip install --no-cache-dir --no-index /wheels/*.whl
RUN cd / && python -c "import server.engine._cengine, server.engine.solver._csolver" \
    || { echo "the C extensions (server.engine._cengine, server.engine.solver._csolver) did not build" >&2; exit 1; }

# Stage 2 runs them, without the compiler, as an unprivileged user.
FROM python:3.11.16-slim-bookworm
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 FTR_HOST=0.0.0.0 FTR_PORT=8000
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index /wheels/*.whl && rm -rf /wheels \
    && useradd --system --uid 10001 --user-group --create-home --home-dir /home/ftr ftr
USER ftr
WORKDIR /home/ftr
EXPOSE 8000
# Ready when Redis answers (/readyz); the slim image has no curl, so Python's urllib asks (a 503 raises).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('FTR_PORT', '8000') + '/readyz', timeout=4)"]
CMD ["forty-thieves-server"]
