"""Argument parsing shared by every CLI command: global flags, help with defaults, times.

``--json`` and ``--config`` are accepted before and after the subcommand
(``attestor-arango --json list`` and ``attestor-arango list --json`` mean the same):
the top-level parser holds the defaults, and each subcommand declares the same flags
with ``SUPPRESS`` so a subcommand that was not given them leaves the top-level value
alone (argparse otherwise lets the subparser's default overwrite it).
"""

from __future__ import annotations

import argparse
import contextlib
import re
from typing import Any

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class DefaultsFormatter(argparse.HelpFormatter):
    """Appends ``(default: X)`` to an option's help when it has a meaningful default."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        shown = default not in (None, False, argparse.SUPPRESS) and not isinstance(default, list)
        if shown and action.option_strings and "%(default)" not in text:
            text += " (default: %(default)s)"
        return text


def time_arg(text: str) -> str | int | float:
    """A CLI time: ISO-8601 (kept as text for the library to parse) or epoch seconds."""
    value = text.strip()
    if _NUMBER.fullmatch(value):
        return float(value) if "." in value else int(value)
    return value


def add_global_options(parser: argparse.ArgumentParser, *, inner: bool) -> None:
    """``--config`` and ``--json``; ``inner`` (a subcommand) leaves unset flags unset."""
    default_config: Any = argparse.SUPPRESS if inner else None
    default_json: Any = argparse.SUPPRESS if inner else False
    for flags, kwargs in (
        (
            ("--config",),
            {"default": default_config, "help": "YAML config file (see docs/configuration.md)"},
        ),
        (
            ("--json",),
            {
                "action": "store_true",
                "default": default_json,
                "help": "JSON on stdout (the default when stdout is not a terminal)",
            },
        ),
    ):
        with contextlib.suppress(argparse.ArgumentError):  # the subcommand declares it
            parser.add_argument(*flags, **kwargs)


def finish(sub: Any) -> None:
    """Every registered subcommand: global flags on its side too, defaults in its help."""
    for parser in set(sub.choices.values()):
        parser.formatter_class = DefaultsFormatter
        add_global_options(parser, inner=True)
