"""Agent-harness hooks: session start, post tool use, stop. JSON on stdin, JSON on stdout.

Shaped after the hook events of coding agents such as Claude Code (fields
``session_id``, ``cwd``, ``tool_name``, ``tool_input``, ``transcript_path``),
but any harness can call them: ``attestor-arango hook session-start < event.json``.

- session start: recall what is known about the working directory's project and
  hand it back as ``additionalContext``;
- post tool use: keep a short, content-free note of useful artefacts (files
  written or edited, build/test/install commands run, without the secrets a command
  line names: ``scrub_command``), one current note per file;
- stop: write a session summary, and ingest the last exchange of the transcript
  through ``ingest_round`` (speaker-locked, so nothing the agent said is stored as
  the user's); both are stored or, when either is refused, neither.

A hook never takes the harness down: bad input exits 1 with a message on stderr
(a non-blocking error for the harness), and nothing here ever exits 2 (block).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PureWindowsPath
from typing import IO, TYPE_CHECKING, Any

from attestor_arango.context import AgentContext, Permission
from attestor_arango.errors import AttestorError, ValidationError, without_credentials
from attestor_arango.governance.access import require
from attestor_arango.ingest.model import Turn
from attestor_arango.jsontext import load_json
from attestor_arango.validation import MAX_LABEL, check_plain, label_form

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

CONTEXT_BUDGET = 1500  # tokens of memories injected at session start
MAX_TRANSCRIPT_BYTES = 50_000_000
MAX_EVENT_CHARS = 64_000_000  # a Write's tool_input carries the whole file written
_WRITE_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}
_USEFUL_COMMAND = re.compile(
    r"^\s*(?:pytest|python -m pytest|make|cargo (?:build|test)|go (?:build|test)|npm (?:run|test|"
    r"install|ci)|pnpm|yarn|pip install|uv (?:pip|sync|add)|poetry|git (?:commit|tag|merge)|"
    r"docker (?:build|compose)|terraform (?:apply|plan)|alembic|\.venv/bin/\w+)",
)

# what a command line may carry that a note must not keep (the notes are recalled into
# every later session and read by every agent of the tenant): a value assigned to a name
# like a secret's (NPM_TOKEN=..., db_password=...), and the value after such a flag
_SECRET_WORDS = ("token", "passw", "secret", "apikey", "api_key", "api-key", "credential")
# words that mark a name only as a whole word of it (STRIPE_KEY, DB_PASS, --auth-header,
# accessKey), not inside a longer one (--keyword, PASSAGE_DIR, --author)
_SECRET_NAME_WORDS = frozenset({"key", "keys", "pass", "pwd", "pw", "auth", "private", "pat"})
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")  # SSH_PRIVATE_KEY, accessKey
SCRUB_LIMIT = 4096  # characters of a command scrubbed: a note keeps its first 300


def _names_secret(name: str) -> bool:
    """True when ``name`` (a flag or the name of an assignment) looks like a secret's: it
    holds one of ``_SECRET_WORDS`` anywhere, or one of ``_SECRET_NAME_WORDS`` as a word."""
    low = name.lower()
    if any(word in low for word in _SECRET_WORDS):
        return True
    return any(w.lower() in _SECRET_NAME_WORDS for w in _NAME_WORD.findall(name))


def _assigned_at(word: str) -> int | None:
    """Where the value of the first ``name=value`` in ``word`` naming a secret starts."""
    start = 0
    while (eq := word.find("=", start)) != -1:
        if eq + 1 < len(word) and _names_secret(word[start:eq]):
            return eq + 1
        start = eq + 1
    return None


def scrub_command(command: str) -> str:
    """``command`` (words one space apart) without the secrets it names: URL credentials,
    values of names and flags that look like a secret's, each replaced by ``***``. One
    pass over its words, whatever they hold."""
    words = without_credentials(command).split(" ")
    hide = 0  # words still to hide after a secret's flag or setting
    for i, word in enumerate(words):
        if hide and word and not word.startswith("-"):
            words[i], hide = "***", hide - 1
            continue
        hide = 0
        at = _assigned_at(word)
        if at is not None:
            words[i] = word[:at] + "***"
        elif word.lower().startswith("http-basic."):  # poetry's: a user, then a password
            hide = 2
        elif (word.startswith("-") and _names_secret(word)) or _is_setting(word):
            hide = 1
    return " ".join(words)


def _is_setting(word: str) -> bool:
    """A bare word naming a setting whose value follows it (``poetry config pypi-token.pypi
    <token>``, ``yarn config set npmAuthToken <token>``, ``npm config set
    //registry/:_authToken <token>``): one of ``_SECRET_WORDS`` in it (a short word such
    as "key" marks a flag's name only: ``-k key_rotation`` is a value), and not a file's
    path (``tests/test_token.py``)."""
    last = word.rsplit("/", 1)
    low = word.lower()
    setting = len(last) == 1 or "." not in last[1]
    return setting and "=" not in word and any(w in low for w in _SECRET_WORDS)


_TEXT_FIELDS = ("session_id", "cwd", "tool_name", "transcript_path")
_TOOL_TEXT_FIELDS = ("file_path", "notebook_path", "command")
MAX_PATH_CHARS = 4096  # Linux's PATH_MAX: no longer path names a file
MAX_SUMMARY_FILES = 100  # paths a session summary's metadata lists: 400 kB at most
EXIT_CODES = (-(2**31), 2**32 - 1)  # a signed POSIX status up to an unsigned Windows one


def _kind(value: object) -> str:
    """The JSON type of ``value``, as a message names it."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _expect(data: dict[str, Any], name: str, kind: str, prefix: str = "") -> None:
    """Refuses ``data[name]`` unless it is null (absent) or of the JSON type ``kind``."""
    value = data.get(name)
    if value is not None and _kind(value) != kind:
        shown = "true or false" if kind == "a boolean" else kind
        raise ValidationError(
            f"the hook event's {prefix}{name} must be {shown} or null, got {_kind(value)}"
        )


def check_plain_field(value: str, name: str) -> None:
    """Refuses a control character (NUL, a newline, an escape sequence), a bidirectional
    override or a lone surrogate in the event's field ``name``: a note's category and
    entity are names (``validation.check_label``), and an error about a "category" the
    caller never sent would not say which field to fix."""
    check_plain(value, f"the hook event's {name}")


def _check_path(data: dict[str, Any], name: str, prefix: str = "") -> None:
    value = data.get(name)
    if value is None:
        return
    if len(value) > MAX_PATH_CHARS:
        raise ValidationError(
            f"the hook event's {prefix}{name} is longer than {MAX_PATH_CHARS} characters"
        )
    check_plain_field(value, prefix + name)


def check_event(payload: dict[str, Any]) -> None:
    """Refuses a field the hooks read that has the wrong JSON type (a ``session_id`` that is
    a number, a ``tool_input`` that is a list, ...) before anything is read or stored: a
    value silently read as something else would file a note under the wrong session or
    project. Fields no hook reads are left alone. Raises ``ValidationError`` naming it."""
    for name in _TEXT_FIELDS:
        _expect(payload, name, "a string")
    _expect(payload, "stop_hook_active", "a boolean")
    _expect(payload, "tool_input", "an object")
    given = payload.get("tool_input") or {}
    for name in _TOOL_TEXT_FIELDS:
        _expect(given, name, "a string", "tool_input.")
    for name in ("cwd", "transcript_path"):
        _check_path(payload, name)
    for name in ("file_path", "notebook_path"):
        _check_path(given, name, "tool_input.")
    if len(project_of(payload)) > MAX_LABEL:  # the notes' entity
        raise ValidationError(
            f"the hook event's cwd ends in a directory name longer than {MAX_LABEL} characters"
        )
    response = payload.get("tool_response")  # its shape is the tool's; only exit_code is read
    code = response.get("exit_code") if isinstance(response, dict) else None
    low, high = EXIT_CODES
    if code is not None and (type(code) is not int or not low <= code <= high):
        raise ValidationError(
            f"the hook event's tool_response.exit_code must be a whole number from {low} to "
            f"{high} or null, got {_kind(code) if type(code) is not int else code}"
        )


_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")  # C:\ or C:/, or \\server\share


def project_of(payload: dict[str, Any]) -> str:
    """The project a hook's notes are about: the last folder of ``cwd`` ("workspace" for
    none). A Windows path (a drive or a share: a harness on Windows sends one) is split
    at backslashes too, so ``C:\\src\\app`` is project ``app``, not the whole path."""
    cwd = str(payload.get("cwd") or "")
    if _WINDOWS_PATH.match(cwd):
        return PureWindowsPath(cwd.rstrip("/\\")).name or "workspace"
    return Path(cwd.rstrip("/")).name or "workspace"


def label(prefix: str, text: str) -> str:
    """``prefix + text`` as a category; one longer than a name may be (``MAX_LABEL``) keeps
    the end of ``text`` (a path's file name) and a digest of all of it, so two long paths
    still get two categories (one current note each)."""
    text = label_form(text)  # as check_label stores it
    if len(prefix + text) <= MAX_LABEL:
        return prefix + text
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    keep = MAX_LABEL - len(prefix) - len(digest) - 2
    return f"{prefix}\u2026{text[-keep:]}#{digest}"


def _context(mem: AgentMemory, payload: dict[str, Any]) -> AgentContext:
    session = payload.get("session_id")
    ctx = mem.default_context
    if isinstance(session, str) and session:
        ctx = replace(ctx, session_id=session)
    return ctx


def session_start(mem: AgentMemory, payload: dict[str, Any]) -> dict[str, Any]:
    ctx = _context(mem, payload)
    project = project_of(payload)
    query = f"{project} project {payload.get('cwd') or ''}".strip()
    response = mem.recall(query, token_budget=CONTEXT_BUDGET, context=ctx)
    lines = [f"- {r.memory.content}" for r in response.results]
    text = f"Relevant memories for {project}:\n" + "\n".join(lines) if lines else ""
    return {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text},
        "memory_ids": [r.memory.id for r in response.results],
    }


