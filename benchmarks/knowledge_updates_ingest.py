# ruff: noqa: E501  (the case tables are data, one case per line)
"""Knowledge updates through conversation ingest (rule-based path, no LLM).

Each case: an early round states a fact, a later round (30 days on) changes
it, then a question asks for the current value. Both rounds go through
``AgentMemory.ingest_round`` with the rule-based extractor and resolver; the
question goes through ``recall``. Outcome per case:

- new_wins: among the results naming either value, the newer one comes first;
- stale_wins: the old value comes first;
- miss: neither value is among the top ``--k`` results.

``top1`` additionally counts the new fact at rank 1. The retrieval suite
(benchmarks/knowledge_updates/cases.json) is used when that file exists, with
its own protocol and strict outcome (new_wins only when the new statement is
the top result); otherwise the built-in cases below, 6 per category. Prints a table
per category and writes JSON to benchmarks/results/. ``closed`` counts the cases
where the resolver itself closed the old fact (INVALIDATE or UPDATE) rather than
leaving both for the ranking to order. ``--suite heldout`` runs 30 cases written
after the rules were last changed, to check that they generalise.

    .venv/bin/python benchmarks/knowledge_updates_ingest.py [--mode ingest|add] [--k 10]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock, iso, parse_time
from attestor_arango.embeddings import Embedder, HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.ingest import Action
from attestor_arango.memory import AgentMemory

HERE = Path(__file__).resolve().parent
SHARED_CASES = HERE / "knowledge_updates" / "cases.json"
START = datetime(2026, 1, 5, 9, tzinfo=UTC)

# (category, old statement, new statement, question, old marker, new marker)
CASES: list[tuple[str, str, str, str, str, str]] = [
    ("numeric", "I weigh about 82 kg at the moment.", "After the diet I weigh 75 kg now.", "How much does the user weigh?", "82 kg", "75 kg"),
    ("numeric", "My monthly rent is $1400.", "The landlord raised my rent to $1650 a month.", "What is the user's rent?", "$1400", "$1650"),
    ("numeric", "I run about 20 km a week.", "These days I run 35 km a week.", "How far does the user run each week?", "20 km", "35 km"),
    ("numeric", "My salary is 70k.", "I got a raise, my salary is now 82k.", "What is the user's salary?", "70k", "82k"),
    ("numeric", "I sleep around 6 hours a night.", "Lately I sleep 8 hours a night.", "How many hours does the user sleep?", "6 hours", "8 hours"),
    ("numeric", "My commute takes 45 minutes.", "Since the new train line opened, my commute takes 20 minutes.", "How long is the user's commute?", "45 minutes", "20 minutes"),
    ("categorical", "I drive a Honda Civic.", "I sold the Civic and now I drive a Tesla Model 3.", "What car does the user drive?", "Honda", "Tesla"),
    ("categorical", "My phone is an iPhone 12.", "My phone is a Pixel 8 now.", "What phone does the user have?", "iPhone", "Pixel"),
    ("categorical", "Our team's main language is Java.", "Our team's main language is Kotlin these days.", "What is the team's main language?", "Java.", "Kotlin"),
    ("categorical", "My favorite cuisine is Italian.", "My favorite cuisine is Thai now.", "What is the user's favorite cuisine?", "Italian", "Thai"),
    ("categorical", "I am on the basic plan.", "I upgraded to the premium plan.", "Which plan is the user on?", "basic", "premium"),
    ("categorical", "My laptop runs Windows.", "I switched my laptop from Windows to Linux.", "What OS does the user's laptop run?", "runs Windows", "Linux"),
    ("temporal", "My dentist appointment is on March 3.", "My dentist appointment got moved to March 10.", "When is the user's dentist appointment?", "March 3", "March 10"),
    ("temporal", "The project deadline is Friday.", "The project deadline was pushed to next Wednesday.", "When is the project deadline?", "Friday", "Wednesday"),
    ("temporal", "Our wedding is planned for June 2027.", "We moved the wedding to September 2027.", "When is the wedding?", "June 2027", "September 2027"),
    ("temporal", "My flight to Tokyo leaves on April 12.", "My flight to Tokyo now leaves on April 14.", "When does the user's flight to Tokyo leave?", "April 12", "April 14"),
    ("temporal", "The team standup is at 9am.", "The team standup is at 10am from now on.", "What time is the team standup?", "9am", "10am"),
    ("temporal", "My lease ends in July.", "I extended my lease, it ends in December now.", "When does the user's lease end?", "July", "December"),
    ("preference", "I prefer tea in the morning.", "I prefer coffee in the morning now.", "What does the user drink in the morning?", "tea", "coffee"),
    ("preference", "I love horror movies.", "I don't like horror movies anymore.", "Does the user like horror movies?", "love horror", "don't like horror"),
    ("preference", "My favorite band is Radiohead.", "My favorite band is Arcade Fire now.", "What is the user's favorite band?", "Radiohead", "Arcade Fire"),
    ("preference", "I like window seats on planes.", "I prefer aisle seats on planes these days.", "Which seat does the user like on planes?", "window", "aisle"),
    ("preference", "I enjoy running outdoors.", "I hate running outdoors now.", "Does the user enjoy running outdoors?", "enjoy running", "hate running"),
    ("preference", "I prefer dark mode in my editor.", "I prefer light mode in my editor now.", "Which editor theme does the user prefer?", "dark mode", "light mode"),
    ("entity", "My manager is Sarah.", "My new manager is David.", "Who is the user's manager?", "Sarah", "David"),
    ("entity", "My doctor is Dr. Patel.", "I changed doctors, my doctor is now Dr. Kim.", "Who is the user's doctor?", "Patel", "Kim"),
    ("entity", "Our main client is Acme Corp.", "Our main client is Globex now.", "Who is the main client?", "Acme", "Globex"),
    ("entity", "My best friend is Jake.", "My best friend is Maria these days.", "Who is the user's best friend?", "Jake", "Maria"),
    ("entity", "The CEO of my company is Tom Reed.", "The CEO of my company is now Linda Park.", "Who is the CEO of the user's company?", "Tom Reed", "Linda Park"),
    ("entity", "My mentor at work is Priya.", "My mentor at work is Ben now.", "Who is the user's mentor at work?", "Priya", "Ben"),
    ("location", "I live in Chicago.", "I moved to Denver last month.", "Where does the user live?", "Chicago", "Denver"),
    ("location", "I work from the Boston office.", "I work from the Austin office now.", "Which office does the user work from?", "Boston", "Austin"),
    ("location", "My parents live in Ohio.", "My parents moved to Florida.", "Where do the user's parents live?", "Ohio", "Florida"),
    ("location", "I keep my bike in the garage.", "I keep my bike in the basement now.", "Where does the user keep the bike?", "garage", "basement"),
    ("location", "We are based in London.", "We relocated to Amsterdam.", "Where is the user based?", "London", "Amsterdam"),
    ("location", "My gym is in Midtown.", "My gym is in Brooklyn now.", "Where is the user's gym?", "Midtown", "Brooklyn"),
    ("intent", "I plan to buy a Toyota.", "I changed my mind, I plan to buy a Mazda.", "Which car does the user plan to buy?", "Toyota", "Mazda"),
    ("intent", "I want to learn Spanish this year.", "I want to learn Japanese instead of Spanish.", "Which language does the user want to learn?", "learn Spanish this", "Japanese"),
    ("intent", "I'm going to study law.", "I decided to study medicine instead.", "What will the user study?", "law", "medicine"),
    ("intent", "We plan to visit Greece in the summer.", "We plan to visit Portugal in the summer instead.", "Where does the user plan to go in the summer?", "Greece", "Portugal"),
    ("intent", "I intend to run the Boston marathon.", "I intend to run the Chicago marathon instead.", "Which marathon will the user run?", "Boston", "Chicago"),
    ("intent", "I'm hoping to adopt a dog.", "I'm hoping to adopt a cat now.", "What pet does the user hope to adopt?", "a dog", "a cat"),
    ("relationship", "I'm dating Alex.", "Alex and I broke up, I'm single now.", "Is the user in a relationship?", "dating Alex", "single"),
    ("relationship", "I am engaged to Sam.", "Sam and I got married last week.", "Is the user married?", "engaged", "married"),
    ("relationship", "I am married.", "I am divorced now.", "What is the user's marital status?", "I am married", "divorced"),
    ("relationship", "My sister is single.", "My sister got engaged to Leo.", "Is the user's sister in a relationship?", "single", "engaged"),
    ("relationship", "My roommate is Chris.", "My roommate is Dana now.", "Who is the user's roommate?", "Chris", "Dana"),
    ("relationship", "I'm in a relationship with Jordan.", "I broke up with Jordan.", "Is the user with Jordan?", "relationship with Jordan", "broke up"),
    ("count", "I have two cats.", "We adopted another kitten, so now I have three cats.", "How many cats does the user have?", "two cats", "three cats"),
    ("count", "I have 3 kids.", "We had a baby, I have 4 kids now.", "How many kids does the user have?", "3 kids", "4 kids"),
    ("count", "Our team has 8 engineers.", "Our team has 12 engineers after the hiring round.", "How many engineers are on the team?", "8 engineers", "12 engineers"),
    ("count", "I own 2 cars.", "I sold one car, I own 1 car now.", "How many cars does the user own?", "2 cars", "1 car"),
    ("count", "I have visited 15 countries.", "I have visited 18 countries now.", "How many countries has the user visited?", "15 countries", "18 countries"),
    ("count", "I have read 12 books this year.", "I have read 14 books this year.", "How many books has the user read this year?", "12 books", "14 books"),
    ("binary_status", "I smoke.", "I quit smoking.", "Does the user smoke?", "I smoke", "quit"),
    ("binary_status", "My account is active.", "My account is suspended.", "Is the user's account active?", "active", "suspended"),
    ("binary_status", "The production server is down.", "The production server is back up.", "Is the production server up?", "down", "back up"),
    ("binary_status", "I am vegetarian.", "I am not vegetarian anymore.", "Is the user vegetarian?", "I am vegetarian", "not vegetarian"),
    ("binary_status", "I drink alcohol.", "I don't drink alcohol anymore.", "Does the user drink alcohol?", "I drink alcohol", "don't drink"),
    ("binary_status", "The feature flag is enabled.", "The feature flag is disabled now.", "Is the feature flag enabled?", "enabled", "disabled"),
]  # fmt: skip
# Held out: written after the rules were last changed and never used to change them.
HELDOUT: list[tuple[str, str, str, str, str, str]] = [
    ("numeric", "My blood pressure is 140 over 90.", "My blood pressure is down to 120 over 80.", "What is the user's blood pressure?", "140", "120"),
    ("numeric", "I pay 60 dollars a month for internet.", "I now pay 45 dollars a month for internet.", "How much does the user pay for internet?", "60 dollars", "45 dollars"),
    ("numeric", "My resting heart rate is 72 bpm.", "My resting heart rate dropped to 58 bpm.", "What is the user's resting heart rate?", "72 bpm", "58 bpm"),
    ("categorical", "I use Firefox as my browser.", "I use Chrome as my browser now.", "Which browser does the user use?", "Firefox", "Chrome"),
    ("categorical", "My car is a blue Golf.", "My car is a grey Passat now.", "What car does the user have?", "Golf", "Passat"),
    ("categorical", "Our CI runs on Jenkins.", "We migrated our CI from Jenkins to GitHub Actions.", "What does the team's CI run on?", "runs on Jenkins", "GitHub Actions"),
    ("temporal", "The book club meets on Tuesdays.", "The book club meets on Thursdays now.", "When does the book club meet?", "Tuesdays", "Thursdays"),
    ("temporal", "My exam is on May 20.", "My exam was rescheduled to June 2.", "When is the user's exam?", "May 20", "June 2"),
    ("temporal", "The launch is set for October.", "The launch got postponed to November.", "When is the launch?", "October", "November"),
    ("preference", "I like my coffee black.", "I take my coffee with oat milk now.", "How does the user take coffee?", "black", "oat milk"),
    ("preference", "My favorite season is summer.", "My favorite season is autumn now.", "What is the user's favorite season?", "summer", "autumn"),
    ("preference", "I love spicy food.", "I can't handle spicy food anymore.", "Does the user like spicy food?", "love spicy", "can't handle"),
    ("entity", "My landlord is Mr. Green.", "My new landlord is Ms. Ortiz.", "Who is the user's landlord?", "Green", "Ortiz"),
    ("entity", "My team lead is Omar.", "My team lead is Chen now.", "Who is the user's team lead?", "Omar", "Chen"),
    ("entity", "Our accountant is Karen.", "We hired a new accountant, our accountant is now Raj.", "Who is the accountant?", "Karen", "Raj"),
    ("location", "I live in Seattle.", "I relocated to Portland in March.", "Where does the user live?", "Seattle", "Portland"),
    ("location", "My sister lives in Madrid.", "My sister moved to Lisbon.", "Where does the user's sister live?", "Madrid", "Lisbon"),
    ("location", "I work at the downtown branch.", "I work at the airport branch now.", "Which branch does the user work at?", "downtown", "airport"),
    ("intent", "I plan to sell my house.", "I plan to rent out my house instead.", "What does the user plan to do with the house?", "sell", "rent out"),
    ("intent", "I want to become a pilot.", "I want to become a nurse now.", "What does the user want to become?", "pilot", "nurse"),
    ("intent", "We are going to renovate the bathroom.", "We are going to renovate the kitchen first.", "What will the user renovate?", "bathroom", "kitchen"),
    ("relationship", "My partner is Robin.", "My partner is Casey now.", "Who is the user's partner?", "Robin", "Casey"),
    ("relationship", "I am single.", "I'm dating Morgan now.", "Is the user dating anyone?", "single", "Morgan"),
    ("relationship", "My brother is married.", "My brother got divorced.", "Is the user's brother married?", "married", "divorced"),
    ("count", "I have one dog.", "I have two dogs now.", "How many dogs does the user have?", "one dog", "two dogs"),
    ("count", "Our office has 3 meeting rooms.", "Our office has 5 meeting rooms after the move.", "How many meeting rooms does the office have?", "3 meeting", "5 meeting"),
    ("count", "I speak 2 languages.", "I speak 3 languages now.", "How many languages does the user speak?", "2 languages", "3 languages"),
    ("binary_status", "The pool is open.", "The pool is closed for repairs.", "Is the pool open?", "open", "closed"),
    ("binary_status", "My subscription is paused.", "My subscription is active again.", "Is the user's subscription active?", "paused", "active"),
    ("binary_status", "I eat meat.", "I stopped eating meat.", "Does the user eat meat?", "I eat meat", "stopped"),
]  # fmt: skip
DISTRACTORS = [
    "I had pasta for lunch today.",
    "The weather was lovely this weekend.",
    "I finished a long report at work.",
    "My neighbour has a loud parrot.",
    "I watched a documentary about octopuses.",
    "We repainted the kitchen in spring.",
]
REPLY = "Thanks for telling me! Let me know if you need anything else."


def load_cases(suite: str) -> list[dict[str, Any]]:
    """Built-in or held-out cases (with markers); the shared suite is read by ``run_shared``."""
    keys = ("category", "old", "new", "question", "old_marker", "new_marker")
    return [dict(zip(keys, c, strict=True)) for c in (HELDOUT if suite == "heldout" else CASES)]


def outcome(texts: list[str], old: str, new: str, k: int) -> tuple[str, bool]:
    """new_wins / stale_wins / miss over the top k, and whether the new fact is rank 1."""
    for text in texts[:k]:
        has_new, has_old = new in text, old in text
        if has_new and not has_old:
            return "new_wins", texts[0] == text
        if has_old and not has_new:
            return "stale_wins", False
    return "miss", False


def pick_embedder(choice: str) -> Embedder:
    if choice == "hashing":
        return HashingEmbedder()
    from attestor_arango.config import load_config
    from attestor_arango.embeddings.chain import make_embedder

    return make_embedder(load_config(embedder=choice))


def _say(mem: AgentMemory, ctx: AgentContext, mode: str, text: str, at: int) -> bool:
    """Stores one statement; True when the resolver closed an older fact for it."""
    if mode == "add":
        mem.add(text, valid_from=at / 1e6, context=ctx)
        return False
    turn = {"user": text, "assistant": REPLY, "timestamp": iso(at)}
    result = mem.ingest_round(turn, context=ctx)
    return any(d.action in (Action.INVALIDATE, Action.UPDATE) for d in result.decisions)


def run_shared(mode: str, k: int, embedder: Embedder) -> dict[str, Any]:
    """The retrieval suite's protocol (cases.json), with every statement ingested as a turn.

    Same sessions, distractors and question times as benchmarks/knowledge_updates/run.py;
    its strict outcome: new_wins only when the top result is the new statement.
    """
    suite = json.loads(SHARED_CASES.read_text(encoding="utf-8"))
    old_at, new_at = parse_time(suite["old_session"]), parse_time(suite["new_session"])
    asked = parse_time(suite["asked_at"])
    pool, per = suite["distractors"], int(suite["distractors_per_case"])
    clock = ManualClock(old_at)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        mem = AgentMemory(Path(tmp) / "ku.db", embedder=embedder, clock=clock,
                          ids=SeededIdSource(11))  # fmt: skip
        for i, case in enumerate(suite["cases"]):
            ctx = AgentContext(agent_id="bench", namespace=f"ku-{i}")
            picked = [pool[(i * per + j) % len(pool)] for j in range(per)]
            clock.set(old_at + i)
            for text in [*picked[: per // 2], case["old"], *picked[per // 2 :]]:
                _say(mem, ctx, mode, text, clock.now_us())
                clock.advance(seconds=60)
            clock.set(new_at + i)
            resolved = _say(mem, ctx, mode, case["new"], clock.now_us())
            clock.set(asked + i)
            texts = [r.memory.content for r in mem.recall(case["question"], context=ctx)]
            top = texts[0] if texts else ""
            strict = "new_wins" if top and top in case["new"] else (
                "stale_wins" if top and top in case["old"] else "miss")  # fmt: skip
            rows.append({**case, "outcome": strict, "top1": strict == "new_wins",
                         "resolved": resolved, "results": texts[:k]})  # fmt: skip
        mem.close()
    return summarise(rows, mode, k, "shared", embedder.name)


def run(mode: str, k: int, suite: str, embedder: Embedder) -> dict[str, Any]:
    clock = ManualClock(START)
    with tempfile.TemporaryDirectory() as tmp:
        mem = AgentMemory(
            Path(tmp) / "ku.db", embedder=embedder, clock=clock, ids=SeededIdSource(11)
        )
        rows = []
        for i, case in enumerate(load_cases(suite)):
            ctx = AgentContext(agent_id="bench", namespace=f"ku-{i}")
            resolved = False
            for day, text in ((0, case["old"]), (30, case["new"])):
                clock.set(START)
                clock.advance(days=day + i / 100)
                spoken = f"{text} {DISTRACTORS[(i + day) % len(DISTRACTORS)]}"
                if mode == "ingest":
                    turn = {"user": spoken, "assistant": REPLY, "timestamp": iso(clock.now_us())}
                    result = mem.ingest_round(turn, context=ctx)
                    resolved = resolved or any(
                        d.action in (Action.INVALIDATE, Action.UPDATE) for d in result.decisions
                    )
                else:
                    for sentence in (text, DISTRACTORS[(i + day) % len(DISTRACTORS)]):
                        mem.add(sentence, context=ctx)
            clock.advance(days=1)
            response = mem.recall(case["question"], context=ctx)
            texts = [r.memory.content for r in response]
            outcome_, top1 = outcome(texts, case["old_marker"], case["new_marker"], k)
            rows.append(
                {**case, "outcome": outcome_, "top1": top1, "resolved": resolved,
                 "results": texts[:k]}
            )  # fmt: skip
        mem.close()
    return summarise(rows, mode, k, suite, embedder.name)


def summarise(
    rows: list[dict[str, Any]], mode: str, k: int, suite: str, embedder: str
) -> dict[str, Any]:
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        per[r["category"]][r["outcome"]] += 1
        per[r["category"]]["top1"] += int(r["top1"])
        per[r["category"]]["resolved"] += int(r["resolved"])
        per[r["category"]]["cases"] += 1
    total: Counter[str] = Counter()
    for c in per.values():
        total.update(c)
    categories = {
        name: {**dict(c), "new_first": c["new_wins"] / c["cases"]}
        for name, c in sorted(per.items())
    }
    return {
        "benchmark": "knowledge_updates_ingest",
        "mode": mode,
        "suite": suite,
        "path": "rule-based extractor and resolver" if mode == "ingest" else "add() text only",
        "embedder": embedder,
        "k": k,
        "cases": len(rows),
        "new_first": total["new_wins"] / max(1, total["cases"]),
        "top1": total["top1"] / max(1, total["cases"]),
        "totals": dict(total),
        "categories": categories,
        "failures": [r for r in rows if r["outcome"] != "new_wins"],
    }


def show(report: dict[str, Any], console: Console) -> None:
    title = f"knowledge updates ({report['suite']}) via {report['path']} ({report['embedder']})"
    table = Table(title=title)
    cols = ("category", "cases", "new_wins", "stale_wins", "miss", "new first", "top-1", "closed")
    for col in cols:
        table.add_column(col, justify="left" if col == "category" else "right")
    for name, c in report["categories"].items():
        table.add_row(name, str(c["cases"]), str(c.get("new_wins", 0)), str(c.get("stale_wins", 0)),
                      str(c.get("miss", 0)), f"{c['new_first']:.0%}",
                      f"{c.get('top1', 0) / c['cases']:.0%}", str(c.get("resolved", 0)))  # fmt: skip
    t = report["totals"]
    table.add_row("all", str(t["cases"]), str(t.get("new_wins", 0)), str(t.get("stale_wins", 0)),
                  str(t.get("miss", 0)), f"{report['new_first']:.1%}", f"{report['top1']:.1%}",
                  str(t.get("resolved", 0)), style="bold")  # fmt: skip
    console.print(table)
    for f in report["failures"]:
        console.print(
            f"[yellow]{f['outcome']}[/] {f['category']}: {f['question']} -> {f['results'][:2]}"
        )


def locomo_mix(path: Path) -> dict[str, Any]:
    """Decision mix and per-round latency of ingest on one LoCoMo conversation.

    Speaker A's turn is the "user" side and the reply the "assistant" side of a
    round; session dates anchor the time expressions. No answer key is used:
    this shows what the rules decide on real chat (how much becomes a fact, how
    often something is superseded) and how long a round takes.
    """
    import time

    data = json.loads(path.read_text(encoding="utf-8"))
    conv = data.get("conversation", data)
    clock = ManualClock(START)
    timings: list[float] = []
    actions: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        mem = AgentMemory(
            Path(tmp) / "l.db", embedder=HashingEmbedder(), clock=clock, ids=SeededIdSource(5)
        )
        i = 1
        while f"session_{i}" in conv:
            when = datetime.strptime(conv[f"session_{i}_date_time"], "%I:%M %p on %d %B, %Y")
            at = iso(int(when.replace(tzinfo=UTC).timestamp() * 1_000_000))
            turns = conv[f"session_{i}"]
            for a, b in zip(turns[::2], turns[1::2], strict=False):
                clock.advance(seconds=60)
                started = time.perf_counter()
                result = mem.ingest_round(
                    {"user": a["text"], "assistant": b["text"], "timestamp": at,
                     "user_name": a["speaker"], "session_id": f"s{i}"}
                )  # fmt: skip
                timings.append(time.perf_counter() - started)
                actions.update(d.action.value for d in result.decisions)
            i += 1
        mem.close()
    timings.sort()
    return {
        "conversation": path.name,
        "rounds": len(timings),
        "decisions": dict(actions),
        "facts_per_round": sum(actions.values()) / max(1, len(timings)),
        "round_ms_p50": 1000 * timings[len(timings) // 2],
        "round_ms_p95": 1000 * timings[int(len(timings) * 0.95)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=["ingest", "add"], default="ingest")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--embedder", default="hashing", help="hashing (default) or local")
    parser.add_argument(
        "--suite",
        choices=["auto", "builtin", "heldout", "shared"],
        default="auto",
        help="auto: the retrieval suite's cases.json when present, else the built-in cases",
    )
    parser.add_argument(
        "--out", type=Path, default=HERE / "results" / "knowledge_updates_ingest.json"
    )
    parser.add_argument("--locomo", type=Path, help="also report ingest on this LoCoMo file")
    args = parser.parse_args()
    if args.locomo:
        mix = locomo_mix(args.locomo)
        Console(width=110).print(mix)
        out = HERE / "results" / f"ingest_locomo_{args.locomo.stem}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(mix, indent=2), encoding="utf-8")
    suite = args.suite
    if suite == "auto":
        suite = "shared" if SHARED_CASES.is_file() else "builtin"
    embedder = pick_embedder(args.embedder)
    if suite == "shared":
        report = run_shared(args.mode, args.k, embedder)
    else:
        report = run(args.mode, args.k, suite, embedder)
    show(report, Console(width=110))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    out = args.out.with_name(f"{args.out.stem}-{suite}-{args.mode}-{embedder.name}.json")
    out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    Console().print(f"wrote {out}")


if __name__ == "__main__":
    main()
