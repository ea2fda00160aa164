"""The Evidence Board in a real headless Chromium (Debian's /usr/bin/chromium, Playwright).

A uvicorn server on loopback serves the REST app over a seeded store; the browser
loads every page with a tenant's key. These tests skip only when Chromium or Playwright
is missing on a developer machine; under CI (``CI`` set) a missing browser is a failure.
``ATTESTOR_UI_SCREENSHOTS=1`` writes each page's screenshot to docs/ui/.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.interface_support import ROOT, fingerprint, running_server
from tests.support.trace_reading import trace_text
from tests.ui_seed import KEY_A, KEY_A_NS, KEY_B, SCRIPT, Seed, as_of_now, seed

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = ROOT / "docs" / "ui"


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is absent: apt-get install -y chromium chromium-driver"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is absent: pip install -e '.[dev]'"
    return None


def require_browser() -> None:
    reason = _missing()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser tests: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One persistent Chromium context with a fresh profile directory."""
    require_browser()
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="board-profile-")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": 1280, "height": 900},
        )
        context.set_default_timeout(30_000)
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Seed, str]]:
    s = seed(tmp_path_factory.mktemp("board"))
    with running_server(s.memory, s.keys) as url:
        yield s, url
    s.memory.close()


def open_page(chromium: Any, url: str, key: str, basic: bool = False) -> Any:
    """A new tab that sends ``key`` on every request, as Bearer or as a Basic password."""
    page = chromium.new_page()
    if basic:
        token = base64.b64encode(f"anyone:{key}".encode()).decode()
        page.set_extra_http_headers({"Authorization": f"Basic {token}"})
    else:
        page.set_extra_http_headers({"Authorization": f"Bearer {key}"})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.errors = errors
    response = page.goto(url)
    page.status = response.status if response else None
    return page


