"""The runtime: what every service needs, built once by ``AgentMemory`` and passed down.

Services (writes, retrieval, ingest, governance) receive this object instead of the
facade, so data flows down only: a service can be built and tested with a store, a
clock and an embedder, and never reaches back into ``AgentMemory``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, NoReturn, Protocol, TypeVar, overload

from attestor_arango.clock import Clock, SystemClock, TickClock, parse_time
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
        """The temporal view of a read; raises ``ValidationError`` for an ``as_of`` ahead of now."""
        now = self.clock.now_us()
        if as_of is None:
            at = now
        else:
            at = parse_time(as_of, field="as_of")
            if at > now:
                raise ValidationError(
                    "as_of is in the future; the past can be replayed, the future not yet",
                )
        return TemporalView(
            as_of=at, window=check_window(time_window), include_closed=include_closed
        )


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
        raise ValidationError("config must be a Config (see config.load_config) or None")
    if config is None:
        config = load_config(path=text)
    elif text is not None:
        config = config.model_copy(update={"path": text})
    signer = Signer.from_settings(
        config.signing, config.db_path().parent if config.backend == "embedded" else None
    )
    return Runtime(
        config=config,
        store=store or open_store(config),
        embedder=embedder or _default_embedder(config),
        clock=TickClock(clock or SystemClock()),
        ids=ids or UUID7Source(),
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
