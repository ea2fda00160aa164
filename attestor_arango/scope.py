"""Scope and temporal view: the two arguments every store call carries.

The Scope is the tenant-filter layer's first lock: a backend never sees a call
without one, and a Scope cannot exist without a valid tenant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from attestor_arango.clock import OPEN
from attestor_arango.errors import TenantRequiredError, ValidationError, shown

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$")


def check_name(value: object, what: str) -> str:
    """Tenants and namespaces: 1-128 chars of letters, digits and ._:@/- ."""
    if not isinstance(value, str) or not NAME_RE.fullmatch(value):
        raise ValidationError(
            f"malformed {what} {shown(value)}: use 1-128 characters of letters, digits and ._:@/-, "
            "starting with a letter or digit",
            field=what,
        )
    return value


def chosen_namespace(namespace: object, default: str) -> str:
    """The namespace a call names, or ``default`` when it names none (``None``).

    An empty (or blank) string is refused, not read as "none" (``refuse_empty_namespace``).
    Raises ``ValidationError``: for an empty name, naming the fix; for any other malformed
    one, what ``check_name`` raises.
    """
    if namespace is None:
        return default
    refuse_empty_namespace(namespace, default)
    return check_name(namespace, "namespace")


def refuse_empty_namespace(namespace: object, default: str | None = None) -> None:
    """Raises ``ValidationError`` for an empty or blank namespace, saying to leave it out
    (for the default namespace, ``default`` when known) or to name one.

    ``namespace=""`` is what a template, or a script whose variable came out blank, sends;
    silently answering from (or writing to) the default namespace instead is the trap of a
    filter on a value never written, so every surface refuses it the same way.
    """
    if isinstance(namespace, str) and not namespace.strip():
        which = "the default namespace" if default is None else f"the default namespace {default!r}"
        raise ValidationError(
            f"namespace {namespace!r} is empty: leave it out to use {which}, or name one "
            "(1-128 characters of letters, digits and ._:@/-)",
            field="namespace",
        )


@dataclass(frozen=True, slots=True)
class Scope:
    """Tenant (hard isolation) and namespace (a partition inside it; None = all)."""

    tenant: str
    namespace: str | None = None

    def __post_init__(self) -> None:
        if not self.tenant:
            raise TenantRequiredError("a tenant is required for every store call; none was given")
        check_name(self.tenant, "tenant")
        if self.namespace is not None:
            check_name(self.namespace, "namespace")

    def require_namespace(self) -> str:
        if self.namespace is None:
            raise ValidationError("this operation writes, so the scope needs a namespace")
        return self.namespace

    def tenant_wide(self) -> Scope:
        return Scope(self.tenant, None)


@dataclass(frozen=True, slots=True)
class TemporalView:
    """Which rows a read sees, in transaction time and event time.

    ``as_of`` is the read's "now" (microseconds): rows believed at that instant,
    ``t_created <= as_of < t_expired``. With ``include_closed`` every row created
    by then is visible (timelines, history). ``window`` keeps rows whose event
    interval ``[valid_from, valid_until)`` overlaps ``[start, end)``.
    """

    as_of: int
    window: tuple[int, int] | None = None
    include_closed: bool = False

    def __post_init__(self) -> None:
        if self.window is not None and self.window[0] >= self.window[1]:
            raise ValidationError("time_window start must be before its end")

    @property
    def t_expired_after(self) -> int:
        """Lower bound (exclusive) on t_expired: as_of, or -1 when closed rows count."""
        return -1 if self.include_closed else self.as_of

    @property
    def window_start(self) -> int:
        return self.window[0] if self.window else -1

    @property
    def window_end(self) -> int:
        return self.window[1] if self.window else OPEN + 1
