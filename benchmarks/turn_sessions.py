"""``add_turns`` with many new sessions in one call, on a tenant that already holds rows.

Each new session of a call looks up that session's latest stored turn before its first
turn is linked (``ingest/conversation.py: last_turn``). The tenant is filled first with
``--rows`` turns over ``--old-sessions`` sessions (one ``add_turns`` call per 1,000), then
one call stores one turn in each of ``--sessions`` new sessions, timed (wall clock). Also
timed: one more turn in an existing long session (the lookup that finds a session's latest
turn among many). HashingEmbedder, embedded store in a temporary folder.

    .venv/bin/python benchmarks/turn_sessions.py [--rows 12000] [--sessions 2000]
        [--old-sessions 40] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from attestor_arango import AgentContext, AgentMemory
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=12_000)
    parser.add_argument("--sessions", type=int, default=2_000)
    parser.add_argument("--old-sessions", type=int, default=40)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    ctx = AgentContext(agent_id="bench", role="orchestrator", tenant="bench", namespace="n")
    with tempfile.TemporaryDirectory() as folder:
        clock = ManualClock(T0 + timedelta(days=400))
        mem = AgentMemory(Path(folder) / "m.db", embedder=HashingEmbedder(64), clock=clock)
        started = time.perf_counter()
        for start in range(0, args.rows, 1_000):
            turns = [
                {
                    "speaker": f"p{i % 2}",
                    "text": f"message {i} about topic {i % 97}",
                    "session_id": f"old-{i % args.old_sessions}",
                    "timestamp": T0 + timedelta(minutes=i),
                }
                for i in range(start, min(start + 1_000, args.rows))
            ]
            mem.add_turns(turns, context=ctx)
        fill_s = time.perf_counter() - started
        new = [
            {"speaker": "ann", "text": f"hello {i}", "session_id": f"new-{i}"}
            for i in range(args.sessions)
        ]
        started = time.perf_counter()
        mem.add_turns(new, context=ctx)
        new_s = time.perf_counter() - started
        started = time.perf_counter()
        (one,) = mem.add_turns([{"speaker": "bob", "text": "and one more",
                                 "session_id": "old-0"}], context=ctx)  # fmt: skip
        long_s = time.perf_counter() - started
        mem.close()
    root = Path(__file__).resolve().parents[1]
    git = ["git", "rev-parse", "--short", "HEAD"]
    rev = subprocess.run(git, capture_output=True, text=True, cwd=root, check=False).stdout.strip()
    result = {
        "commit": rev,
        "rows": args.rows,
        "old_sessions": args.old_sessions,
        "new_sessions": args.sessions,
        "fill_s": round(fill_s, 2),
        "new_sessions_call_s": round(new_s, 3),
        "one_turn_in_long_session_s": round(long_s, 4),
        "long_session_turn_index": one.metadata["turn"]["index"],
    }
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
