"""Knowledge updates that generalise: does the newest statement about a subject rank first?

    python benchmarks/ku_suite/run.py [--mode add|ingest|quick] [--embedder local|hashing]
        [--split dev|test|all] [--cases updates|neighbours|blind-a|blind-b]
        [--retrieval JSON] [--out FILE]

The cases are in ``cases.py`` (225, nine kinds; how they were written and split is
said there). Each case runs in a fresh memory, stored the way a user would store
it: session k is dated 30 days after session k-1, each statement is one write at
its session's time with three unrelated filler facts around it, and the question
is asked 10 days after the last session. No entity, no category, no session is
given in ``add`` mode (``add(text, valid_from=...)``); ``ingest`` mode sends each
statement as one ``ingest_round`` (user text, or the assistant's answer to "Any
news on that?") with the rule-based extractor and a session id per session.

Outcome per case: the first of the top 5 results that comes from one of the
case's statements (in ``ingest`` mode: whose source episode is one) decides:
``new_wins`` if it is the newest statement, ``stale_wins`` if an older one,
``miss`` if none is in the top 5. A write that the store deduplicated (the same
text said again, as in some reversals) counts as its latest statement. JSON goes
to ``benchmarks/results/ku_suite-<mode>-<embedder>-<split>.json``.

``quick`` mode stores the same statements and filler as a script or one agent's run
writes them: plain ``add(text)``, no ``valid_from``, each write one second after the
one before, the question one second after the last (the way cases written by others
tend to be, which the dated sessions above do not test).

``--cases blind-a`` / ``blind-b`` run the blind sets of ``blind_cases.py`` (every case in
the test split: ``--split test``); read there which one is seen.

``--cases neighbours`` runs the guard set instead (``cases.NEIGHBOURS``, 50 cases):
two facts about two different subjects, the second said after the first (a session
later, or in ``quick`` mode a second later), and a question about the first. These
are not updates, so the outcome is ``kept`` when the asked-about fact is the first
of the two in the top 5, ``taken_over`` when the later neighbour ranks above it, and
``miss``; the file is ``ku_suite-neighbours-<mode>-<embedder>-<split>.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from blind_cases import SETS, build_blind  # noqa: E402
from cases import FILLER, build_cases, build_neighbours  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from attestor_arango.clock import ManualClock  # noqa: E402
from attestor_arango.config import load_config  # noqa: E402
from attestor_arango.embeddings import Embedder, HashingEmbedder  # noqa: E402
from attestor_arango.ids import SeededIdSource  # noqa: E402
from attestor_arango.memory import AgentMemory  # noqa: E402
from attestor_arango.models import RecallResponse  # noqa: E402
from attestor_arango.retrieval import RetrievalConfig  # noqa: E402

RESULTS_DIR = HERE.parent / "results"
START = datetime(2025, 1, 6, 9, tzinfo=UTC)
TOP = 5
# outcome names per case set: (the case's answer ranks first, another of its statements does)
OUTCOMES = {
    "updates": ("new_wins", "stale_wins"),
    "neighbours": ("kept", "taken_over"),
    **{name: ("new_wins", "stale_wins") for name in SETS},  # blind_cases.py: updates too
}


def pick_embedder(choice: str) -> Embedder:
    if choice == "hashing":
        return HashingEmbedder()
    from attestor_arango.embeddings.chain import make_embedder

    return make_embedder(load_config(embedder=choice))


def _write(mem: AgentMemory, mode: str, speaker: str, text: str, at: datetime, sid: str) -> str:
    """Stores one statement; returns the id that identifies it in results."""
    if mode == "add":
        return mem.add(text, valid_from=at).id
    if mode == "quick":
        return mem.add(text).id
    if speaker == "assistant":
        turn = {"user": "Any news on that?", "assistant": text}
    else:
        turn = {"user": text}
    result = mem.ingest_round({**turn, "timestamp": at.isoformat(), "session_id": sid})
    return result.episode.id


def store_case(
    mem: AgentMemory, clock: ManualClock, case: dict[str, Any], index: int, mode: str
) -> dict[str, int]:
    """Writes the case's sessions (with filler) and sets the clock to question time;
    returns result id -> session index of each case statement."""
    sessions = case["sessions"]
    owner: dict[str, int] = {}  # result id -> session index of the case statement
    fill = iter(FILLER[(index * 7 + j) % len(FILLER)] for j in range(3 * len(sessions)))
    quick = START  # quick mode: one second after the write before
    for k, statements in enumerate(sessions):
        day = START + timedelta(days=30 * k)
        items = [
            ("user", next(fill), False),
            *statements,
            ("user", next(fill), False),
            ("user", next(fill), False),
        ]
        for m, (speaker, text, is_case) in enumerate(items):
            at = day + timedelta(minutes=2 * m)
            if mode == "quick":
                quick = at = quick + timedelta(seconds=1)
            clock.set(at)
            rid = _write(mem, mode, speaker, text, at, f"s{k}")
            if is_case:
                owner[rid] = k
    if mode == "quick":
        clock.set(quick + timedelta(seconds=1))
    else:
        clock.set(START + timedelta(days=30 * (len(sessions) - 1) + 10))
    return owner


def judge(
    case: dict[str, Any],
    resp: RecallResponse,
    owner: dict[str, int],
    mode: str,
    names: tuple[str, str] = OUTCOMES["updates"],
) -> dict[str, Any]:
    """The case's outcome from the first top-5 result that is one of its statements:
    ``names[0]`` when it is the case's answer (the newest statement of an update, the
    asked-about fact of a neighbour pair), ``names[1]`` when another, else ``miss``."""
    outcome, top = "miss", []
    for r in resp.results[:TOP]:
        rid = r.memory.provenance.source_episode_id if mode == "ingest" else r.memory.id
        top.append(r.memory.content)
        if rid in owner:
            outcome = names[0] if owner[rid] == case["answer"] else names[1]
            break
    return {
        "id": case["id"],
        "category": case["category"],
        "split": case["split"],
        "outcome": outcome,
        "top": top,
    }


def open_case(case: dict[str, Any], index: int, mode: str, embedder: Embedder,
              workdir: Path) -> tuple[AgentMemory, ManualClock]:  # fmt: skip
    clock = ManualClock(START)
    mem = AgentMemory(
        workdir / f"{case['id']}-{mode}.db",
        embedder=embedder,
        clock=clock,
        ids=SeededIdSource(index),
    )
    return mem, clock


def run_case(
    case: dict[str, Any],
    index: int,
    mode: str,
    embedder: Embedder,
    config: RetrievalConfig,
    workdir: Path,
    names: tuple[str, str] = OUTCOMES["updates"],
) -> dict[str, Any]:
    mem, clock = open_case(case, index, mode, embedder, workdir)
    with mem:
        mem.retrieval_config = config
        owner = store_case(mem, clock, case, index, mode)
        resp = mem.recall(case["question"])
    return judge(case, resp, owner, mode, names)


def summarise(
    rows: list[dict[str, Any]], names: tuple[str, str] = OUTCOMES["updates"]
) -> dict[str, Any]:
    def agg(sub: list[dict[str, Any]]) -> dict[str, Any]:
        c = Counter(r["outcome"] for r in sub)
        return {
            "n": len(sub),
            **{k: c.get(k, 0) for k in (*names, "miss")},
            **{f"{k}_rate": round(c.get(k, 0) / max(1, len(sub)), 4) for k in names},
        }

    cats = sorted({r["category"] for r in rows})
    return {
        "overall": agg(rows),
        "per_category": {c: agg([r for r in rows if r["category"] == c]) for c in cats},
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mode", default="add", choices=["add", "ingest", "quick"])
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--split", default="dev", choices=["dev", "test", "all"])
    ap.add_argument("--cases", default="updates", choices=sorted(OUTCOMES))
    ap.add_argument("--retrieval", default="{}", help="JSON overrides of RetrievalConfig")
    ap.add_argument("--out", default=None)
    ap.add_argument("--show-failures", action="store_true")
    args = ap.parse_args(argv)
    embedder = pick_embedder(args.embedder)
    config = RetrievalConfig.from_dict(json.loads(args.retrieval))
    names = OUTCOMES[args.cases]
    if args.cases in SETS:
        every = build_blind(args.cases)
    else:
        every = build_cases() if args.cases == "updates" else build_neighbours()
    cases = [c for c in every if args.split in ("all", c["split"])]
    if not cases:
        ap.error(f"no case of --cases {args.cases} is in split {args.split}: try --split test")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(cases):
            rows.append(run_case(case, i, args.mode, embedder, config, Path(tmp), names))
    report = {
        "benchmark": "ku_suite",
        "cases_set": args.cases,
        "mode": args.mode,
        "embedder": embedder.name,
        "split": args.split,
        "config_overrides": json.loads(args.retrieval),
        **summarise(rows, names),
        "per_split": {
            sp: summarise([r for r in rows if r["split"] == sp], names)
            for sp in ("dev", "test")
            if any(r["split"] == sp for r in rows)
        },
        "cases": rows,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    console = Console()
    t = Table(title=f"ku_suite mode={args.mode} embedder={embedder.name} split={args.split}")
    for col in ("category", "n", *names, "miss", "rate"):
        t.add_column(col)
    for name, o in [*report["per_category"].items(), ("overall", report["overall"])]:
        t.add_row(
            name,
            *(str(o[k]) for k in ("n", *names, "miss")),
            f"{o[names[0] + '_rate']:.3f}",
        )
    console.print(t)
    if args.show_failures:
        for r in rows:
            if r["outcome"] != names[0]:
                console.print(r["id"], r["outcome"], r["top"][:3])
    prefix = "" if args.cases == "updates" else f"{args.cases}-"
    out = (
        Path(args.out)
        if args.out
        else (RESULTS_DIR / f"ku_suite-{prefix}{args.mode}-{embedder.name}-{args.split}.json")
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    console.print(f"wrote {out}")
    return report


if __name__ == "__main__":
    main()
