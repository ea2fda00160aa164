"""Opening, initialising and checking an ArangoDB deployment from ``config.arango``.

The three entry points the CLI and ``store.factory`` call:

- ``open_arango_store(config)``: connect (verifying credentials), refuse servers older than
  the 3.12.6 floor, apply ``schemas/`` when the database is new, return an ``ArangoStore``;
- ``init_arango(config)``: create the database if needed and apply ``schemas/``
  idempotently, fold entity keys stored before they were NFKC (``entity_keys``), then
  create the vector index when enough vectors exist;
- ``rebuild_vector_index(config)``: drop and re-create it (after bulk loads / drift, and
  after a re-embedding: the cells were trained on the old space), in the background.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from arango import errno
from arango.client import ArangoClient
from arango.database import StandardDatabase
from arango.exceptions import ArangoClientError, ArangoError, ArangoServerError
from arango.http import DefaultHTTPAdapter, DefaultHTTPClient
from requests import Session
from urllib3.util.retry import Retry

from attestor_arango.config import ArangoSettings, Config
from attestor_arango.errors import StoreError
from attestor_arango.scope import Scope
from attestor_arango.store.arango.base import COLLECTIONS
from attestor_arango.store.arango.executor import Executor
from attestor_arango.store.arango.registry import Registry
from attestor_arango.store.arango.schema import apply_schema, ensure_vector_index, version_tuple
from attestor_arango.store.arango.store import ArangoStore

DATABASE_NOT_FOUND = errno.DATABASE_NOT_FOUND  # 1228
DUPLICATE_NAME = errno.DUPLICATE_NAME  # 1207
MIN_SERVER_VERSION = (3, 12, 6)  # single-FILTER pre-filtered vector search
PINNED_IMAGE = "arangodb:3.12.7.2"  # docker-compose.yml and the testcontainers fixture
# python-arango's index formatter keeps the vector index's ``params`` from 8.2.4 and its
# ``trainingState`` / ``errorMessage`` from 8.3.2 (arango/formatter.py, format_index);
# older drivers make the dimension read as unknown and an untrained index look ready.
MIN_DRIVER_VERSION = (8, 3, 2)
REQUEST_TIMEOUT_S = 60.0  # python-arango's own default; store reads and writes
# Creating the vector index answers only once it is built on servers before 3.12.9, even in
# the background ("the initial ensureIndex() call or HTTP request will still block until the
# index is completely ready", docs-hugo 3.12 indexing/basics.md; with inBackground false
# "the call returns only after the index training has finished (but timeouts may occur)",
# vector-indexes.md); over a large collection that takes minutes, so init / vector-index
# wait this long for the answer instead of giving up after 60 s.
INDEX_BUILD_TIMEOUT_S = 3600.0


def driver_version_problem(version: str) -> str | None:
    """Why this python-arango version cannot serve the backend, or None when it can."""
    if version_tuple(version) >= MIN_DRIVER_VERSION:
        return None
    return (
        f"python-arango {version} is older than 8.3.2: before 8.2.4 its indexes() drops the "
        "vector index's params (the dimension reads as unknown) and before 8.3.2 its "
        "trainingState (an untrained index looks ready); run pip install 'python-arango>=8.3.2'"
    )


def check_driver_version(version: str | None = None) -> str:
    """The installed python-arango version; raises ``StoreError`` when it is too old."""
    version = metadata.version("python-arango") if version is None else version
    problem = driver_version_problem(version)
    if problem is not None:
        raise StoreError(problem)
    return version


class QuietRetryHTTPClient(DefaultHTTPClient):
    """python-arango's HTTP client, with urllib3 retries for answers and broken reads of
    idempotent requests, never for connections that could not be made.

    urllib3 logs a WARNING for every retried connection error ("Retrying ... after
    connection broken by ..."), and python-arango's host resolver already moves on to the
    next coordinator; so a down server was reported once per retry and per try instead of
    once. Here a failed connection fails at once (python-arango tries each host once, see
    ``make_client``), while idempotent requests still retry 429/5xx answers, quietly.
    """

    def create_session(self, host: str) -> Session:
        retry = Retry(
            total=self._retry_attempts,
            connect=0,  # a refused or unreachable host fails at once, without a WARNING
            backoff_factor=self._backoff_factor,
            status_forcelist=[429, 500, 502, 503, 504],
            allowed_methods=["HEAD", "GET", "OPTIONS"],
        )
        adapter = DefaultHTTPAdapter(
            connection_timeout=self.request_timeout,
            pool_connections=self._pool_connections,
            pool_maxsize=self._pool_maxsize,
            pool_timeout=self._pool_timeout,
            max_retries=retry,
        )
        session = Session()
        session.mount("https://", adapter)
        session.mount("http://", adapter)
        return session


def make_client(
    settings: ArangoSettings,
    *,
    retry_attempts: int = 2,
    request_timeout: float = REQUEST_TIMEOUT_S,
) -> ArangoClient:
    """One client per process: it owns the HTTP session pool.

    The pool is larger than python-arango's default 10 (threads of a server share it);
    429/5xx answers to reads are retried briefly; a connection that fails is tried once per
    configured coordinator, so a server that is down is reported in about a second, once.
    ``request_timeout`` bounds the wait for each answer (index maintenance passes
    ``INDEX_BUILD_TIMEOUT_S``). Raises ``StoreError`` before any I/O when python-arango is
    older than 8.3.2.
    """
    check_driver_version()
    http = QuietRetryHTTPClient(
        request_timeout=request_timeout,
        retry_attempts=retry_attempts,
        backoff_factor=0.2,
        pool_maxsize=32,
    )
    hosts = [h.strip() for h in settings.url.split(",") if h.strip()]
    return ArangoClient(
        hosts=hosts if len(hosts) > 1 else settings.url,
        http_client=http,
        verify_override=settings.verify_tls,
        resolver_max_tries=max(1, len(hosts)),
    )


def connect_error(settings: ArangoSettings, exc: BaseException) -> StoreError:
    """One sentence for why the database could not be opened, and what to do about it."""
    where = f"cannot open ArangoDB database {settings.database!r} at {settings.url}"
    if isinstance(exc, ArangoServerError) and exc.http_code in (401, 403):
        return StoreError(
            f"{where}: the server refused user {settings.username!r} (HTTP {exc.http_code}); "
            "check ARANGO_USER / ARANGO_PASSWORD (arango.username / arango.password)",
        )
    if isinstance(exc, ArangoServerError) and exc.http_code is not None:
        return StoreError(
            f"{where}: {exc.error_message or exc} (HTTP {exc.http_code}, error "
            f"{exc.error_code}); check arango.url / ARANGO_URL and the account's rights",
        )
    if isinstance(exc, ArangoClientError | OSError | ArangoServerError):
        return StoreError(
            f"{where}: no server answered; start it (docker compose up -d) or set "
            "arango.url / ARANGO_URL to where it runs",
        )
    return StoreError(f"{where}: {exc}")


def _connect(
    settings: ArangoSettings, client: ArangoClient, *, create: bool
) -> tuple[StandardDatabase, bool]:
    """The configured database, created when ``create`` and missing; (db, was_created).

    The database itself is tried first, so an account without rights on ``_system`` can
    use a database an administrator created; ``_system`` is only touched to create it.
    """
    password = settings.password.get_secret_value()
    try:
        try:
            return client.db(settings.database, settings.username, password, verify=True), False
        except ArangoServerError as exc:
            if not (create and exc.error_code == DATABASE_NOT_FOUND):
                raise
        sys_db = client.db("_system", settings.username, password, verify=True)
        try:
            created = bool(sys_db.create_database(settings.database))
        except ArangoServerError as exc:
            if exc.error_code != DUPLICATE_NAME:  # another process created it meanwhile
                raise
            created = False
        db = client.db(settings.database, settings.username, password, verify=True)
    except (ArangoError, OSError) as exc:
        raise connect_error(settings, exc) from exc
    return db, created


def check_server_version(db: StandardDatabase) -> str:
    version = str(db.version())
    if version_tuple(version) < MIN_SERVER_VERSION:
        raise StoreError(
            f"ArangoDB {version} is older than 3.12.6, the first release with pre-filtered "
            f"vector search; run {PINNED_IMAGE} (see docker-compose.yml)",
        )
    return version


def schema_present(db: StandardDatabase) -> bool:
    """Every collection and view of ``schemas/`` exists (two requests; indexes not checked)."""
    collections = {c["name"] for c in db.collections()}  # type: ignore[union-attr]
    views = {v["name"] for v in db.views()}  # type: ignore[union-attr]
    return set(COLLECTIONS) <= collections and {"memories_view"} <= views


def open_arango_store(config: Config, **store_options: Any) -> ArangoStore:
    """An ``ArangoStore`` for ``config.arango``; applies the schema on first use."""
    settings = config.arango
    client = make_client(settings)
    try:
        db, created = _connect(settings, client, create=True)
        check_server_version(db)
        if created or not schema_present(db):
            apply_schema(db)
    except (ArangoError, OSError) as exc:  # the server went away after the first answer
        client.close()
        raise connect_error(settings, exc) from exc
    except BaseException:
        client.close()
        raise
    store_options.setdefault("vector_min_docs", settings.vector_min_docs)
    return ArangoStore(db, client=client, **store_options)


def init_arango(config: Config) -> dict[str, Any]:
    """Creates the database and applies ``schemas/`` idempotently; reports what it did."""
    settings = config.arango
    client = make_client(settings, request_timeout=INDEX_BUILD_TIMEOUT_S)
    try:
        db, created = _connect(settings, client, create=True)
        version = check_server_version(db)
        report = apply_schema(db)
        report["entity_keys"] = fold_stored_entity_keys(ArangoStore(db))
        executor = Executor(Registry.load(), lambda: db)
        report["vector_index"] = ensure_vector_index(
            db, executor, min_docs=settings.vector_min_docs
        )
        report.update({"database": settings.database, "created": created, "server": version})
        return report
    except (ArangoError, OSError) as exc:  # python-arango's own errors, or no answer at all
        raise connect_error(settings, exc) from exc
    finally:
        client.close()


def fold_stored_entity_keys(store: ArangoStore) -> dict[str, dict[str, int]]:
    """Folds the entity keys every tenant stored before keys were NFKC
    (``entity_keys.EntityKeyFolding``), one tenant's ``Scope`` at a time; what changed, per
    tenant that had something to fold (empty when run again). Raises ``StoreError``."""
    report: dict[str, dict[str, int]] = {}
    for tenant in store.entity_key_tenants():
        counts = store.fold_entity_keys(Scope(tenant))
        if any(counts.values()):
            report[tenant] = counts
    return report


def ensure_vector_index_for(config: Config) -> dict[str, Any]:
    """Creates the vector index if it is missing and enough vectors exist; its status."""
    settings = config.arango
    client = make_client(settings, request_timeout=INDEX_BUILD_TIMEOUT_S)
    try:
        db, _ = _connect(settings, client, create=False)
        check_server_version(db)
        executor = Executor(Registry.load(), lambda: db)
        return ensure_vector_index(db, executor, min_docs=settings.vector_min_docs)
    except (ArangoError, OSError) as exc:  # python-arango's own errors, or no answer at all
        raise connect_error(settings, exc) from exc
    finally:
        client.close()


def rebuild_vector_index(config: Config) -> dict[str, Any]:
    """Drops and re-creates the vector index over the vectors stored now, in the background:
    writes go on while it trains; vector queries use the exact scan from the drop until the
    new index is ready (``schema.BUILDING_NOTE``)."""
    settings = config.arango
    client = make_client(settings, request_timeout=INDEX_BUILD_TIMEOUT_S)
    try:
        db, _ = _connect(settings, client, create=False)
        check_server_version(db)
        executor = Executor(Registry.load(), lambda: db)
        return ensure_vector_index(db, executor, min_docs=1, rebuild=True)
    except (ArangoError, OSError) as exc:  # python-arango's own errors, or no answer at all
        raise connect_error(settings, exc) from exc
    finally:
        client.close()
