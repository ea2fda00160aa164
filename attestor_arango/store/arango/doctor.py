"""``arango_doctor``: what an operator needs to know before trusting the deployment.

Reports server version against the 3.12.6 floor, whether ``--vector-index`` is on, every
collection / index / view of ``schemas/`` (present, missing, drifted; view links that the
server silently dropped) and the vector index's training state. Read-only.
"""

from __future__ import annotations

from typing import Any

from arango.exceptions import ArangoError

from ...config import Config
from .connect import MIN_SERVER_VERSION, PINNED_IMAGE, _connect, make_client
from .executor import Executor
from .registry import Registry
from .schema import (
    index_matches,
    load_schema,
    missing_view_links,
    vector_index_state,
    version_tuple,
)


def _vector_option(client: Any, config: Config) -> Any:
    """The server's ``vector-index`` option; needs _system access (``/_admin/options``)."""
    settings = config.arango
    try:
        sys_db = client.db(
            "_system", settings.username, settings.password.get_secret_value(), verify=False
        )
        options = sys_db.options()
    except (ArangoError, OSError) as exc:
        return f"unknown ({exc}); start arangod with --vector-index=true"
    for name in ("vector-index", "experimental-vector-index"):
        if name in options:
            return options[name]
    return "not reported by this server"


def arango_doctor(config: Config) -> dict[str, Any]:
    settings = config.arango
    client = make_client(settings)
    report: dict[str, Any] = {"backend": "arangodb", "url": settings.url, "ok": False}
    try:
        db, _ = _connect(settings, client, create=False)
        version = str(db.version())
        report["server_version"] = version
        report["version_ok"] = version_tuple(version) >= MIN_SERVER_VERSION
        report["recommended_image"] = PINNED_IMAGE
        report["role"] = db.role()
        report["vector_index_option"] = _vector_option(client, config)
        schema = load_schema()
        collections: dict[str, Any] = {}
        for spec in schema["collections"]:
            if not db.has_collection(spec["name"]):
                collections[spec["name"]] = "missing"
                continue
            have = {ix.get("name"): ix for ix in db.collection(spec["name"]).indexes()}  # type: ignore[union-attr]
            collections[spec["name"]] = {
                ix["name"]: (
                    "missing"
                    if ix["name"] not in have
                    else "ok"
                    if index_matches(have[ix["name"]], ix)
                    else "drift"
                )
                for ix in spec["indexes"]
            }
        report["collections"] = collections
        views: dict[str, Any] = {}
        names = {v["name"] for v in db.views()}  # type: ignore[union-attr]
        for view in schema["views"]:
            if view["name"] not in names:
                views[view["name"]] = "missing"
            else:
                lost = missing_view_links(db, view)
                views[view["name"]] = "ok" if not lost else {"missing_links": lost}
        report["views"] = views
        if db.has_collection("memories"):
            report["vector_index"] = vector_index_state(db)
            executor = Executor(Registry.load(), lambda: db)
            report["vector_stats"] = executor.run_admin("admin_vector_stats", {})[0]
        schema_ok = all(
            isinstance(c, dict) and all(s == "ok" for s in c.values()) for c in collections.values()
        ) and all(v == "ok" for v in views.values())
        report["schema_ok"] = schema_ok
        report["ok"] = bool(report["version_ok"]) and schema_ok
        if not schema_ok:
            report["next_step"] = "run `attestor-arango init --backend arangodb`"
    except Exception as exc:  # the doctor reports, it does not raise
        report["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        client.close()
    return report
