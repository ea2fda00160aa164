"""Adversarial finding: numbers written as text were read the way Python's ``int`` reads.

A query string is text the server parses on purpose, but ``?limit=1_0`` was read as 10,
``+1`` as 1, `` 7`` and ``7 `` as 7, ``10.0`` as 10 and ``٣`` (an Arabic-Indic digit) as
3, so one URL meant one number to us and another, or none, to a proxy, a log reader or a
cache in front of us. The same laxness was in the ``X-Token-Budget`` header, the
Evidence Board's ``page`` and ``per``, ``$ATTESTOR_TOKEN_BUDGET`` and the server flags;
a time given as digits of another script (``as_of=٣٣٣٣٣٣٣٣٣٣``) was read as epoch
seconds. Now an integer in text is ASCII digits with an optional leading '-'
(``validation.int_from_text``; the library checks the range as before), a number may add
a fraction (``number_from_text``: no ``nan``, ``inf``, exponent or '_'); anything else
is a 422 naming the parameter (a usage error for a flag), and nothing is read.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from attack_support import AUTH, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.config import identity_settings
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.codec import query_arguments
from attestor_arango.interfaces.cli.main import build_parser
from attestor_arango.interfaces.cli.parsing import UsageError
from attestor_arango.validation import int_from_text, number_from_text

LAX = ["1_0", "+1", " 7", "7 ", "10.0", "1e1", "٣", "0x10", ""]
ROUTES = [
    ("/v1/audit", "limit"),
    ("/v1/audit", "after_seq"),
    ("/v1/audit/page", "before_seq"),
    ("/v1/audit/page", "limit"),
    ("/v1/audit/deletions", "limit"),
]


@pytest.mark.parametrize("text", LAX)
@pytest.mark.parametrize(("path", "name"), ROUTES)
def test_a_query_integer_not_in_plain_digits_is_a_422_naming_it(
    tmp_path: Path, path: str, name: str, text: str
) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    before = stored(mem, with_audit=False)
    answer = client.get(path, params={name: text}, headers=AUTH)
    assert answer.status_code == 422, answer.text
    error = answer.json()
    assert error["code"] == "invalid_input"
    assert error["message"].startswith(f"{name} must be a whole number in plain digits"), error
    assert stored(mem, with_audit=False) == before
    mem.close()


def test_plain_query_integers_are_still_read_and_range_checked(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    assert len(client.get("/v1/audit", params={"limit": "1"}, headers=AUTH).json()) == 1
    assert client.get("/v1/audit", params={"limit": "007"}, headers=AUTH).status_code == 200
    page = client.get("/v1/audit/page", params={"limit": "1", "before_seq": "2"}, headers=AUTH)
    assert [e["seq"] for e in page.json()["entries"]] == [1]
    negative = client.get("/v1/audit", params={"after_seq": "-1"}, headers=AUTH)
    assert negative.status_code == 422, negative.text  # the library's range check
    assert "after_seq must be a non-negative integer" in negative.json()["message"]
    mem.close()


@pytest.mark.parametrize("text", ["٣٣٣٣٣٣٣٣٣٣", "１７００００００００"])
def test_a_time_in_other_digits_is_not_read_as_epoch_seconds(tmp_path: Path, text: str) -> None:
    mem, ours, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    answer = client.get(f"/v1/memories/{ours}", params={"as_of": text}, headers=AUTH)
    assert answer.status_code == 422, answer.text
    assert "is not an ISO-8601 timestamp" in answer.json()["message"]
    mem.close()


@pytest.mark.parametrize("text", ["1_000", "+100", "1e3", "100.0"])
def test_a_token_budget_header_not_in_plain_digits_is_refused(tmp_path: Path, text: str) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    answer = client.post(
        "/v1/recall", json={"query": "tea"}, headers={**AUTH, "X-Token-Budget": text}
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["message"].startswith("x-token-budget must be a whole number")
    fine = client.post(
        "/v1/recall", json={"query": "tea"}, headers={**AUTH, "X-Token-Budget": "100"}
    )
    assert fine.status_code == 200, fine.text
    mem.close()


@pytest.mark.parametrize("query", ["per=1_0", "page=%2B1", "page=2.0", "per=%D9%A3"])
def test_the_boards_page_numbers_are_plain_digits(tmp_path: Path, query: str) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    answer = client.get(f"/ui/memories?{query}", headers=AUTH)
    assert answer.status_code == 422, answer.text[:200]
    assert "must be a whole number from" in answer.text
    assert client.get("/ui/memories?per=10&page=1", headers=AUTH).status_code == 200
    mem.close()


def test_a_float_parameter_reads_plain_decimals_only() -> None:
    def weigh(weight: float, count: int | None = None) -> None: ...

    assert query_arguments(weigh, {"weight": "0.5", "count": "3"}) == {"weight": 0.5, "count": 3}
    for text in ("nan", "inf", "-inf", "1_0.5", "1e3", ".5", "+2"):
        with pytest.raises(ValidationError, match="weight must be a number in plain digits"):
            query_arguments(weigh, {"weight": text})
    with pytest.raises(ValidationError, match="count must be a whole number"):
        query_arguments(weigh, {"weight": "1", "count": ["2", "3_0"]})


def test_the_readers_themselves() -> None:
    assert int_from_text("-12", "n") == -12 and number_from_text("2.50", "n") == 2.5
    assert number_from_text("4", "n") == 4 and isinstance(number_from_text("4", "n"), int)
    with pytest.raises(ValidationError, match="too many digits"):
        int_from_text("9" * 5000, "n")
    with pytest.raises(ValidationError, match="too large for a 64-bit float"):
        number_from_text("9" * 400 + ".0", "n")


@pytest.mark.parametrize("text", ["1_000", "+5", "٣"])
def test_the_token_budget_variable_is_plain_digits(text: str) -> None:
    with pytest.raises(ValidationError, match="ATTESTOR_TOKEN_BUDGET must be a whole number"):
        identity_settings({"ATTESTOR_TOKEN_BUDGET": text})
    assert identity_settings({"ATTESTOR_TOKEN_BUDGET": "500"})["token_budget"] == 500


@pytest.mark.parametrize(
    "argv",
    [
        ["api", "--port", "8_080"],
        ["api", "--workers", "+2"],
        ["api", "--timeout", "1_0"],
        ["api", "--timeout", "1e1"],
        ["mcp", "--grace", "1_0"],
    ],
)
def test_server_flags_read_plain_digits(argv: list[str]) -> None:
    with pytest.raises(UsageError, match=f"argument {argv[-2]}"):
        build_parser().parse_args(argv)
    plain = build_parser().parse_args([*argv[:-1], "10"])
    assert isinstance(plain, argparse.Namespace)


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--limit", "1_0"],
        ["list", "--offset", "+5"],
        ["recall", "tea", "--budget", "1e3"],
        ["search", "tea", "--limit", "٣"],
        ["audit", "--after", "1_0"],
        ["add", "a fact", "--confidence", "nan"],
        ["add", "a fact", "--confidence", "1_0.5"],
    ],
)
def test_command_numbers_read_plain_digits(argv: list[str]) -> None:
    with pytest.raises(UsageError, match=f"argument {argv[-2]}"):
        build_parser().parse_args(argv)
    plain = build_parser().parse_args([*argv[:-1], "1"])
    assert getattr(plain, argv[-2].removeprefix("--").replace("-", "_")) == 1