def post_tool_use(mem: AgentMemory, payload: dict[str, Any]) -> dict[str, Any]:
    ctx = _context(mem, payload)
    project = project_of(payload)
    tool = str(payload.get("tool_name") or "")
    given = payload.get("tool_input")
    data: dict[str, Any] = given if isinstance(given, dict) else {}
    if tool in _WRITE_TOOLS:
        path = str(data.get("file_path") or data.get("notebook_path") or "")
        if not path:
            return {"captured": False, "reason": f"{tool} without a file_path"}
        verb = "Created or rewrote" if tool == "Write" else "Edited"
        note = f"{verb} {path} in project {project}"
        m = mem.add(
            note,
            entity=project,
            category=label("file:", path),
            tags=["hook", f"tool:{tool}"],
            metadata={"file_path": path, "tool": tool},
            context=ctx,
        )
        return {"captured": True, "memory_id": m.id}
    if tool == "Bash":
        words = " ".join(str(data.get("command") or "").split())
        command = scrub_command(words[:SCRUB_LIMIT])[:300]
        if not command or not _USEFUL_COMMAND.match(command):
            return {"captured": False, "reason": "not a build, test or install command"}
        check_plain_field(command, "tool_input.command")
        result = payload.get("tool_response")
        code = result.get("exit_code") if isinstance(result, dict) else None
        status = "" if code is None else f" (exit {code})"
        m = mem.add(
            f"Ran `{command}` in project {project}{status}",
            entity=project,
            category=label("command:", command.split()[0]),
            tags=["hook", "tool:Bash"],
            metadata={"command": command, "exit_code": code},
            context=ctx,
        )
        return {"captured": True, "memory_id": m.id}
    return {"captured": False, "reason": f"{tool or 'unknown tool'} is not captured"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text") or "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def last_exchange(path: str | None) -> tuple[str, str]:
    """The last user text and the assistant text after it, from a JSONL transcript."""
    if not path:
        return "", ""
    file = Path(path)
    try:
        if not file.is_file() or file.stat().st_size > MAX_TRANSCRIPT_BYTES:
            return "", ""  # none (yet), or not a transcript: no exchange to keep
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:  # a name too long, no permission, ...: say so, never a traceback
        reason = exc.strerror or type(exc).__name__
        raise ValidationError(
            f"the hook event's transcript_path cannot be read: {reason}"
        ) from None
    user, assistant = "", ""
    for line in text.splitlines():
        try:
            entry = load_json(line, "a transcript line")
        except ValidationError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict):
            continue
        role = message.get("role") or entry.get("type")
        text = _text(message.get("content")).strip()
        if role == "user" and text:
            user, assistant = text, ""
        elif role == "assistant" and text:
            assistant = f"{assistant} {text}".strip()
    return user, assistant


