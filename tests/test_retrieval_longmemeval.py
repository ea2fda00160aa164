"""benchmarks/longmemeval.py on the small fixture it writes itself (official file format)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import longmemeval as lme


def test_dates_and_file_lookup(tmp_path: Path) -> None:
    assert lme.parse_date("2023/05/20 (Sat) 02:21") == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    with pytest.raises(ValueError):
        lme.parse_date("yesterday")
    (tmp_path / "longmemeval_s_cleaned.json").write_text("[]")
    assert lme.find_file(tmp_path, "s").name == "longmemeval_s_cleaned.json"
    with pytest.raises(SystemExit):
        lme.find_file(tmp_path, "m")


def test_session_recall_on_the_fixture(tmp_path: Path) -> None:
    path = lme.write_fixture(tmp_path / "data")
    items = json.loads(path.read_text())
    assert {"question_id", "haystack_sessions", "answer_session_ids", "question_date"} <= set(
        items[0]
    )
    out = tmp_path / "out.json"
    report = lme.main(["--data", str(path.parent), "--embedder", "hashing", "--out", str(out)])
    assert json.loads(out.read_text())["embedder"] == "hashing-v1-384"
    rows = {r["question_id"]: r for r in report["questions"]}
    # the dog question: its one evidence session ranks first
    assert rows["fx_user_1"]["top_sessions"][0] == "s_dog"
    assert rows["fx_user_1"]["recall_any@1"] == 1.0
    # both marathon sessions outrank the party-planning filler
    assert set(rows["fx_multi_1"]["top_sessions"][:2]) == {"m1", "m2"}
    assert rows["fx_multi_1"]["recall_all@3"] == 1.0 and rows["fx_multi_1"]["ndcg@10"] == 1.0
    # abstention questions are counted, never scored
    assert rows["fx_user_2_abs"]["abstention"] and "ndcg@10" not in rows["fx_user_2_abs"]
    overall = report["overall"]
    assert (overall["n"], overall["n_scored"]) == (3, 2)
    assert set(report["per_type"]) == {"single-session-user", "multi-session"}


def test_metrics_on_hand_ranked_sessions() -> None:
    got = lme.score(["x", "g1", "y", "g2"], {"g1", "g2"})
    assert got["recall_any@1"] == 0.0 and got["recall_any@3"] == 1.0
    assert got["recall_all@3"] == 0.0 and got["recall_all@5"] == 1.0
    # DCG = 1/log2(3) + 1/log2(5); ideal = 1 + 1/log2(3)
    import math

    ideal = 1 + 1 / math.log2(3)
    assert got["ndcg@10"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)


def test_answering_is_optional_and_pinned_to_temperature_zero(tmp_path: Path) -> None:
    class Recorder:
        def __init__(self) -> None:
            self.calls: list[tuple[str, float]] = []

        def complete(self, prompt: str, *, temperature: float = 0.0) -> str:
            self.calls.append((prompt, temperature))
            return "A beagle [x]" if len(self.calls) == 1 else "yes"

    items = json.loads(lme.write_fixture(tmp_path).read_text())[:1]
    from rich.progress import Progress

    llm = Recorder()
    with Progress(disable=True) as progress:
        result = lme.run(items, lme.HashingEmbedder(), tmp_path, progress, llm)
    assert result["questions"][0]["correct"] is True
    assert result["overall"]["qa_accuracy"] == 1.0
    assert [t for _, t in llm.calls] == [0.0, 0.0]
    assert "ABSTAIN" in llm.calls[0][0] and "beagle named Rocky" in llm.calls[0][0]