def shot(page: Any, name: str) -> None:
    if os.environ.get("ATTESTOR_UI_SCREENSHOTS"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"))


def pages_of(s: Seed, base: str) -> dict[str, str]:
    return {
        "memories": f"{base}/ui/memories",
        "search": f"{base}/ui/memories?q=Orion&status=all",
        "timeline": f"{base}/ui/timeline?entity=Alice",
        "as-of": f"{base}/ui/timeline?entity=Alice&as_of={quote(s.before_move)}",
        "recall": f"{base}/ui/recall?q={quote('where does Alice live')}&budget=40",
        "provenance": f"{base}/ui/memory/{s.ids['berlin']}",
        "provenance-episode": f"{base}/ui/memory/{s.ids['ingested']}",
        "audit": f"{base}/ui/audit",
        "audit-verify": f"{base}/ui/audit/verify",
    }


@pytest.mark.parametrize(
    "name",
    [
        "memories",
        "search",
        "timeline",
        "as-of",
        "recall",
        "provenance",
        "provenance-episode",
        "audit",
        "audit-verify",
    ],
)
def test_each_page_loads_against_the_seeded_store(
    chromium: Any, board: tuple[Seed, str], name: str
) -> None:
    s, base = board
    page = open_page(chromium, pages_of(s, base)[name], KEY_A)
    try:
        assert page.status == 200, page.content()
        assert page.locator("h1").first.is_visible()
        assert page.get_by_test_id("tenant").inner_text() == "acme"
        assert page.errors == []  # no script error, no CSP violation
        expected = {
            "memories": "Alice lives in Berlin",
            "search": "Project Orion status report",
            "timeline": "Alice lives in Paris",
            "as-of": "Alice lives in Paris",
            "recall": "Alice lives in",
            "provenance": "Alice lives in Berlin",
            "provenance-episode": "Bob",
            "audit": "purge_completed",
            "audit-verify": "Full verification of the audit chain",
        }[name]
        assert expected in page.inner_text("main")
        shot(page, name)
    finally:
        page.close()


def test_memories_page_paginates_with_totals(chromium: Any, board: tuple[Seed, str]) -> None:
    _, base = board
    page = open_page(chromium, f"{base}/ui/memories?per=20&tag=orion", KEY_A)
    try:
        assert page.locator("[data-testid=memories] tbody tr").count() == 20
        assert page.get_by_test_id("total").inner_text() == "60"
        page.click("a[rel=next]")
        page.wait_for_load_state()
        assert "page=2" in page.url
        assert page.locator("[data-testid=memories] tbody tr").count() == 20
        first_on_two = page.locator("[data-testid=memories] tbody tr").first.get_attribute(
            "data-id"
        )
        page.click("a[rel=next]")
        page.wait_for_load_state()
        assert page.locator("[data-testid=memories] tbody tr").count() == 20
        assert page.locator("a[rel=next]").count() == 0  # 60 rows: three pages
        assert first_on_two not in page.content()
    finally:
        page.close()


def test_as_of_control_changes_what_is_shown(chromium: Any, board: tuple[Seed, str]) -> None:
    s, base = board
    page = open_page(chromium, f"{base}/ui/timeline?entity=Alice", KEY_A)
    try:
        versions = page.get_by_test_id("versions")
        assert "Alice lives in Berlin" in versions.inner_text()
        paris = page.locator(f"li[data-id='{s.ids['paris']}']")
        assert "superseded" in paris.inner_text()
        # type a time into the as-of control and submit it: the page replays that instant
        page.fill("#asof-input", s.before_move)
        page.click("form.asof button[type=submit]")
        page.wait_for_load_state()
        assert "as_of=" in page.url
        assert page.get_by_test_id("as-of-banner").is_visible()
        text = page.get_by_test_id("versions").inner_text()
        assert "Alice lives in Paris" in text and "Alice lives in Berlin" not in text
        assert "superseded" not in page.locator(f"li[data-id='{s.ids['paris']}']").inner_text()
        # the slider to its left end: the namespace's first belief, before Alice moved
        page.goto(f"{base}/ui/memories?entity=Alice&status=all")
        assert page.locator("[data-testid=memories] tbody tr").count() == 2
        page.locator("#asof-range").fill("0")
        page.wait_for_url("**as_of=**")
        rows = page.locator("[data-testid=memories] tbody tr")
        assert rows.count() == 1 and rows.first.get_attribute("data-id") == s.ids["paris"]
        assert page.errors == []
    finally:
        page.close()


def test_recall_explainer_breakdowns_match_the_api(chromium: Any, board: tuple[Seed, str]) -> None:
    s, base = board
    at, query = as_of_now(s), "where does Alice live"
    api = httpx.post(
        f"{base}/v1/recall",
        json={"query": query, "as_of": at, "token_budget": 40},
        headers={"Authorization": f"Bearer {KEY_A}"},
    )
    assert api.status_code == 200, api.text
    expected = api.json()
    assert expected["results"], "the seeded recall must return something to compare"
    page = open_page(
        chromium, f"{base}/ui/recall?q={quote(query)}&budget=40&as_of={quote(at)}", KEY_A
    )
    try:
        assert page.get_by_test_id("recall-id").inner_text() == expected["recall_id"]
        assert int(page.get_by_test_id("tokens-used").inner_text()) == expected["tokens_used"]
        rows = page.locator("[data-testid=breakdown] tbody tr")
        assert rows.count() == len(expected["results"])
        for i, result in enumerate(expected["results"]):
            row = rows.nth(i)
            assert row.get_attribute("data-id") == result["memory"]["id"]
            shown = {
                cell.get_attribute("data-field"): cell.get_attribute("data-value")
                for cell in row.locator("td[data-field]").all()
            }
            assert float(shown.pop("score")) == result["score"]
            assert int(shown.pop("tokens")) == result["tokens"]
            assert len(shown) >= 15
            for name, value in shown.items():
                want = result["breakdown"][name]
                assert (None if value == "null" else float(value)) == want, name
        # the budget cut: the whole ranking minus what was kept, as the API ranks it
        full = httpx.post(
            f"{base}/v1/recall",
            json={"query": query, "as_of": at, "token_budget": 1 << 40},
            headers={"Authorization": f"Bearer {KEY_A}"},
        ).json()
        kept = {r["memory"]["id"] for r in expected["results"]}
        cut = [r["memory"]["id"] for r in full["results"] if r["memory"]["id"] not in kept]
        assert cut, "budget 40 must cut something from the seeded ranking"
        shown_cut = page.locator("[data-testid=cuts] tbody tr").evaluate_all(
            "rows => rows.map(r => r.getAttribute('data-id'))"
        )
        assert shown_cut == cut
        assert page.get_by_test_id("lane-errors-none").is_visible()
        assert "ABSTAIN" in page.get_by_test_id("prompt").inner_text()
        assert page.get_by_test_id("pack-recall-id").inner_text() == expected["recall_id"]
        page.goto(f"{base}/ui/recall?q={quote(query)}")  # "now": the pack is the same recall
        shown_id = page.get_by_test_id("recall-id").inner_text()
        assert page.get_by_test_id("pack-recall-id").inner_text() == shown_id
        page.get_by_test_id("replay-link").click()
        page.wait_for_load_state()
        assert "matches the recorded recall id" in page.get_by_test_id("replay-status").inner_text()
    finally:
        page.close()


def _starts(s: Seed) -> int:
    """Recalls run so far: one trace "start" event per ranking."""
    lines = trace_text(s.trace_path).splitlines()
    return sum(json.loads(line)["step"] == "start" for line in lines)


def test_recall_explainer_ranks_once_per_page(chromium: Any, board: tuple[Seed, str]) -> None:
    s, base = board
    before = _starts(s)
    page = open_page(chromium, f"{base}/ui/recall?q={quote('Orion milestone')}&budget=30", KEY_A)
    try:
        assert page.status == 200
        assert page.locator("[data-testid=cuts] tbody tr").count() > 0  # the budget cut some
    finally:
        page.close()
    assert _starts(s) == before + 1  # kept, cut and pack all come from one ranking


def test_a_recorded_recall_is_replayed_by_its_trace_id(chromium: Any, tmp_path: Path) -> None:
    s = seed(tmp_path)  # its own store: this test writes a newer belief
    with running_server(s.memory, s.keys) as base:
        _replay_by_trace_id(chromium, s, base)
    s.memory.close()


def _replay_by_trace_id(chromium: Any, s: Seed, base: str) -> None:
    query = "where does Alice live"
    auth = {"Authorization": f"Bearer {KEY_A}"}
    api = httpx.post(f"{base}/v1/recall", json={"query": query, "token_budget": 40}, headers=auth)
    assert api.status_code == 200, api.text
    recorded = api.json()
    rid = recorded["recall_id"]
    want_ids = [r["memory"]["id"] for r in recorded["results"]]
    assert want_ids
    trace = httpx.get(f"{base}/v1/recall/traces/{rid}", headers=auth)
    assert trace.status_code == 200, trace.text
    assert trace.json()["result_ids"] == want_ids and trace.json()["query"] == query
    # tenant B's key cannot look A's recall up, over REST nor in the board
    other = httpx.get(
        f"{base}/v1/recall/traces/{rid}", headers={"Authorization": f"Bearer {KEY_B}"}
    )
    assert other.status_code == 404 and "Alice" not in other.text
    page = open_page(chromium, f"{base}/ui/recall?trace={rid}", KEY_B)
    try:
        assert page.status == 404 and "Alice" not in page.content()
    finally:
        page.close()
    s.clock.advance(seconds=30)
    s.memory.add(  # a newer belief: a replay must still show what was believed then
        "Alice lives in Lisbon now",
        entity="Alice",
        category="residence",
        context=_acme_writer(),
    )
    page = open_page(chromium, f"{base}/ui/recall", KEY_A)
    try:
        page.fill("input[name=trace]", rid)
        page.click("button:has-text('Replay')")
        page.wait_for_load_state()
        assert page.get_by_test_id("recorded-id").inner_text() == rid
        assert "The replay matches" in page.get_by_test_id("replay-status").inner_text()
        shown = page.locator("[data-testid=breakdown] tbody tr").evaluate_all(
            "rows => rows.map(r => r.getAttribute('data-id'))"
        )
        assert shown == want_ids and "Lisbon" not in page.inner_text("main")
        assert page.get_by_test_id("recall-id").inner_text() == rid
        assert page.errors == []
        shot(page, "recall-replay")
    finally:
        page.close()


def test_provenance_shows_trail_episode_and_signature(
    chromium: Any, board: tuple[Seed, str]
) -> None:
    s, base = board
    page = open_page(chromium, f"{base}/ui/memory/{s.ids['berlin']}", KEY_A)
    try:
        trail = page.get_by_test_id("agent-trail").inner_text().split()
        assert trail == ["orchestrator-0", "planner-1", "researcher-7"]
        assert "researcher-7 (researcher)" in page.get_by_test_id("author").inner_text()
        assert "valid Ed25519 signature" in page.get_by_test_id("signature-status").inner_text()
        assert "matches the content" in page.get_by_test_id("hash-status").inner_text()
    finally:
        page.close()
    page = open_page(chromium, f"{base}/ui/memory/{s.ids['ingested']}", KEY_A)
    try:
        assert s.ids["episode"] in page.get_by_test_id("episode").inner_text()
        assert page.get_by_test_id("episode-user").inner_text() == s.ids["episode_text"]
        assert page.get_by_test_id("episode-assistant").inner_text() == "Noted, Bob."
    finally:
        page.close()


def _verify_whole_chain(page: Any) -> str:
    """Follows the audit page's verify link and waits for the background run's result."""
    page.get_by_test_id("verify-link").click()
    page.wait_for_load_state()
    page.get_by_test_id("verify-done").wait_for(timeout=60_000)  # refreshes until done
    return page.get_by_test_id("verify-status").inner_text()


def test_audit_page_checks_its_entries_and_verifies_the_chain_on_request(
    chromium: Any, board: tuple[Seed, str]
) -> None:
    _, base = board
    page = open_page(chromium, f"{base}/ui/audit", KEY_A)
    try:
        assert "check out" in page.get_by_test_id("page-status").inner_text()
        statuses = page.get_by_test_id("entry-status").all_inner_texts()
        assert statuses and all("ok" in t for t in statuses)
        seqs = [
            int(s)
            for s in page.locator("[data-testid=audit] tbody tr").evaluate_all(
                "rows => rows.map(r => r.getAttribute('data-seq'))"
            )
        ]
        assert seqs == sorted(seqs, reverse=True) and seqs[-1] == 1  # newest first, all here
        purge = page.locator("[data-testid=purges] tbody tr", has_text="purge_completed")
        assert purge.locator("[data-store=memories] b").inner_text() == "3"
        shot(page, "audit")
        assert "Intact." in _verify_whole_chain(page)
        assert page.errors == []
        page.goto(f"{base}/ui/audit")  # the result is kept for this chain head
        assert "Intact." in page.get_by_test_id("chain-status").inner_text()
    finally:
        page.close()


def test_audit_page_pages_the_chain_newest_first_by_cursor(
    chromium: Any, board: tuple[Seed, str]
) -> None:
    _, base = board
    page = open_page(chromium, f"{base}/ui/audit?per=10", KEY_A)
    try:

        def shown() -> list[int]:
            return [
                int(s)
                for s in page.locator("[data-testid=audit] tbody tr").evaluate_all(
                    "rows => rows.map(r => r.getAttribute('data-seq'))"
                )
            ]

        first = shown()
        assert len(first) == 10 and first == list(range(first[0], first[0] - 10, -1))
        page.click("a[rel=next]")  # older
        page.wait_for_load_state()
        second = shown()
        assert second == list(range(first[-1] - 1, first[-1] - 11, -1))
        assert "check out" in page.get_by_test_id("page-status").inner_text()
        page.click("a[rel=prev]")  # newer: back to the head
        page.wait_for_load_state()
        assert shown() == first
        assert page.locator("a[rel=prev]").count() == 0
    finally:
        page.close()


def test_audit_page_shows_where_the_chain_breaks(chromium: Any, tmp_path: Path) -> None:
    s = seed(tmp_path)
    entries = s.memory.audit_log(limit=10, context=_acme_reader())
    victim = entries[4].seq
    db = sqlite3.connect(tmp_path / "board.db")  # an attacker with the database file
    with db:
        db.execute("DROP TRIGGER audit_no_update")
        db.execute(
            "UPDATE audit SET details = ? WHERE tenant = 'acme' AND seq = ?",
            (json.dumps({"namespace": "inbox", "forged": True}), victim),
        )
    db.close()
    with running_server(s.memory, s.keys) as base:
        # a page far from the break checks out; the page holding it shows it on load
        page = open_page(chromium, f"{base}/ui/audit?per=10", KEY_A)
        try:
            assert "check out" in page.get_by_test_id("page-status").inner_text()
            page.goto(f"{base}/ui/audit?per=10&before={victim + 3}")
            assert "Broken." in page.get_by_test_id("page-status").inner_text()
            row = page.locator(f"tr[data-seq='{victim}'] [data-testid=entry-status]")
            assert "modified" in row.inner_text()
            ok_row = page.locator(f"tr[data-seq='{victim - 1}'] [data-testid=entry-status]")
            assert "ok" in ok_row.inner_text()
            # the full verification, asked for from the newest page, names the first break
            page.goto(f"{base}/ui/audit")
            status = _verify_whole_chain(page)
            assert "Broken." in status and f"seq {victim}" in status
            page.get_by_test_id("first-break").click()
            page.wait_for_load_state()
            row = page.locator(f"tr[data-seq='{victim}'] [data-testid=entry-status]")
            assert "modified" in row.inner_text()
            assert f"seq {victim}" in page.get_by_test_id("chain-status").inner_text()
            shot(page, "audit-broken")
        finally:
            page.close()
    s.memory.close()


def _acme_writer() -> Any:
    from attestor_arango.context import AgentContext

    return AgentContext(agent_id="planner-1", role="planner", tenant="acme")


def _acme_reader() -> Any:
    from attestor_arango.context import AgentContext

    return AgentContext(agent_id="inspector", role="reviewer", tenant="acme")


def test_tenant_a_never_sees_tenant_b(chromium: Any, board: tuple[Seed, str]) -> None:
    s, base = board
    secret, secret_id = "vault code is 7781", s.ids["beta"]
    for name, url in pages_of(s, base).items():
        for basic in (False, True):
            page = open_page(chromium, url, KEY_A, basic=basic)
            try:
                html = page.content()
                assert page.status == 200, (name, html)
                assert secret not in html and secret_id not in html, name
            finally:
                page.close()
    # B's key on B's own memory works, on A's pages sees none of A
    page = open_page(chromium, f"{base}/ui/memory/{secret_id}", KEY_B)
    try:
        assert page.status == 200 and secret in page.inner_text("main")
    finally:
        page.close()
    for url in (
        f"{base}/ui/memories?status=all",
        f"{base}/ui/timeline?entity=Alice",
        f"{base}/ui/recall?q=Alice",
        f"{base}/ui/audit",
        f"{base}/ui/audit/verify",
    ):
        page = open_page(chromium, url, KEY_B)
        try:
            html = page.content()
            assert "Alice lives" not in html and s.ids["paris"] not in html
            assert page.get_by_test_id("tenant").inner_text() == "beta"
        finally:
            page.close()
    # A's key on B's memory id: not found, nothing of it shown
    page = open_page(chromium, f"{base}/ui/memory/{secret_id}", KEY_A)
    try:
        assert page.status == 404 and secret not in page.content()
    finally:
        page.close()
    # a header asking for another tenant is refused, as on REST
    page = chromium.new_page()
    page.set_extra_http_headers({"Authorization": f"Bearer {KEY_A}", "X-Tenant": "beta"})
    try:
        response = page.goto(f"{base}/ui/memories")
        assert response is not None and response.status == 403
    finally:
        page.close()
    # a namespace-limited key cannot open tenant-wide pages nor other namespaces
    for tenant_wide in ("audit", "audit/verify"):
        page = open_page(chromium, f"{base}/ui/{tenant_wide}", KEY_A_NS)
        try:
            assert page.status == 403, tenant_wide
        finally:
            page.close()
    page = open_page(chromium, f"{base}/ui/memories?ns=other", KEY_A_NS)
    try:
        assert page.status == 403
    finally:
        page.close()


def test_without_a_key_the_browser_is_asked_for_one(chromium: Any, board: tuple[Seed, str]) -> None:
    _, base = board
    response = httpx.get(f"{base}/ui/memories")
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Basic ")
    assert httpx.get(f"{base}/ui/memories", auth=("x", "wrong")).status_code == 401
    assert httpx.get(f"{base}/ui/memories", auth=("x", KEY_A)).status_code == 200


def test_script_content_renders_as_text(chromium: Any, board: tuple[Seed, str]) -> None:
    s, base = board
    for url in (
        f"{base}/ui/memories?entity=Mallory",
        f"{base}/ui/memory/{s.ids['script']}",
        f"{base}/ui/timeline?entity=Mallory",
        f"{base}/ui/memories?q=script%20window",
    ):
        page = open_page(chromium, url, KEY_A)
        try:
            assert page.evaluate("() => window.__pwned") is None
            cells = page.get_by_test_id("content").all_inner_texts()
            assert SCRIPT in cells, url
            scripts = page.evaluate("() => [...document.scripts].map(s => s.src.split('/').pop())")
            assert scripts == ["board.js"]
            assert page.locator("img").count() == 0
        finally:
            page.close()


def test_no_page_offers_a_write(chromium: Any, board: tuple[Seed, str]) -> None:
    s, base = board
    before = fingerprint(s.memory, "acme"), s.memory.stats(context=_acme_reader())
    for name, url in pages_of(s, base).items():
        page = open_page(chromium, url, KEY_A)
        try:
            methods = page.evaluate(
                "() => [...document.forms].map(f => (f.getAttribute('method') || 'get')"
                ".toLowerCase())"
            )
            assert methods and set(methods) == {"get"}, name
            assert page.locator("[formmethod]").count() == 0, name
            buttons = page.locator("button").all_inner_texts()
            assert all(
                b.strip() in {"Filter", "Show as of", "Show timeline", "Explain recall", "Replay"}
                for b in buttons
            ), (name, buttons)
        finally:
            page.close()
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            response = httpx.request(
                method, url, headers={"Authorization": f"Bearer {KEY_A}"}, content=b"{}"
            )
            assert response.status_code == 405, (name, method)
    after = fingerprint(s.memory, "acme"), s.memory.stats(context=_acme_reader())
    assert after == before  # loading every page changed nothing, audit chain included
