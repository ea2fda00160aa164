"""Versioned prompt files: ``prompts/<name>.v<version>.txt`` with ``$placeholders``.

Prompts live in files, not code, so a change to one is a reviewable diff with
its own version number, and recorded scripts can name the version they match.
``string.Template`` is used because the prompts contain literal JSON braces.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template

from attestor_arango.errors import ValidationError


@cache
def _load(filename: str) -> Template:
    try:
        text = (
            resources.files("attestor_arango")
            .joinpath("prompts", filename)
            .read_text(
                encoding="utf-8",
            )
        )
    except FileNotFoundError:
        raise ValidationError(f"no prompt file prompts/{filename}") from None
    return Template(text)


def render(name: str, version: int = 1, **values: str) -> str:
    """The prompt ``name`` at ``version`` with every ``$placeholder`` filled."""
    try:
        return _load(f"{name}.v{version}.txt").substitute(**values)
    except KeyError as exc:
        raise ValidationError(f"prompt {name}.v{version} needs a value for {exc}") from None
