"""Session 27 attack: an export cut short, or without its audit list, was imported and vouched for.

The import checks an export's rows against the chain it carries (``import_source.py``), but
the chain's end was whatever the file said: an export with its newest entries (and the rows
they wrote) cut off was restored, and its ``import`` entry recorded the cut chain's last hash
as the source's; an export whose audit list was dropped skipped the check altogether. An
export now carries its chain's head (``chain``: entry count and last hash, signed when the
store signs), and the import refuses a file whose list does not end there, one without the
head (an export written before, or one whose head was removed), one holding rows with no
chain, and a signed head that does not verify. Nothing is stored on a refusal.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from attestor_arango.context import AgentContext
from attestor_arango.core.signing import Signer
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
COPY = AgentContext(agent_id="orch", role="orchestrator", tenant="copy", namespace="n1")


def _export(path: Path, signer: Signer | None = None) -> dict[str, Any]:
    mem = AgentMemory(path, embedder=HashingEmbedder(64))
    mem.signer = signer
    mem.add("Ann lives in Oslo", entity="Ann", category="home", context=A)
    mem.add("Ann likes tea", entity="Ann", category="drink", context=A)
    mem.add("Ann owes Bob 10000 EUR", entity="Ann", category="debt", context=A)
    data: dict[str, Any] = json.loads(json.dumps(mem.export_user("acme", context=A)))
    mem.close()
    return data


def _cut(data: dict[str, Any]) -> dict[str, Any]:
    """The newest entry and the row it wrote removed: what remains agrees with itself."""
    cut = copy.deepcopy(data)
    last = cut["audit"].pop()
    assert last["action"] == "add"
    cut["memories"] = [m for m in cut["memories"] if m["id"] != last["target"]]
    return cut


def _refused(mem: AgentMemory, data: dict[str, Any], match: str) -> None:
    for ctx in (A, COPY):  # restored as its own tenant, or copied to another
        with pytest.raises(ValidationError, match=match):
            mem.import_user(data, context=ctx)
        assert not any(mem.store.tenant_residue(Scope(ctx.tenant)).values())
        assert mem.store.count_rows(Scope(ctx.tenant))["audit"] == 0


def test_an_export_cut_at_its_newest_entries_is_refused(tmp_path: Path) -> None:
    data = _export(tmp_path / "src.db")
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    _refused(mem, _cut(data), "cut short")
    mem.close()


def test_an_export_with_its_audit_list_dropped_is_refused(tmp_path: Path) -> None:
    data = _export(tmp_path / "src.db")
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    _refused(mem, {**data, "audit": []}, "cut short")
    chain = {**data["chain"], "entries": 0, "head": None, "signature": None}
    headless = {**data, "audit": [], "chain": chain}
    _refused(mem, headless, "no audit entry")  # its head rewritten to match: rows, no chain
    mem.close()


def test_an_export_without_a_chain_head_is_refused(tmp_path: Path) -> None:
    data = _export(tmp_path / "src.db")
    old = {k: v for k, v in data.items() if k != "chain"}  # as written before, or removed
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    _refused(mem, old, "no chain head")
    mem.close()


def test_a_signed_export_cut_with_its_head_rewritten_is_refused(tmp_path: Path) -> None:
    data = _export(tmp_path / "src.db", Signer.generate())
    cut = _cut(data)
    cut["chain"].update(entries=len(cut["audit"]), head=cut["audit"][-1]["hash"])
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))  # no key of its own
    _refused(mem, cut, "signature")
    mem.close()


def test_a_signed_export_stripped_of_its_head_signature_is_refused_by_its_key(
    tmp_path: Path,
) -> None:
    signer = Signer.generate()
    data = _export(tmp_path / "src.db", signer)
    cut = _cut(data)
    cut["chain"].update(entries=len(cut["audit"]), head=cut["audit"][-1]["hash"], signature=None)
    cut["signing"] = None  # reads as an unsigned store's export, but its entries are signed
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    mem.signer = signer  # restored where it was written: the key signed its entries
    _refused(mem, cut, "signature")
    mem.close()


def test_a_head_signed_by_a_key_other_than_the_one_named_is_refused(tmp_path: Path) -> None:
    data = _export(tmp_path / "src.db", Signer.generate())
    other = Signer.generate()
    public = other.public_pem()
    named = {**data, "signing": {"key_id": data["signing"]["key_id"], "public_key": public}}
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    _refused(mem, named, "signature")
    swapped = {**data, "signing": {"key_id": other.key_id, "public_key": public}}
    _refused(mem, swapped, "signature")
    mem.close()


@pytest.mark.parametrize("signed", [False, True])
def test_a_whole_export_is_restored_and_its_entry_records_the_head(
    tmp_path: Path, signed: bool
) -> None:
    signer = Signer.generate() if signed else None
    data = _export(tmp_path / "src.db", signer)
    assert data["chain"]["entries"] == len(data["audit"]) == 3
    assert data["chain"]["head"] == data["audit"][-1]["hash"]
    assert (data["chain"]["signature"] is not None) is signed
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    mem.signer = signer
    for ctx in (A, COPY):
        mem.import_user(data, context=ctx)
        assert mem.verify_audit_chain(context=ctx).ok
        entry = next(e for e in mem.audit_log(limit=10, context=ctx) if e.action == "import")
        source = entry.details["source"]
        assert source["audit_entries"] == 3
        assert source["audit_last_hash"] == data["chain"]["head"]
        assert source["head_key_id"] == (signer.key_id if signer else None)
    mem.close()


def test_an_empty_tenant_exports_an_empty_chain_that_imports(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    nobody = AgentContext(agent_id="orch", role="orchestrator", tenant="nobody")
    data = json.loads(json.dumps(mem.export_user("nobody", context=nobody)))
    assert {k: v for k, v in data["chain"].items() if k != "sections"} == {
        "entries": 0,
        "head": None,
        "signature": None,
    }
    assert mem.import_user(data, context=COPY)["memories"] == 0
    mem.close()


@pytest.mark.parametrize(
    "signing",
    [{"key_id": "k"}, {"key_id": "k", "public_key": 5}, {"public_key": None}, "a key", 7],
)
def test_a_malformed_signing_field_is_refused_as_bad_input(tmp_path: Path, signing: Any) -> None:
    data = {**_export(tmp_path / "src.db", Signer.generate()), "signing": signing}
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    _refused(mem, data, "signing")
    mem.close()


@pytest.mark.parametrize("entries", [-1, 2**63, 10**5000], ids=["negative", "2**63", "10**5000"])
def test_a_head_count_no_chain_holds_is_refused_as_bad_input(tmp_path: Path, entries: int) -> None:
    data = _export(tmp_path / "src.db")
    data["chain"] = {**data["chain"], "entries": entries}  # 10**5000: no str() of it
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    _refused(mem, data, "no chain head")
    mem.close()


HUGE = 10**5000  # Python refuses to write it as text (int_max_str_digits); REST never parses it
NUMBERS = {  # where, and what the refusal says
    "version": (lambda d: d.update(version=HUGE), "too large to print"),
    "a row's tenant": (lambda d: d["memories"][0].update(tenant=HUGE), "too large to print"),
    "an entry's seq": (lambda d: d["audit"][0].update(seq=HUGE), "too large to print"),
}


@pytest.mark.parametrize("where", list(NUMBERS))
def test_a_number_too_long_to_print_is_refused_as_bad_input(tmp_path: Path, where: str) -> None:
    data = _export(tmp_path / "src.db")
    edit, message = NUMBERS[where]
    edit(data)
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    _refused(mem, data, message)
    mem.close()
