"""Configuration: environment, then a YAML file, then arguments in code (later wins).

With nothing configured the library works: embedded backend in the user's data
directory, SOLO identity, the best embedder available offline. Secrets are
``SecretStr`` so they never print or serialise by accident.

This module is the package's one reader of the process environment
(``environment()``) and the one place that knows the variables' names: the
settings (``_ENV``), the CLI's identity (``IDENTITY_ENV``, read by
``AgentContext.from_env``), the API key file (``API_KEYS_ENV``) and which of them
are secret (``SECRET_ENV``, never printed by ``mcp --print-config``).
``tests/test_architecture.py`` fails on an environment read anywhere else.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic import ValidationError as PydanticValidationError

from attestor_arango.errors import ValidationError
from attestor_arango.jsontext import json_or_error
from attestor_arango.validation import flag_from_text, int_from_text

DB_FILENAME = "memory.db"
# the files beside the database named by its name and one of these (Config.store_files)
RECALL_KEY_END = ".recall-key"  # the key of the store's recall ids (core/recall_key.py)
STORE_FILE_ENDS = (
    *("", "-wal", "-shm", "-journal", ".idx"),
    *(".exports", ".reembed", ".reembed.paths", ".traces", RECALL_KEY_END),
)
CONFIG_FILENAME = "config.yaml"
TRACE_FILENAME = "recall-trace.jsonl"
TRACE_MAX_BYTES = 64 * 1024 * 1024  # one trace file's bound (``trace.max_bytes``)
TRACE_KEEP = 3  # rotated trace files kept beside it (``trace.keep``)
DOCS = "docs/configuration.md"


class ArangoSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = "http://127.0.0.1:8529"
    database: str = "attestor"
    username: str = "root"
    password: SecretStr = SecretStr("")
    verify_tls: bool | str = True  # True, False, or a CA bundle path
    vector_min_docs: int = 1000  # below this a tenant is served by exact cosine


class TraceSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    path: str | None = None
    include_content: bool = False
    # each tenant's events go to its own file (``<path>.tenants/``); a file past max_bytes is
    # rotated (``.1`` ... ``.<keep>``, the oldest dropped): at most (keep + 1) * max_bytes on
    # disk a tenant, however long the service runs
    max_bytes: int = Field(default=TRACE_MAX_BYTES, gt=0)
    keep: int = Field(default=TRACE_KEEP, ge=0)

    @model_validator(mode="after")
    def _default_path(self) -> TraceSettings:
        """Tracing on without a path writes beside the default store (never fails)."""
        if self.enabled and not self.path:
            self.path = self.written_path()
        return self

    def written_path(self) -> str:
        """The file tracing writes to when on: ``path``, else the default beside the default
        store. With tracing off it names where events written while it was on may still
        be, which an erasure must clean all the same."""
        return self.path or str(default_data_dir() / TRACE_FILENAME)


class SigningSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    key_path: str | None = None


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["embedded", "arangodb"] = "embedded"
    path: str | None = None  # embedded: the SQLite file, or a directory to hold memory.db
    # embedded text lane: "memory" (BM25 over exactly the view; holds each tenant's
    # words in memory once it is read) or "fts5" (no memory cost; see store/embedded/fts.py)
    text_index: Literal["memory", "fts5"] = "memory"
    # embedded: rows each in-memory cache (vectors, text) may hold over all tenants;
    # the least recently read tenants are dropped past it (loaded again when read)
    cache_rows: int = Field(default=2_000_000, gt=0)
    embedder: Literal["auto", "hashing", "ollama", "openai", "local"] = "auto"
    embedder_model: str | None = None
    embedder_dimension: int | None = None
    local_model_path: str | None = None
    # the auto embedder asks a local Ollama first unless this is set
    skip_ollama_probe: bool = False
    # BLAS threads the CLI and the servers it starts set for their process (0: leave alone)
    blas_threads: int = Field(default=1, ge=0)
    ollama_url: str = "http://127.0.0.1:11434"
    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    max_content_chars: int = Field(default=32_000, gt=0)
    # turns one add_turns call stores (one transaction: the store's other writes wait for it)
    max_turns_per_call: int = Field(default=1_000, gt=0)
    arango: ArangoSettings = Field(default_factory=ArangoSettings)
    retrieval: dict[str, Any] = Field(default_factory=dict)
    trace: TraceSettings = Field(default_factory=TraceSettings)
    signing: SigningSettings = Field(default_factory=SigningSettings)
    retention: list[dict[str, Any]] = Field(default_factory=list)
    llm: dict[str, Any] = Field(default_factory=dict)

    def db_path(self) -> Path:
        """The embedded database file."""
        raw = self.path or environment().get(HOME_ENV) or str(default_data_dir())
        path = Path(raw).expanduser()
        if path.suffix in {".db", ".sqlite", ".sqlite3"}:
            return path
        return path / DB_FILENAME

    def store_files(self) -> frozenset[Path]:
        """The embedded store's files, resolved: the database, SQLite's journal files and
        what the package keeps beside it (vector index, export ledger, re-embedding staging
        and its list, their locks). A file a command writes or deletes must be none of
        them: ``export -o`` over the ``-shm`` file killed the process (SIGBUS), over the
        database destroyed the store. Empty for ArangoDB, whose data is not in files here."""
        if self.backend != "embedded":
            return frozenset()
        db = self.db_path().resolve()
        names = [db.name + end for end in STORE_FILE_ENDS]
        names += [f".{db.name}{end}.lock" for end in (".exports", ".reembed.paths", ".traces")]
        return frozenset(db.with_name(name) for name in names)


def environment(env: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """The process environment (``env`` in its place when given: tests pass their own).

    The package's only read of ``os.environ``, so every variable it honours is named
    in this module.
    """
    return os.environ if env is None else env


def default_data_dir() -> Path:
    base = environment().get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "attestor-arango"


def default_config_file(env: Mapping[str, str] | None = None) -> Path:
    """Where a config file is looked for when neither --config nor $ATTESTOR_CONFIG is set.

    Linux and the BSDs: ``$XDG_CONFIG_HOME/attestor-arango/config.yaml`` (default
    ``~/.config``); macOS: ``~/Library/Application Support/attestor-arango/config.yaml``;
    Windows: ``%APPDATA%\\attestor-arango\\config.yaml``.
    """
    environ = environment(env)
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    else:
        base = Path(environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "attestor-arango" / CONFIG_FILENAME


_SECRET_KEYS = frozenset({"password", "openai_api_key", "api_key"})


def _field_names(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys valid at ``loc`` (the parent of an unknown key)."""
    current: type[BaseModel] = model
    for part in loc:
        field = current.model_fields.get(str(part))
        annotation = getattr(field, "annotation", None)
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        current = annotation
    return sorted(current.model_fields)