def stop(mem: AgentMemory, payload: dict[str, Any]) -> dict[str, Any]:
    ctx = _context(mem, payload)
    if payload.get("stop_hook_active"):
        return {"summary_id": None, "reason": "stop hook already active"}
    project = project_of(payload)
    session = ctx.session_id or "unknown"
    notes = [
        m for m in mem.list(entity=project, tags=["hook"], limit=1000, context=ctx)
        if m.provenance.session_id == ctx.session_id
    ]  # fmt: skip
    files = sorted({str(m.metadata.get("file_path")) for m in notes if "file_path" in m.metadata})
    commands = [str(m.metadata["command"]) for m in notes if "command" in m.metadata]
    user, assistant = last_exchange(payload.get("transcript_path"))
    shown = [path if len(path) <= 200 else f"\u2026{path[-199:]}" for path in files[:10]]
    summary = (
        f"Session {session} in project {project}: {len(files)} files changed"
        + (f" ({', '.join(shown)})" if files else "")
        + f", {len(commands)} commands run"
        + (f"; last request: {user[:200]}" if user else "")
    )[: mem.config.max_content_chars]  # long paths (up to 4096 characters) fit, as notes did
    # everything refusable before any write: the turn (its text, length), then the
    # permission, outside the transaction so a refusal stays audited as evidence
    turn = None
    if user or assistant:
        turn = Turn.parse({"user": user, "assistant": assistant, "session_id": ctx.session_id})
    require(mem.auditor, ctx, Permission.WRITE, "add")
    # the round and the summary commit together: a round refused part-way (the quota spent,
    # too many facts, a failed model) or a summary refused after it leaves neither behind
    with mem.writer.together(ctx):
        ingested = None if turn is None else mem.ingest_round(turn, context=ctx).to_dict()
        m = mem.add(
            summary,
            entity=project,
            category=f"session:{session}",
            tags=["hook", "session-summary"],
            metadata={"files": files[:MAX_SUMMARY_FILES], "commands": commands[:50]},
            context=ctx,
        )
    return {"summary_id": m.id, "ingested": ingested}


