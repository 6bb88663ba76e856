# The race server. Build: docker compose build; run: docker compose up (see docker-compose.yml).
# Stage 1 builds the wheels, the optional C extensions included (the solver's search, the engine's hot path: they
# need gcc, which the slim image lacks).
FROM python:3.11-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY protocol ./protocol
COPY server ./server
COPY client_cli ./client_cli
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

# Stage 2 runs them, without the compiler.
FROM python:3.11-slim
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
EXPOSE 8000
CMD ["forty-thieves-server", "--host", "0.0.0.0", "--port", "8000"]