def explain(exc: PydanticValidationError, source: str) -> str:
    """Pydantic's errors as one sentence per problem: the key, what is wrong, what is valid."""
    problems = []
    for error in exc.errors(include_url=False):
        loc = tuple(error.get("loc", ()))
        key = ".".join(str(p) for p in loc) or "(top level)"
        if error.get("type") == "extra_forbidden":
            valid = _field_names(Config, loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(f"unknown key {key!r}{hint} (valid here: {', '.join(valid)})")
            continue
        shown = "" if str(loc[-1]) in _SECRET_KEYS else f" (got {error.get('input')!r})"
        message = str(error.get("msg", "invalid value")).removeprefix("Input should be ")
        problems.append(f"{key}: should be {message}{shown}")
    return (
        f"invalid configuration in {source}: " + "; ".join(problems) + f". Every key is in {DOCS}"
    )


_ENV: dict[str, tuple[str, ...]] = {
    # Attestor's names first, so this project's own names (below) win when both are set
    "ATTESTOR_EMBEDDING_PROVIDER": ("embedder",),
    "ATTESTOR_EMBEDDING_MODEL": ("embedder_model",),
    "OPENAI_API_KEY": ("openai_api_key",),
    "ATTESTOR_BACKEND": ("backend",),
    "ATTESTOR_PATH": ("path",),
    "ATTESTOR_TEXT_INDEX": ("text_index",),
    "ATTESTOR_CACHE_ROWS": ("cache_rows",),
    "ATTESTOR_EMBEDDER": ("embedder",),
    "ATTESTOR_EMBEDDER_MODEL": ("embedder_model",),
    "ATTESTOR_LOCAL_MODEL_PATH": ("local_model_path",),
    "ATTESTOR_DISABLE_LOCAL_EMBED": ("skip_ollama_probe",),
    "ATTESTOR_BLAS_THREADS": ("blas_threads",),
    "ATTESTOR_OLLAMA_URL": ("ollama_url",),
    "ATTESTOR_OPENAI_BASE_URL": ("openai_base_url",),
    "ATTESTOR_OPENAI_API_KEY": ("openai_api_key",),
    "ATTESTOR_MAX_CONTENT_CHARS": ("max_content_chars",),
    "ATTESTOR_MAX_TURNS_PER_CALL": ("max_turns_per_call",),
    "ATTESTOR_TRACE": ("trace", "enabled"),
    "ATTESTOR_TRACE_PATH": ("trace", "path"),
    "ATTESTOR_TRACE_MAX_BYTES": ("trace", "max_bytes"),
    "ATTESTOR_SIGNING": ("signing", "enabled"),
    "ATTESTOR_SIGNING_KEY": ("signing", "key_path"),
    "ARANGO_URL": ("arango", "url"),
    "ARANGO_DB": ("arango", "database"),
    "ARANGO_USER": ("arango", "username"),
    "ARANGO_PASSWORD": ("arango", "password"),
}
CONFIG_FILE_ENV = "ATTESTOR_CONFIG"
HOME_ENV = "ATTESTOR_HOME"  # the embedded store's directory when ``path`` is not set
API_KEYS_ENV = "ATTESTOR_API_KEYS"  # the REST/MCP-HTTP key file, or the keys as inline JSON
# the CLI's identity: AgentContext field -> variable (AgentContext.from_env)
IDENTITY_ENV: dict[str, str] = {
    "agent_id": "ATTESTOR_AGENT_ID",
    "role": "ATTESTOR_ROLE",
    "tenant": "ATTESTOR_TENANT",
    "namespace": "ATTESTOR_NAMESPACE",
    "session_id": "ATTESTOR_SESSION_ID",
    "token_budget": "ATTESTOR_TOKEN_BUDGET",
    "read_only": "ATTESTOR_READ_ONLY",
}
# every variable the package reads (the platform's XDG_*/APPDATA aside)
ENV_NAMES: tuple[str, ...] = (
    *_ENV,
    CONFIG_FILE_ENV,
    HOME_ENV,
    API_KEYS_ENV,
    *IDENTITY_ENV.values(),
)
# secrets, and where a secret lives: never copied into printed configuration
SECRET_ENV = frozenset(
    {
        "OPENAI_API_KEY",
        "ATTESTOR_OPENAI_API_KEY",
        "ARANGO_PASSWORD",
        "ATTESTOR_SIGNING_KEY",
        API_KEYS_ENV,
    }
)


# the scope and permission variables: set to nothing they are refused, not read as unset
# (which means the shared default tenant, or the widest permissions)
_NOT_BLANK = frozenset({"tenant", "namespace", "role", "read_only"})


def identity_settings(
    env: Mapping[str, str] | None = None, given: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The AgentContext fields the environment sets (``IDENTITY_ENV``), parsed; the fields in
    ``given`` (set by the caller's flags) are not read.

    Raises ``ValidationError`` when ``ATTESTOR_TOKEN_BUDGET`` is not a whole number in
    plain digits, ``ATTESTOR_READ_ONLY`` is not a yes/no word (``flag_from_text``), or
    ``ATTESTOR_TENANT``, ``_NAMESPACE``, ``_ROLE`` or ``_READ_ONLY`` is set but empty: a
    tenant that came out blank (``ATTESTOR_TENANT=$CUSTOMER``) must fail, not use the
    shared default tenant; a blank role or read-only flag must not grant an orchestrator's
    writes.
    """
    environ = environment(env)
    values: dict[str, Any] = {}
    for key, name in IDENTITY_ENV.items():
        raw = environ.get(name)
        if key in given:
            continue
        if raw == "" and key in _NOT_BLANK:
            raise ValidationError(
                f"{name} is set but empty; give it a value, or unset it for the default",
                field=name,
            )
        if not raw:
            continue
        if key == "token_budget":
            values[key] = int_from_text(raw.strip(), name)
        elif key == "read_only":
            values[key] = flag_from_text(raw, name)
        else:
            values[key] = raw
    return values


def api_keys_setting(env: Mapping[str, str] | None = None) -> str:
    """``$ATTESTOR_API_KEYS`` stripped (a key file's path or inline JSON), "" when unset."""
    return (environment(env).get(API_KEYS_ENV) or "").strip()


def _set(tree: dict[str, Any], keys: tuple[str, ...], value: Any) -> None:
    for key in keys[:-1]:
        tree = tree.setdefault(key, {})
    tree[keys[-1]] = value


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a mapping that gives a key twice (PyYAML keeps the last:
    a config or an import file would mean whichever line a reader looked at)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # << brings keys a mapping may override
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                repeated = key in seen
            except TypeError:  # an unhashable key: the base class says why
                break
            if repeated:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {key!r} is given twice; give each key once",
                    key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep)

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        """A float, refusing ``.nan``, ``.inf`` and one too large for 64 bits (``1.0e+999``),
        as JSON input is (``jsontext.load_json``): no setting or stored value means one."""
        value: float = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{str(node.value)[:40]!r} is not a finite number; write a number",
                node.start_mark,
            )
        return value


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", _UniqueKeyLoader.construct_yaml_float)


def load_yaml(text: str, what: str = "the document") -> Any:
    """YAML (or JSON) text as data with ``yaml.safe_load``'s types, refusing a repeated key.

    JSON is read as JSON (``jsontext.load_json``): YAML 1.1 reads a number such as
    ``1e-05`` or ``1e+20`` (how JSON writers print floats, an export among them) as text,
    so an export read back as YAML changed its numbers. Text that opens like JSON but is
    not (YAML's flow style, ``{a: 1}``) is read as YAML. Raises ``yaml.YAMLError`` as
    ``safe_load`` does, and ``ValidationError`` (naming ``what``) for what ``load_json``
    refuses of JSON and for nesting too deep to read.
    """
    if text.lstrip().startswith(("{", "[")):
        try:
            return json_or_error(text, what)
        except json.JSONDecodeError:
            pass  # not JSON: YAML's flow style
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except RecursionError:
        raise ValidationError(f"{what} nests too deeply to read") from None


def read_document(path: Path, what: str, hint: str) -> Any:
    """A YAML (or JSON) file as loaded data: the config, API key, policy and import files.

    Raises ``ValidationError`` naming ``what`` and the path when the file is missing (with
    ``hint``, how to fix that), cannot be read, is not UTF-8 text or is not YAML/JSON, so
    no caller shows a traceback for a file it was pointed at.
    """
    if not path.is_file():
        raise ValidationError(f"{what} {path} does not exist or is not a file; {hint}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValidationError(
            f"{what} {path} is not UTF-8 text; save it as UTF-8 YAML or JSON"
        ) from None
    except OSError as exc:
        raise ValidationError(f"{what} {path} cannot be read: {exc.strerror or exc}") from None
    try:
        return load_yaml(text, f"{what} {path}")
    except yaml.YAMLError as exc:
        raise ValidationError(f"{what} {path} is not valid YAML/JSON: {exc}") from None


def load_config(
    file: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Config:
    """Environment < YAML file < ``overrides``.

    The file is ``file``, else ``$ATTESTOR_CONFIG``, else ``default_config_file()`` when
    it exists. Raises ``ValidationError`` naming each bad key (see docs/configuration.md).
    """
    environ = environment(env)
    layered: dict[str, Any] = {}
    for name, keys in _ENV.items():
        if environ.get(name):
            _set(layered, keys, environ[name])
    file = file or environ.get(CONFIG_FILE_ENV)
    if not file and default_config_file(environ).is_file():
        file = default_config_file(environ)
    if file:
        path = Path(file).expanduser()
        loaded = read_document(path, "config file", "create it or unset ATTESTOR_CONFIG") or {}
        if not isinstance(loaded, dict):
            raise ValidationError(f"config file {path} must hold a mapping at the top level")
        layered = _merge(layered, loaded)
    layered = _merge(layered, {k: v for k, v in overrides.items() if v is not None})
    try:
        return Config.model_validate(layered)
    except PydanticValidationError as exc:
        source = f"{file} and the environment" if file else "the environment and arguments"
        raise ValidationError(explain(exc, source)) from None
