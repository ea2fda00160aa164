"""Governance: quotas, export/import, purge, audit-chain verification, retention,
provenance signing and compaction.

Every public entry point is a method of ``AgentMemory`` (section
``# --- governance ---``) that checks permissions with ``access.guard`` and
delegates here; these modules only use the Store protocol, so both backends get
the same behaviour.
"""

from .access import OPERATIONS, guard
from .audit_chain import ChainProblem, ChainReport
from .purge import PurgeReport
from .retention import RetentionPolicy, RetentionReport, load_policies
from .signing import KeyFileError, Signer

__all__ = [
    "OPERATIONS",
    "ChainProblem",
    "ChainReport",
    "KeyFileError",
    "PurgeReport",
    "RetentionPolicy",
    "RetentionReport",
    "Signer",
    "guard",
    "load_policies",
]
