"""The runtime: what every service needs, built once by ``AgentMemory`` and passed down.

Services (writes, retrieval, ingest, governance) receive this object instead of the
facade, so data flows down only: a service can be built and tested with a store, a
clock and an embedder, and never reaches back into ``AgentMemory``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, NoReturn, Protocol, TypeVar, overload

from attestor_arango.clock import Clock, SystemClock, TickClock, parse_past
from attestor_arango.config import Config, load_config
from attestor_arango.context import AgentContext
from attestor_arango.core.signing import Signer
from attestor_arango.embeddings.base import Embedder
from attestor_arango.errors import ValidationError
from attestor_arango.ids import IdSource, UUID7Source
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.scope import Scope, TemporalView, chosen_namespace
from attestor_arango.store.factory import open_store
from attestor_arango.store.protocol import Store
from attestor_arango.validation import TimeInput, check_path, check_window


@dataclass(frozen=True)
class Runtime:
    """The store, clock, id source, embedder, signer and configuration of one memory."""

    config: Config
    store: Store
    embedder: Embedder
    clock: TickClock
    ids: IdSource
    signer: Signer | None
    retrieval_config: RetrievalConfig

    def scope(self, ctx: AgentContext, namespace: str | None = None) -> Scope:
        """The context's tenant with ``namespace`` (None: the context's namespace); raises
        ``ValidationError`` for an empty or malformed one (``chosen_namespace``)."""
        return Scope(ctx.tenant, chosen_namespace(namespace, ctx.namespace))

    def view(
        self,
        as_of: TimeInput | None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        include_closed: bool = False,
    ) -> TemporalView:
        """The temporal view of a read; raises ``ValidationError`` for an ``as_of`` ahead of now.
        Returns once the store holds every write of a time at or before it (``settle``: a
        write another process has open is waited for), so a read at it is final."""
        now = self.clock.now_us()
        at = now if as_of is None else parse_past(as_of, now, field="as_of")
        view = TemporalView(
            as_of=at, window=check_window(time_window), include_closed=include_closed
        )
        settle = getattr(self.store, "settle", None)  # the embedded store's; see its doc
        if settle is not None:
            settle(at)
        return view


T = TypeVar("T")


class HoldsRuntime(Protocol):
    """An object built on a runtime (``AgentMemory``), able to rebuild on a replaced one."""

    runtime: Runtime

    def _set_runtime(self, runtime: Runtime) -> None: ...


class Part(Generic[T]):
    """A runtime part read as an attribute of its holder: ``mem.config`` is
    ``mem.runtime.config``. The runtime is frozen, so the attribute cannot be set."""

    name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, holder: None, owner: type) -> Part[T]: ...
    @overload
    def __get__(self, holder: HoldsRuntime, owner: type) -> T: ...
    def __get__(self, holder: HoldsRuntime | None, owner: type) -> Part[T] | T:
        if holder is None:
            return self
        value: T = getattr(holder.runtime, self.name)
        return value

    def __set__(self, holder: HoldsRuntime, value: NoReturn) -> None:
        raise AttributeError(f"{self.name} is part of the runtime and cannot be replaced")


class Replaceable(Part[T]):
    """A part a holder may swap (``mem.store = ...``): the holder rebuilds on a copy of
    its runtime with that one part replaced, so its auditor and writer see the new part."""

    def __set__(self, holder: HoldsRuntime, value: T) -> None:
        changes: dict[str, Any] = {self.name: value}
        holder._set_runtime(replace(holder.runtime, **changes))


def check_store_path(path: object) -> str | None:
    """``path`` as text: None, or a ``str``/``os.PathLike`` naming a file or folder. Raises
    ``ValidationError`` otherwise: ``str()`` made ``5`` or ``b"/x.db"`` a folder name in
    the working directory, and a blank path meant the configured store, not this one."""
    if path is None:
        return None
    return check_path(
        path,
        "path",
        "a store file or folder (non-empty text without NUL), or None for the configured store",
    )


def check_config_paths(config: Config) -> None:
    """Every file path ``config`` names (the store, the trace, the local model, the signing
    key) as text a file system takes; raises ``ValidationError`` naming the setting. A NUL
    or a lone surrogate in one raised a bare ``ValueError``/``UnicodeEncodeError`` from
    the first file call, or (the trace path) only at the first recall."""
    for what, value in (
        ("config.path", config.path),
        ("config.trace.path", config.trace.path),
        ("config.local_model_path", config.local_model_path),
        ("config.signing.key_path", config.signing.key_path),
    ):
        if value is not None:
            check_path(value, what, "a file or folder (non-empty text without NUL), or unset")


# each replaceable part: the protocol it must follow, and what its message says is accepted
PARTS: dict[str, tuple[type, str]] = {
    "store": (Store, "a Store instance (SQLiteStore, ArangoStore; a file or folder goes in path)"),
    "embedder": (
        Embedder,
        "an Embedder instance (HashingEmbedder(), ...; a provider by name goes in config.embedder)",
    ),
    "clock": (Clock, "a Clock instance (an object with now_us(), e.g. ManualClock())"),
    "ids": (IdSource, "an IdSource instance (an object with new_id(now_us), e.g. UUID7Source())"),
}


def check_part(name: str, value: object) -> None:
    """Raises ``ValidationError`` when ``value``, given for the part ``name``, is neither None
    nor an instance with every attribute of the part's protocol (``PARTS``). Attributes are
    looked up without being read (an embedder's ``dimension`` may ask a server, a lazy one
    would load its model); an object forwarding attributes by ``__getattr__`` is trusted.
    ``part or default`` used to take a falsy wrong value ({}, 0, False) as the default: the
    configured store opened, the default model loaded."""
    if value is None:
        return
    protocol, accepted = PARTS[name]
    if isinstance(value, type) or not all(_offers(value, m) for m in _members(protocol)):
        raise ValidationError(
            f"{name} must be {accepted}, or None for the configured one; got {_kind(value)}"
        )


def _members(protocol: type) -> tuple[str, ...]:
    """The public attributes a protocol and the protocols it extends declare (not cached:
    a functools cache is out of an erasure's reach, tests/test_erasure_residue.py)."""
    names: set[str] = set()
    for base in protocol.__mro__:
        if getattr(base, "_is_protocol", False) and base.__module__ != "typing":
            names.update(vars(base), getattr(base, "__annotations__", {}))
    return tuple(sorted(n for n in names if not n.startswith("_")))


def _offers(value: object, member: str) -> bool:
    if hasattr(type(value), "__getattr__"):
        return True
    try:
        inspect.getattr_static(value, member)
    except AttributeError:
        return False
    return True


def _kind(value: object) -> str:
    if isinstance(value, type):
        return f"the class {value.__name__} (pass an instance of it)"
    return f"a {type(value).__name__}"


def open_runtime(
    path: str | Path | None = None,
    *,
    config: Config | None = None,
    store: Store | None = None,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
    ids: IdSource | None = None,
) -> Runtime:
    """The runtime of ``AgentMemory(...)``'s arguments: the configuration (loaded when not
    given; ``path`` overrides its store path), and each part given or else the configured
    one (the store opened, the configured embedder, the system clock, UUIDv7 ids, the
    signer of ``config.signing``)."""
    text = check_store_path(path)
    if config is not None and not isinstance(config, Config):
        raise ValidationError(
            "config must be a Config (see config.load_config), or None to load the configured "
            f"one; got {_kind(config)}"
        )
    for name, value in (("store", store), ("embedder", embedder), ("clock", clock), ("ids", ids)):
        check_part(name, value)
    if config is None:
        config = load_config(path=text)
    elif text is not None:
        config = config.model_copy(update={"path": text})
    check_config_paths(config)
    signer = Signer.from_settings(
        config.signing, config.db_path().parent if config.backend == "embedded" else None
    )
    return Runtime(
        config=config,
        store=open_store(config) if store is None else store,
        embedder=_default_embedder(config) if embedder is None else embedder,
        clock=TickClock(SystemClock() if clock is None else clock),
        ids=UUID7Source() if ids is None else ids,
        signer=signer,
        retrieval_config=RetrievalConfig.from_dict(config.retrieval),
    )


def _default_embedder(config: Config) -> Embedder:
    """The configured embedder chain; the hashing embedder when the chain cannot load."""
    try:
        from attestor_arango.embeddings.chain import make_embedder
    except ImportError:
        from attestor_arango.embeddings import HashingEmbedder

        return HashingEmbedder()
    return make_embedder(config)
