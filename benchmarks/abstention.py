"""Abstention, measured: does the recall pack say when memory holds no answer?

    python benchmarks/abstention.py [--embedder hashing|local|auto]

Our own data (written here, deterministic): 60 people with a city, an employer and a
pet each, stored through ``AgentMemory.add``. Questions are either supported (the
asked fact is stored; some worded as paraphrases) or unsupported (a person or an
attribute that was never stored: "What is Ana's favourite food?", "Where does Zoltan
live?"). People 0-29 form the dev split, 30-59 the test split.

The signal is ``ContextPack.support`` (share of the question's content terms that
the best note covers). The threshold is chosen on dev (best F1 of "abstain" there,
ties to the lower threshold) and then applied unchanged to test; precision and recall
of abstention on test are the published figures. Writes
benchmarks/results/abstention.json.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from attestor_arango.config import load_config
from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.memory import AgentMemory

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "abstention.json"

NAMES = [
    "Ana",
    "Bruno",
    "Carla",
    "Dmitri",
    "Elif",
    "Farid",
    "Greta",
    "Hiro",
    "Ines",
    "Jonas",
    "Kemal",
    "Lena",
    "Marek",
    "Nadia",
    "Oskar",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tomas",
    "Ulla",
    "Viktor",
    "Wanda",
    "Xavier",
    "Yara",
    "Zeno",
    "Amira",
    "Boris",
    "Chiara",
    "Diego",
    "Emeka",
    "Fiona",
    "Goran",
    "Hana",
    "Ivo",
    "Jana",
    "Kofi",
    "Lucia",
    "Mateo",
    "Nora",
    "Omar",
    "Paula",
    "Rafael",
    "Sofia",
    "Tariq",
    "Una",
    "Vera",
    "Wim",
    "Ximena",
    "Yusuf",
    "Zora",
    "Anton",
    "Bea",
    "Cyril",
    "Dana",
    "Emil",
    "Frida",
    "Gael",
    "Hedda",
    "Igor",
]
CITIES = [
    "Lisbon",
    "Porto",
    "Berlin",
    "Munich",
    "Lyon",
    "Turin",
    "Ghent",
    "Krakow",
    "Riga",
    "Oslo",
    "Bergen",
    "Graz",
]
EMPLOYERS = [
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "Stark",
    "Wayne",
    "Hooli",
    "Soylent",
    "Tyrell",
    "Cyberdyne",
]
PETS = ["cat", "dog", "parrot", "rabbit", "hamster", "turtle", "ferret", "goldfish"]
ABSENT = ("Zoltan", "Brunhilde", "Casimir", "Dorothea", "Evander", "Philippa")


def facts(i: int, name: str) -> list[tuple[str, str]]:
    return [
        (f"{name} lives in {CITIES[i % len(CITIES)]}", "city"),
        (f"{name} works at {EMPLOYERS[i % len(EMPLOYERS)]}", "employer"),
        (f"{name} has a pet {PETS[i % len(PETS)]}", "pet"),
    ]


def questions(i: int, name: str) -> list[tuple[str, bool]]:
    """(question, supported) for person i: stored facts asked plainly and as paraphrases,
    and attributes never stored."""
    supported = [
        (f"Where does {name} live?", True),
        (f"Which company does {name} work at?", True),
        (f"What pet does {name} have?", True),
        (f"In which city is {name}'s home?", True),  # paraphrase: no "live"
        (f"Who employs {name}?", True),  # paraphrase: no "work"
    ]
    unsupported = [
        (f"What is {name}'s favourite food?", False),
        (f"Which university did {name} study at?", False),
        (f"How old is {name}?", False),
        (f"What car does {name} drive?", False),
        (f"Where does {ABSENT[i % len(ABSENT)]} live?", False),  # nobody of that name
    ]
    return supported + unsupported


def build(path: Path, embedder: str) -> AgentMemory:
    config = load_config(path=str(path), embedder=embedder)
    ctx = AgentContext(agent_id="bench", role=AgentRole.ORCHESTRATOR, tenant="abst")
    mem = AgentMemory(config=config, context=ctx)
    for i, name in enumerate(NAMES):
        for text, category in facts(i, name):
            mem.add(text, entity=name, category=category)
    return mem


def score(mem: AgentMemory, people: range) -> list[dict[str, Any]]:
    rows = []
    for i in people:
        for q, supported in questions(i, NAMES[i]):
            pack = mem.recall_as_pack(q, token_budget=400)
            rows.append({"question": q, "supported": supported, "support": pack.support})
    return rows


def confusion(rows: list[dict[str, Any]], threshold: float) -> dict[str, float]:
    """Abstain when support < threshold; 'positive' = the question has no answer."""
    tp = sum(1 for r in rows if r["support"] < threshold and not r["supported"])
    fp = sum(1 for r in rows if r["support"] < threshold and r["supported"])
    fn = sum(1 for r in rows if r["support"] >= threshold and not r["supported"])
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    correct = sum(1 for r in rows if (r["support"] < threshold) != r["supported"])
    return {
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "accuracy": round(correct / len(rows), 4),
        "abstained": tp + fp,
        "questions": len(rows),
    }


def choose_threshold(dev: list[dict[str, Any]]) -> float:
    candidates = sorted({r["support"] for r in dev} | {1.01})
    best = max(candidates, key=lambda t: (confusion(dev, t)["f1"], -t))
    return float(best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embedder", default="hashing", help="embedder of the store")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        mem = build(Path(tmp) / "abstention.db", args.embedder)
        try:
            dev = score(mem, range(0, 30))
            test = score(mem, range(30, len(NAMES)))
            embedder = f"{mem.embedder.name} ({mem.embedder.dimension}-d)"
        finally:
            mem.close()
    threshold = choose_threshold(dev)
    result = {
        "benchmark": "abstention",
        "signal": "ContextPack.support (share of query content terms the best note covers)",
        "rule": "abstain when support < threshold; threshold chosen on dev by F1",
        "embedder": embedder,
        "memories": 3 * len(NAMES),
        "threshold": threshold,
        "dev": confusion(dev, threshold),
        "test": confusion(test, threshold),
        "test_errors": [r for r in test if (r["support"] < threshold) == r["supported"]],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "test_errors"}, indent=2))


if __name__ == "__main__":
    main()
