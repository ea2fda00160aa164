"""attestor-arango: shared, bi-temporal, auditable memory for teams of LLM agents."""

from typing import TYPE_CHECKING, Any

from attestor_arango.context import AgentContext, AgentRole, Permission
from attestor_arango.errors import (
    AccessDenied,
    AttestorError,
    ConflictError,
    EmbeddingMismatchError,
    NotFoundError,
    QuotaExceededError,
    StoreError,
    TenantLeakError,
    TenantRequiredError,
    ValidationError,
)
from attestor_arango.models import (
    AuditEntry,
    Episode,
    Memory,
    MemoryStatus,
    RecallResponse,
    RecallResult,
)
from attestor_arango.scope import Scope, TemporalView

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

from attestor_arango.version import __version__ as __version__


def __getattr__(name: str) -> Any:
    """``AgentMemory`` on first use: importing the package stays light (no numpy, no store)."""
    if name == "AgentMemory":
        from attestor_arango.memory import AgentMemory

        return AgentMemory
    raise AttributeError(f"module 'attestor_arango' has no attribute {name!r}")


__all__ = [
    "AccessDenied",
    "AgentContext",
    "AgentMemory",
    "AgentRole",
    "AttestorError",
    "AuditEntry",
    "ConflictError",
    "EmbeddingMismatchError",
    "Episode",
    "Memory",
    "MemoryStatus",
    "NotFoundError",
    "Permission",
    "QuotaExceededError",
    "RecallResponse",
    "RecallResult",
    "Scope",
    "StoreError",
    "TemporalView",
    "TenantLeakError",
    "TenantRequiredError",
    "ValidationError",
]
