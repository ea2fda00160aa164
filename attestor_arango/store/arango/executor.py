"""The tenant-filter executor: the only code path that sends AQL to ArangoDB.

Three locks in place of row-level security (ArangoDB has none):

1. the tenant is injected as ``@tenant`` from the ``Scope``; a caller cannot pass it;
2. only registered queries run (``aql/`` files, see ``registry``), with exactly the bind
   parameters their header declares, so a typo fails here instead of as error 1551/1552;
3. every returned row is checked against the Scope with ``check_tenant``; a foreign row
   raises ``TenantLeakError`` instead of reaching the caller.

Server errors become ``ArangoQueryError`` (a ``StoreError`` carrying ArangoDB's numeric
``error_code``) so the store can act on 1554 / 1210 / 1200 without importing driver types.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from numbers import Number
from typing import Any

from arango.database import Database
from arango.exceptions import ArangoClientError, ArangoServerError

from attestor_arango.errors import StoreError, TenantLeakError, ValidationError
from attestor_arango.scope import Scope
from attestor_arango.store.arango.registry import Query, Registry
from attestor_arango.store.protocol import check_tenant

# Integers above 2**53 survive JSON, but AQL arithmetic and ArangoSearch compare numbers as
# doubles; a bound integer that a double cannot hold exactly could compare wrongly.
_DOUBLE_EXACT = 2**53
# Free-form JSON of the caller: stored as given (VelocyPack keeps 64-bit integers) and never
# compared in AQL, so it is not held to the double rule.
USER_JSON = frozenset({"metadata", "details", "properties"})


class ArangoQueryError(StoreError):
    """A registered query failed on the server; ``error_code`` is ArangoDB's errorNum."""

    def __init__(self, message: str, *, query: str, error_code: int | None) -> None:
        super().__init__(message, query=query, error_code=error_code)
        self.query = query
        self.error_code = error_code


def check_exact_numbers(value: Any, where: str) -> None:
    """Refuses integers a double cannot represent exactly (see ``_DOUBLE_EXACT``)."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        if abs(value) > _DOUBLE_EXACT and float(value) != value:
            raise ValidationError(
                f"{where}: integer {value} is not exactly representable as a double, so "
                "ArangoDB could compare it wrongly; times must be microseconds below 2**53 "
                "or the OPEN sentinel",
            )
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key not in USER_JSON:
                check_exact_numbers(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if not isinstance(item, float):
                check_exact_numbers(item, f"{where}[{index}]")


def check_rows(name: str, scope: Scope, rows: list[Any]) -> list[dict[str, Any]]:
    """The third lock: every row must be an object of the scope's tenant (and namespace)."""
    for row in rows:
        if not isinstance(row, dict) or "tenant" not in row:
            raise TenantLeakError(
                f"query {name!r} returned a row without a tenant field; every tenant "
                "query must return objects carrying the row's tenant",
            )
    check_tenant(scope, rows)
    return rows


class Executor:
    """Runs registry queries against whichever database handle ``db`` returns.

    ``db`` is a callable so that a store can route every call made inside
    ``Store.transaction()`` to its python-arango ``TransactionDatabase``.
    """

    def __init__(
        self,
        registry: Registry,
        db: Callable[[], Database],
        *,
        fail_on_warning: bool = True,
        max_runtime: Number | None = None,
    ) -> None:
        self.registry = registry
        self._db = db
        self.fail_on_warning = fail_on_warning
        self.max_runtime = max_runtime

    def run(self, name: str, scope: Scope, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Runs a tenant query; returns rows already checked against ``scope``."""
        if not isinstance(scope, Scope):
            raise StoreError(f"query {name!r} needs a Scope; got {type(scope).__name__}")
        query = self.registry.get(name)
        if query.admin:
            raise StoreError(f"query {name!r} is cross-tenant (admin); use run_admin")
        if "tenant" in params:
            raise StoreError(
                f"query {name!r}: callers must not pass 'tenant'; it comes from the Scope",
            )
        bind = {**params, "tenant": scope.tenant}
        return check_rows(name, scope, self._execute(query, bind))

    def run_admin(self, name: str, params: Mapping[str, Any]) -> list[Any]:
        """Runs a cross-tenant statistics query (schema, doctor); no rows are tenant data."""
        query = self.registry.get(name)
        if not query.admin:
            raise StoreError(f"query {name!r} reads tenant data; run it through run() with a Scope")
        return self._execute(query, dict(params))

    def explain(self, name: str, scope: Scope, params: Mapping[str, Any]) -> dict[str, Any]:
        """The server's plan of a tenant query, with the rules its file declares (for the live
        tests and operators: which index serves it). Raises like ``run``."""
        query = self.registry.get(name)
        bind = {**params, "tenant": scope.tenant}
        self._check_bind(query, bind)
        rules = list(query.optimizer_rules) or None
        try:
            plan = self._db().aql.explain(query.text, bind_vars=bind, opt_rules=rules)
        except ArangoServerError as exc:
            raise ArangoQueryError(
                f"ArangoDB refused to explain {query.name!r}: {exc.message}",
                query=query.name,
                error_code=exc.error_code,
            ) from exc
        return dict(plan)  # type: ignore[arg-type]

    def _check_bind(self, query: Query, bind: dict[str, Any]) -> None:
        given = frozenset(bind)
        if given != query.params:
            raise StoreError(
                f"query {query.name!r} takes exactly {sorted(query.params)}; got "
                f"{sorted(given)} (missing {sorted(query.params - given)}, unexpected "
                f"{sorted(given - query.params)})",
            )
        for key, value in bind.items():
            check_exact_numbers(value, f"{query.name}.@{key}")

    def _execute(self, query: Query, bind: dict[str, Any]) -> list[Any]:
        self._check_bind(query, bind)
        try:
            cursor = self._db().aql.execute(
                query.text,
                bind_vars=bind,
                fail_on_warning=self.fail_on_warning,
                max_runtime=self.max_runtime,
                batch_size=1000,
                optimizer_rules=list(query.optimizer_rules) or None,
            )
            return list(cursor)  # type: ignore[arg-type]
        except ArangoServerError as exc:
            raise ArangoQueryError(
                f"ArangoDB refused query {query.name!r}: {exc.message}",
                query=query.name,
                error_code=exc.error_code,
            ) from exc
        except ArangoClientError as exc:
            raise StoreError(
                f"ArangoDB client error in query {query.name!r}: {exc.message}; check the "
                "connection settings (arango.url, credentials, TLS)",
            ) from exc
        except OSError as exc:  # requests' ConnectionError is an OSError
            raise StoreError(
                f"cannot reach ArangoDB for query {query.name!r}: {exc}; is the server up "
                "(docker compose up -d) and arango.url right?",
            ) from exc
