"""Replay of recorded LLM answers: a real provider for tests and offline runs.

A script is a list of steps consumed in order, one per attempt. A step is the
answer text, or a mapping ``{"response": text}``, ``{"error": "timeout"}``,
``{"error": "unavailable"}`` or ``{"error": "refused"}``; an optional
``"expect"`` substring must occur in the prompt, so a script that drifts from
the prompts it was recorded against fails loudly instead of answering the
wrong question. ``RecordingProvider`` wraps a live provider and saves such a
script.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from attestor_arango.errors import ValidationError
from attestor_arango.llm.base import (
    LLMError,
    LLMProvider,
    LLMTimeoutError,
    LLMUnavailableError,
    RetryPolicy,
    with_retries,
)

Step = str | dict[str, Any]
_ERRORS: dict[str, type[LLMError]] = {
    "timeout": LLMTimeoutError,
    "unavailable": LLMUnavailableError,
    "refused": LLMError,
}


class ScriptedProvider:
    """Answers from a script; every prompt it was given is kept in ``calls``."""

    name = "scripted"

    def __init__(
        self,
        steps: Sequence[Step],
        *,
        model: str = "scripted",
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        for step in steps:
            _check_step(step)
        self.model = model
        self.retry = retry or RetryPolicy(attempts=1)
        self._steps = list(steps)
        self._next = 0
        self._sleep = sleep
        self.calls: list[dict[str, Any]] = []

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> ScriptedProvider:
        try:
            steps = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValidationError(f"cannot read LLM script {path}: {exc}") from exc
        if not isinstance(steps, list):
            raise ValidationError(f"LLM script {path} must hold a JSON list of steps")
        return cls(steps, **kwargs)

    @property
    def remaining(self) -> int:
        return len(self._steps) - self._next

    def complete(
        self,
        prompt: str,
        *,
        temperature: float = 0.0,
        system: str | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> str:
        def once() -> str:
            self.calls.append(
                {
                    "prompt": prompt,
                    "system": system,
                    "temperature": temperature,
                    "json_mode": json_mode,
                },
            )
            if self._next >= len(self._steps):
                raise LLMError(
                    f"LLM script exhausted after {len(self._steps)} steps; record more answers",
                )
            step = self._steps[self._next]
            self._next += 1
            if isinstance(step, str):
                return step
            expect = step.get("expect")
            if expect and expect not in prompt:
                raise LLMError(
                    f"LLM script step {self._next} expected a prompt containing {expect!r}; "
                    "the prompts changed, so re-record the script",
                )
            if "error" in step:
                raise _ERRORS[step["error"]](
                    str(step.get("message") or f"scripted {step['error']}"),
                )
            return str(step["response"])

        return with_retries(once, self.retry, sleep=self._sleep)


def _check_step(step: object) -> None:
    if isinstance(step, str):
        return
    if not isinstance(step, dict):
        raise ValidationError(f"LLM script step {step!r} must be a string or a mapping")
    if "error" in step:
        if step["error"] not in _ERRORS:
            raise ValidationError(
                f"LLM script error kind {step['error']!r}: use one of {sorted(_ERRORS)}",
            )
    elif not isinstance(step.get("response"), str):
        raise ValidationError("an LLM script step needs a 'response' string or an 'error' kind")


class RecordingProvider:
    """Wraps a live provider and keeps every answer, to be saved as a script."""

    def __init__(self, inner: LLMProvider) -> None:
        self.inner = inner
        self.name = f"recording:{inner.name}"
        self.model = inner.model
        self.steps: list[dict[str, Any]] = []

    def complete(
        self,
        prompt: str,
        *,
        temperature: float = 0.0,
        system: str | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> str:
        try:
            text = self.inner.complete(
                prompt,
                temperature=temperature,
                system=system,
                max_tokens=max_tokens,
                json_mode=json_mode,
            )
        except LLMTimeoutError:
            self.steps.append({"error": "timeout"})
            raise
        self.steps.append({"response": text})
        return text

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.steps, indent=2), encoding="utf-8")
