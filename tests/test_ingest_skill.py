"""SKILL.md may only name API that exists: methods, keyword arguments, fields, CLI lines."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import shlex
from pathlib import Path

import pytest

import attestor_arango
import attestor_arango.errors as errors
from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.ingest import Decision, Fact, IngestResult
from attestor_arango.ingest.consolidation import ConsolidationReport
from attestor_arango.ingest.reflection import Reflection
from attestor_arango.interfaces.cli.main import build_parser
from attestor_arango.interfaces.cli.parsing import UsageError
from attestor_arango.memory import AgentMemory
from attestor_arango.models import Memory, RecallResponse, RecallResult
from attestor_arango.retrieval.pack import ContextPack

SKILL = Path(__file__).resolve().parent.parent / "SKILL.md"

# the variable names SKILL.md uses, and the type each one holds
RECEIVERS: dict[str, type] = {
    "mem": AgentMemory,
    "AgentMemory": AgentMemory,
    "ctx": AgentContext,
    "child": AgentContext,
    "m": Memory,
    "result": IngestResult,
    "d": Decision,
    "d.fact": Fact,
    "response": RecallResponse,
    "past": RecallResponse,
    "r": RecallResult,
    "r.memory": Memory,
    "pack": ContextPack,
    "report": ConsolidationReport,
    "reflection": Reflection,
}
_CALL = re.compile(r"\b((?:[a-z]\w*\.)?[a-z]\w*)\.([A-Za-z_]\w*)(\()?")


def has_attr(cls: type, name: str) -> bool:
    if dataclasses.is_dataclass(cls) and name in {f.name for f in dataclasses.fields(cls)}:
        return True
    if name in getattr(cls, "model_fields", {}):
        return True
    return hasattr(cls, name)


def call_args(text: str, start: int) -> str:
    """The text between the parenthesis at ``start`` and its match."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1 : i]
    return text[start + 1 :]


def problems(doc: str) -> list[str]:
    """Every name the document uses that the real API does not have."""
    found: list[str] = []
    code = "\n".join(re.findall(r"```(?:python)?\n(.*?)```", doc, re.S))
    for module, names in re.findall(r"^from (attestor_arango[\w.]*) import (.+)$", code, re.M):
        mod = importlib.import_module(module)
        for name in (n.strip() for n in names.split(",")):
            if not hasattr(mod, name):
                found.append(f"{module}.{name}")
    for m in _CALL.finditer(code + "\n" + " ".join(re.findall(r"`([^`\n]+)`", doc))):
        receiver, name, paren = m.group(1), m.group(2), m.group(3)
        cls = RECEIVERS.get(receiver) or RECEIVERS.get(receiver.split(".")[-1])
        if receiver == "AgentRole":
            continue
        if cls is None or receiver in {"attestor_arango"}:
            continue
        if not has_attr(cls, name) or name.startswith("_"):
            found.append(f"{receiver}.{name}")
            continue
        if paren:
            target = getattr(cls, name)
            if not callable(target):
                found.append(f"{receiver}.{name} is not callable")
                continue
            params = inspect.signature(target).parameters
            takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
            args = call_args(m.string, m.end() - 1)
            for kw in re.findall(r"(?<![\w\"'])([a-z_]\w*)=(?!=)", args):
                if kw not in params and not takes_any:
                    found.append(f"{receiver}.{name}({kw}=...)")
    for role in re.findall(r"AgentRole\.(\w+)", doc):
        if not hasattr(AgentRole, role):
            found.append(f"AgentRole.{role}")
    for name in re.findall(r"`([A-Z][A-Za-z]+(?:Error|Denied))`", doc):
        if not hasattr(errors, name):
            found.append(f"errors.{name}")
    parser = build_parser()
    for line in re.findall(r"^attestor-arango .*$", doc, re.M):
        argv = shlex.split(line.split(" <")[0].split("  #")[0])[1:]
        try:
            parser.parse_args(argv)
        except (SystemExit, UsageError):
            found.append(f"CLI: {' '.join(argv)}")
    for cmd in re.findall(r"`attestor-arango (\w+)`", doc):
        if cmd not in parser._subparsers._group_actions[0].choices:  # type: ignore[union-attr]
            found.append(f"CLI command {cmd}")
    return found


def test_skill_md_names_only_real_api() -> None:
    assert problems(SKILL.read_text(encoding="utf-8")) == []


def test_skill_md_covers_the_ingest_api() -> None:
    doc = SKILL.read_text(encoding="utf-8")
    for name in ("ingest_round", "consolidate", "reflect", "recall", "add", "as_of"):
        assert f"{name}" in doc


@pytest.mark.parametrize(
    ("snippet", "problem"),
    [
        ("```python\nmem.remember('x')\n```", "mem.remember"),
        ("```python\nmem.recall('q', top_k=3)\n```", "mem.recall(top_k=...)"),
        ("```python\nfrom attestor_arango import Nope\n```", "attestor_arango.Nope"),
        ("```python\nreflection.moods\n```", "reflection.moods"),
        ("use `AgentRole.ADMIN`", "AgentRole.ADMIN"),
        ("raises `TeapotError`", "errors.TeapotError"),
        ("```\nattestor-arango hook lunch < e.json\n```", "CLI: hook lunch"),
    ],
)
def test_the_checker_catches_invented_names(snippet: str, problem: str) -> None:
    assert problem in problems(snippet)


def test_checker_accepts_real_names() -> None:
    ok = "```python\nfrom attestor_arango import AgentContext\nmem.recall('q', as_of=1)\n```"
    assert problems(ok) == [] and attestor_arango.AgentContext is AgentContext
