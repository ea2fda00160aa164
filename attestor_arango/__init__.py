"""attestor-arango: shared, bi-temporal, auditable memory for teams of LLM agents."""

from .context import AgentContext, AgentRole, Permission
from .errors import (
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
from .models import AuditEntry, Episode, Memory, MemoryStatus, RecallResponse, RecallResult
from .scope import Scope, TemporalView

__version__ = "0.1.0"

__all__ = [
    "AccessDenied",
    "AgentContext",
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
