"""Every retrieval constant in one place, overridable from the YAML config."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ..errors import ValidationError


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    vector_k: int = 50
    text_k: int = 50
    rrf_k: int = 60

    @classmethod
    def from_dict(cls, raw: dict[str, Any] | None) -> RetrievalConfig:
        raw = raw or {}
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ValidationError(
                f"unknown retrieval settings {unknown}; known ones: {sorted(known)}",
            )
        return cls(**raw)
