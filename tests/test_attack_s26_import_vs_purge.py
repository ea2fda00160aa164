"""An import racing a purge of the same tenant: the import loses, whole, with a clear error.

Before, an import checked only that its tenant held no data. A purge erases collection by
collection, each step its own commit, and writes its outcome entry last, so an import
landing while it ran passed that check once the data was gone:

- between two steps of a purge re-run (an operator finishing an erasure reported as
  incomplete), the import committed and the purge's later steps erased its memories,
  episodes and embedding space but not its entities and relations: a half-imported tenant
  whose entity names (words of the subject) outlived the purge that reported failure;
- after the last step, it restored the very rows just erased (an export of the subject
  taken before), and the purge reported "rows of the tenant remain";
- while the purge ran, the import's early check answered "already holds data ... purge it
  first": advice to do what was already running.

An import now refuses (``ConflictError``, nothing stored) while a purge of its tenant has
no outcome entry yet (also one that was interrupted: finish it first), and when a purge of
its tenant began after the import did; the purge then completes. Deterministic: the import
runs inside the purge's own store call (``purge_collection`` wrapped) or the purge inside
the import's embedding call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ConflictError
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
WORD = "Quimperle"


def _filled(tmp_path: Path, embedder: HashingEmbedder | None = None) -> tuple[AgentMemory, Any]:
    mem = AgentMemory(tmp_path / "m.db", embedder=embedder or HashingEmbedder(64))
    mem.add(f"Ann lives in {WORD}", entity="ann", category="home", context=CTX)
    mem.add(f"Ann works in {WORD}", entity=WORD.lower(), context=CTX)
    return mem, mem.export_user("acme", context=CTX)


def _import_during_step(
    mem: AgentMemory, monkeypatch: pytest.MonkeyPatch, after: str, data: Any
) -> dict[str, object]:
    outcome: dict[str, object] = {}
    original = mem.store.purge_collection

    def step(scope: Any, collection: str) -> int:
        removed = original(scope, collection)
        if collection == after and not outcome:
            try:
                outcome["import"] = mem.import_user(data, context=CTX)
            except ConflictError as exc:
                outcome["import"] = exc
        return removed

    monkeypatch.setattr(mem.store, "purge_collection", step)
    return outcome


def _held(mem: AgentMemory) -> dict[str, int]:
    return {k: v for k, v in mem.store.tenant_residue(Scope("acme")).items() if v}


def _refused_for_the_purge(outcome: dict[str, object]) -> None:
    exc = outcome["import"]
    assert isinstance(exc, ConflictError), exc
    assert "purge" in exc.message and "already holds data" not in exc.message


@pytest.mark.parametrize("after", ["relations", "vectors", "memories", "write_counts"])
def test_an_import_between_the_steps_of_a_purge_rerun_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: str
) -> None:
    mem, data = _filled(tmp_path)
    assert mem.purge_user("acme", "erasure #1", context=CTX).ok
    outcome = _import_during_step(mem, monkeypatch, after, data)
    report = mem.purge_user("acme", "erasure #1, run again", context=CTX)
    _refused_for_the_purge(outcome)
    assert report.ok, report.to_dict()
    assert _held(mem) == {} and mem.store.list_entities(Scope("acme", "n1")) == []
    mem.close()


def test_an_import_after_the_last_step_does_not_restore_the_erased_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem, data = _filled(tmp_path)
    outcome = _import_during_step(mem, monkeypatch, mem.store.purge_collections()[-1], data)
    report = mem.purge_user("acme", "erasure #2", context=CTX)
    _refused_for_the_purge(outcome)
    assert report.ok, report.to_dict()
    assert _held(mem) == {} and mem.list(context=CTX) == []
    mem.close()


def test_an_import_while_the_tenant_is_still_being_erased_names_the_purge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem, data = _filled(tmp_path)
    outcome = _import_during_step(mem, monkeypatch, "relations", data)
    report = mem.purge_user("acme", "erasure #3", context=CTX)
    _refused_for_the_purge(outcome)
    assert report.ok and _held(mem) == {}
    mem.close()


class PurgingEmbedder(HashingEmbedder):
    """Runs ``during`` on its first call with ``WORD`` after ``armed``: the import's embed."""

    armed = False
    during = staticmethod(lambda: None)

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.armed and any(WORD in t for t in texts):
            self.armed = False
            self.during()
        return super().embed(texts)


def test_an_import_a_purge_of_its_tenant_overtook_is_refused(tmp_path: Path) -> None:
    embedder = PurgingEmbedder(64)
    mem, data = _filled(tmp_path, embedder)
    assert mem.purge_user("acme", "erasure #4", context=CTX).ok
    reports: list[Any] = []
    embedder.during = lambda: reports.append(mem.purge_user("acme", "erasure #5", context=CTX))
    embedder.armed = True
    with pytest.raises(ConflictError, match="purge"):
        mem.import_user(data, context=CTX)
    assert reports and reports[0].ok
    assert _held(mem) == {}
    # once no purge runs, the same import goes through
    assert mem.import_user(data, context=CTX)["memories"] == 2
    mem.close()


def test_an_interrupted_purge_must_be_finished_before_an_import(tmp_path: Path) -> None:
    mem, data = _filled(tmp_path)
    original = mem.store.purge_collection

    def crash(scope: Any, collection: str) -> int:
        raise KeyboardInterrupt  # the process stopped mid-purge: no outcome entry

    mem.store.purge_collection = crash  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        mem.purge_user("acme", "erasure #6", context=CTX)
    mem.store.purge_collection = original  # type: ignore[method-assign]
    with pytest.raises(ConflictError, match="run purge_user again"):
        mem.import_user(data, context=CTX)
    assert mem.purge_user("acme", "erasure #6, finished", context=CTX).ok
    assert mem.import_user(data, context=CTX)["memories"] == 2
    mem.close()
