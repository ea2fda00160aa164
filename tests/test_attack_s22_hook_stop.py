"""A refused ``hook stop`` stores nothing: no session summary is left behind when the
last exchange of the transcript (or the summary itself) is refused."""

from __future__ import annotations

import io
import json
from pathlib import Path

from attack_support import stored

from attestor_arango.context import AgentContext
from attestor_arango.interfaces.cli.hooks import run_hook
from attestor_arango.memory import AgentMemory


def call(mem: AgentMemory, event: str, payload: dict) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_hook(event, mem, io.StringIO(json.dumps(payload)), out, err)
    return code, out.getvalue(), err.getvalue()


def transcript(tmp_path: Path, user: str, assistant: str = "Noted.") -> str:
    path = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": user}},
        {"type": "assistant", "message": {"role": "assistant", "content": assistant}},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return str(path)


def test_stop_whose_exchange_is_refused_stores_no_summary(mem: AgentMemory, tmp_path: Path) -> None:
    mem.add("Ann likes green tea", entity="ann")
    # a NUL past the summary's 200-character excerpt: the summary is valid, the turn is not
    cases = [
        "I prefer tabs over spaces. " + "x" * 300 + "\x00",
        "I prefer tabs over spaces. " + "y" * 70_000,  # over a turn side's 64k characters
    ]
    for user in cases:
        before = stored(mem)
        payload = {
            "session_id": "s1",
            "cwd": "/src/app",
            "transcript_path": transcript(tmp_path, user),
        }
        code, out, err = call(mem, "stop", payload)
        assert code == 1 and out == ""
        assert err.startswith("attestor-arango hook stop: ") and "Traceback" not in err
        assert stored(mem) == before


def test_stop_refused_by_the_quota_part_way_stores_nothing(
    mem: AgentMemory, tmp_path: Path
) -> None:
    tenant = mem.default_context.tenant
    mem.set_quota(tenant, daily_writes=1)  # room for the summary, none for the round
    before = stored(mem)
    path = transcript(tmp_path, "I live in Paris.", "You live in Paris.")
    code, out, err = call(
        mem, "stop", {"session_id": "s1", "cwd": "/src/app", "transcript_path": path}
    )
    assert code == 1 and out == "" and "quota" in err.lower()
    assert stored(mem) == before
    assert mem.quota_status(tenant)["used"] == 0


def test_stop_denied_stores_nothing_but_the_denial(mem: AgentMemory, tmp_path: Path) -> None:
    reader = AgentContext(agent_id="r", role="reviewer", tenant=mem.default_context.tenant)
    ro = AgentMemory(Path(mem.store.path), context=reader)  # type: ignore[attr-defined]
    try:
        before = stored(ro, with_audit=False)
        path = transcript(tmp_path, "I live in Paris.")
        code, out, err = call(
            ro, "stop", {"session_id": "s1", "cwd": "/x", "transcript_path": path}
        )
        assert code == 1 and out == "" and "needs write permission" in err
        assert stored(ro, with_audit=False) == before
    finally:
        ro.close()


def test_stop_still_stores_summary_and_round_when_allowed(mem: AgentMemory, tmp_path: Path) -> None:
    path = transcript(tmp_path, "I live in Paris.", "You live in Paris.")
    code, out, _ = call(
        mem, "stop", {"session_id": "s1", "cwd": "/src/app", "transcript_path": path}
    )
    answer = json.loads(out)
    assert code == 0 and answer["ingested"]["episode_id"]
    summary = mem.get(answer["summary_id"])
    assert summary.content.startswith("Session s1 in project app")
    assert "last request: I live in Paris." in summary.content
