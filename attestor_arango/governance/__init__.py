"""Governance: quotas, export/import, purge, audit-chain verification, retention,
provenance signing and compaction.

Every public entry point is a method of ``AgentMemory`` (section
``# --- governance ---``) that checks permissions with ``access.guard`` and
delegates here; these modules only use the Store protocol, so both backends get
the same behaviour.
"""

from typing import TYPE_CHECKING

from attestor_arango.lazy import lazy_exports

if TYPE_CHECKING:
    from attestor_arango.core.signing import KeyFileError, Signer
    from attestor_arango.governance.access import OPERATIONS, guard
    from attestor_arango.governance.audit_chain import ChainProblem, ChainReport
    from attestor_arango.governance.purge import PurgeReport
    from attestor_arango.governance.retention import RetentionPolicy, RetentionReport, load_policies

__getattr__ = lazy_exports(
    __name__,
    {
        "ChainProblem": "attestor_arango.governance.audit_chain",
        "ChainReport": "attestor_arango.governance.audit_chain",
        "KeyFileError": "attestor_arango.core.signing",
        "OPERATIONS": "attestor_arango.governance.access",
        "PurgeReport": "attestor_arango.governance.purge",
        "RetentionPolicy": "attestor_arango.governance.retention",
        "RetentionReport": "attestor_arango.governance.retention",
        "Signer": "attestor_arango.core.signing",
        "guard": "attestor_arango.governance.access",
        "load_policies": "attestor_arango.governance.retention",
    },
)

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