HANDLERS: dict[str, Callable[[AgentMemory, dict[str, Any]], dict[str, Any]]] = {
    "session-start": session_start,
    "post-tool-use": post_tool_use,
    "stop": stop,
}


def run_hook(event: str, mem: AgentMemory, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Reads one JSON event, runs its handler, writes one JSON answer; returns the exit code."""
    try:
        raw = stdin.read(MAX_EVENT_CHARS + 1)  # never more: a hook's memory stays bounded
        if len(raw) > MAX_EVENT_CHARS:
            raise ValidationError(
                f"the hook event is longer than {MAX_EVENT_CHARS} characters; send one event"
            )
        raw = raw.removeprefix("\ufeff")  # a UTF-8 byte order mark (RFC 8259: may be ignored)
        payload = load_json(raw, "the hook event") if raw.strip() else {}
        if not isinstance(payload, dict):
            raise ValidationError("the hook event must be a JSON object")
        if event not in HANDLERS:
            raise ValidationError(f"unknown hook {event!r}; use one of {sorted(HANDLERS)}")
        check_event(payload)
        answer = HANDLERS[event](mem, payload)
    except (ValueError, AttestorError) as exc:
        message = exc.message if isinstance(exc, AttestorError) else str(exc)
        stderr.write(f"attestor-arango hook {event}: {message}\n")
        return 1
    stdout.write(json.dumps(answer, default=str) + "\n")
    return 0


def register(sub: Any) -> None:
    """Adds ``hook {session-start,post-tool-use,stop}`` to the CLI's subparsers."""
    from attestor_arango.interfaces.cli.commands import common_options, open_memory

    p = sub.add_parser(
        "hook",
        parents=[common_options()],
        help="agent-harness hooks: read one JSON event on stdin, answer JSON on stdout",
    )
    p.add_argument("event", choices=sorted(HANDLERS))

    def run(args: argparse.Namespace) -> int:
        mem = open_memory(args)
        try:
            return run_hook(args.event, mem, sys.stdin, sys.stdout, sys.stderr)
        finally:
            mem.close()

    p.set_defaults(func=run)
