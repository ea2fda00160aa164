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
import math
from collections.abc import Sequence
from typing import Any, NoReturn

from attestor_arango.clock import time_from_text
from attestor_arango.errors import ValidationError
from attestor_arango.validation import int_from_text, number_from_text


class UsageError(ValidationError):
    """A command line argparse refuses; ``details`` hold the usage of the (sub)command."""

    def __init__(self, prog: str, reason: str, usage: str) -> None:
        super().__init__(f"{prog}: {reason}", usage=usage)
        self.prog = prog
        self.reason = reason


class CliParser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors are raised (``UsageError``) instead of printed.

    ``main`` reports one as every other error: a JSON object on stderr with ``--json``,
    argparse's own usage and message otherwise; exit code 2 either way. Subcommand
    parsers are of this class too (argparse makes them of their parent's class).
    """

    def error(self, message: str) -> NoReturn:
        raise UsageError(self.prog, message, self.format_usage().strip())


def wants_json(argv: Sequence[str]) -> bool:
    """Whether a command line asks for ``--json`` (or an abbreviation argparse accepts), read
    before parsing: a line argparse refuses must still be answered in the form asked for."""
    for token in argv:
        if token == "--":
            return False
        if len(token) >= 4 and "--json".startswith(token):
            return True
    return False


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
    return time_from_text(text)


def anchor_arg(text: str) -> tuple[int, str]:
    """``SEQ:HASH``, the last_seq and last_hash of an earlier ``audit --verify`` report."""
    seq, _, digest = text.partition(":")
    hex_digest = len(digest) == 64 and not digest.strip("0123456789abcdef")
    if seq.isascii() and seq.isdigit() and int(seq) >= 1 and hex_digest:
        return int(seq), digest
    raise argparse.ArgumentTypeError(
        f"{text!r} is not an anchor; use SEQ:HASH, the last_seq and last_hash of an earlier "
        "`audit --verify` report (a seq of at least 1, a hash of 64 lowercase hex digits)"
    )


# the levels uvicorn (and Python's logging) know; argparse refuses any other word
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


def log_level_arg(text: str) -> str:
    """A server log level, in any case (``INFO`` and ``info`` alike)."""
    level = text.strip().lower()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a log level; use one of {LOG_LEVELS}")
    return level


def port_arg(text: str) -> int:
    """A TCP port to bind, 0-65535 (0: any free port); argparse exits 2 with the reason."""
    value = _int_arg(text)
    if not 0 <= value <= 65_535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (0-65535)")
    return value


def positive_int(text: str) -> int:
    """A count or size that must be at least 1 (workers, bytes, connections)."""
    value = _int_arg(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number of at least 1")
    return value


def non_negative_int(text: str) -> int:
    """Seconds that may be 0 (a graceful shutdown's wait)."""
    value = _int_arg(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number of at least 0")
    return value


def positive_seconds(text: str) -> float:
    """A finite, positive number of seconds in plain digits (nan, inf and 0 would disable a
    timeout)."""
    try:
        value = float(number_from_text(text.strip(), "seconds"))
    except ValidationError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number of seconds above 0")
    return value


def whole_number(text: str) -> int:
    """A count, limit or sequence number in plain digits (``1_0``, ``+1`` and ``1e3`` are
    refused, as in a query string); its range is the library's to check."""
    return _int_arg(text)


def number_arg(text: str) -> float:
    """A number in plain digits with an optional fraction (``0.8``); no ``nan`` or ``inf``."""
    try:
        return float(number_from_text(text.strip(), "the value"))
    except ValidationError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _int_arg(text: str) -> int:
    try:
        return int_from_text(text.strip(), "the value")
    except ValidationError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


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
