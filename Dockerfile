# attestor-arango service image: the REST API (and, with another command, MCP over HTTP).
#
#   docker build -t attestor-arango:local .
#   docker run -p 127.0.0.1:8080:8080 -v ./keys.yaml:/run/secrets/attestor_keys:ro attestor-arango:local
#
# Slim Python base, a non-root user, the server and mcp extras; the local embedding model
# (all-MiniLM-L6-v2 int8 ONNX and its tokenizer) is installed inside the image with the
# package, so nothing is downloaded when the container runs. docker-compose.yml runs it
# on ArangoDB (service `api`). The command below is exercised without Docker by
# tests/test_service_image.py.

FROM python:3.12-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY attestor_arango ./attestor_arango
COPY aql ./aql
COPY schemas ./schemas
RUN python -m venv /opt/attestor \
    && /opt/attestor/bin/pip install ".[server,mcp]"

FROM python:3.12-slim
# ATTESTOR_API_KEYS names the key file's path (digests only), not a secret itself
# hadolint ignore=DL3064
ENV PATH=/opt/attestor/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    ATTESTOR_HOME=/data \
    ATTESTOR_EMBEDDER=local \
    ATTESTOR_API_KEYS=/run/secrets/attestor_keys
RUN groupadd --system --gid 10001 attestor \
    && useradd --system --uid 10001 --gid attestor --home-dir /data --create-home attestor
COPY --from=build /opt/attestor /opt/attestor
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4).status != 200)"]
ENTRYPOINT ["attestor-arango"]
CMD ["api", "--host", "0.0.0.0", "--port", "8080", "--log-format", "json"]
