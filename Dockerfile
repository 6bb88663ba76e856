# The race server. Build: docker compose build; run: docker compose up (see docker-compose.yml).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml setup.py README.md ./
COPY protocol ./protocol
COPY server ./server
COPY client_cli ./client_cli
RUN pip install --no-cache-dir .
EXPOSE 8000
CMD ["forty-thieves-server", "--host", "0.0.0.0", "--port", "8000"]
