"""The LLM provider protocol, its errors, and retry with backoff.

An LLM is optional everywhere in this package: ingest and consolidation use
one when configured and fall back to the rule-based path otherwise. Providers
are deliberately narrow (one prompt in, one text out, temperature 0 by
default) so a scripted provider can stand in for a real one in tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

from attestor_arango.errors import AttestorError, ValidationError


class LLMError(AttestorError):
    """The LLM endpoint failed or answered something unusable."""

    code = "llm_error"
    http_status = 502


class LLMTimeoutError(LLMError):
    """No answer within the provider's timeout (after every retry)."""

    code = "llm_timeout"
    http_status = 504


class LLMUnavailableError(LLMError):
    """The endpoint could not be reached or refused the request."""

    code = "llm_unavailable"
    http_status = 503


@runtime_checkable
class LLMProvider(Protocol):
    """One prompt in, one completion out.

    ``temperature`` defaults to 0 so extraction and resolution are as
    repeatable as the model allows; ``json_mode`` asks the endpoint for a JSON
    object where it supports that (callers still parse defensively).
    """

    name: str
    model: str

    def complete(
        self,
        prompt: str,
        *,
        temperature: float = 0.0,
        system: str | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> str: ...


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff: ``base_delay * multiplier**n`` capped at ``max_delay``."""

    attempts: int = 3
    base_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 8.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValidationError("retry attempts must be >= 1")
        if self.base_delay < 0 or self.max_delay < 0 or self.multiplier < 1:
            raise ValidationError("retry delays must be >= 0 and the multiplier >= 1")

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (0-based)."""
        return float(min(self.max_delay, self.base_delay * self.multiplier**attempt))


T = TypeVar("T")


def with_retries(
    call: Callable[[], T],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Runs ``call``; retries on timeouts and unavailability, never on other errors.

    A malformed answer is not retried here: the same prompt at temperature 0
    tends to give the same answer, so the caller's fallback is the better cure.
    """
    last: LLMError | None = None
    for attempt in range(policy.attempts):
        try:
            return call()
        except (LLMTimeoutError, LLMUnavailableError) as exc:
            last = exc
            if attempt + 1 < policy.attempts:
                hint = exc.details.get("retry_after")  # a server's Retry-After, in seconds
                wait = policy.delay(attempt)
                if isinstance(hint, int | float) and hint > wait:
                    wait = min(float(hint), policy.max_delay)
                sleep(wait)
    if last is None:  # policy.attempts < 1: the loop never ran
        raise LLMUnavailableError("the retry policy allows no attempt; set attempts >= 1")
    last.details["attempts"] = policy.attempts
    raise last
