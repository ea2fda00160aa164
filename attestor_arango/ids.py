"""Time-ordered ids (UUIDv7 layout) and row salts, with a seeded source for reproducible
tests."""

from __future__ import annotations

import os
import random
import threading
import uuid
from typing import Protocol


class IdSource(Protocol):
    def new_id(self, now_us: int) -> str: ...


SALT_BYTES = 32


def new_salt(source: object) -> str:
    """A fresh row salt (``models.Memory.salt``: 32 bytes, hex) from ``source`` when it makes
    them (``UUID7Source.new_salt``: a seeded source gives the same salts run after run), else
    from the operating system's random source (an id source of the caller's own)."""
    make = getattr(source, "new_salt", None)
    return make() if callable(make) else os.urandom(SALT_BYTES).hex()


def new_key(source: object) -> bytes:
    """A fresh secret key of ``SALT_BYTES`` bytes (a store's recall-id key,
    ``core/recall_key.py``) from ``source`` when it makes them (``SeededIdSource.new_key``:
    the seed's key, tests and benchmarks only), else from the operating system."""
    make = getattr(source, "new_key", None)
    key = make() if callable(make) else None
    return key if isinstance(key, bytes) and key else os.urandom(SALT_BYTES)


def _uuid7(ms: int, rand: int) -> str:
    """48 bits of milliseconds, version 7, variant 10, 74 bits of randomness."""
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


class UUID7Source:
    """Random UUIDv7 ids; a counter keeps ids made in one millisecond ordered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = -1
        self._seq = 0

    def _rand(self) -> int:
        return int.from_bytes(os.urandom(10), "big")

    def new_id(self, now_us: int) -> str:
        ms = now_us // 1000
        with self._lock:
            if ms <= self._last_ms:
                ms = self._last_ms
                self._seq += 1
            else:
                self._last_ms = ms
                self._seq = 0
            rand = self._rand()
            # the top 12 random bits carry the in-millisecond sequence
            rand = (rand & ((1 << 62) - 1)) | ((self._seq & 0xFFF) << 62)
        return _uuid7(ms, rand)

    def new_salt(self) -> str:
        """32 random bytes, hex: a row's salt (``new_salt``)."""
        return os.urandom(SALT_BYTES).hex()


class SeededIdSource(UUID7Source):
    """Deterministic UUIDv7 ids for tests and benchmarks."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self._seed = seed
        self._random = random.Random(seed)
        # salts drawn from their own sequence, so the ids a seed gives stay those it gave
        # before salts existed (recorded rankings break ties by id)
        self._salts = random.Random(f"salt:{seed}")
        self._salt_lock = threading.Lock()

    def _rand(self) -> int:
        return self._random.getrandbits(80)

    def new_salt(self) -> str:
        """The seed's next salt (deterministic, not secret: tests and benchmarks only)."""
        with self._salt_lock:
            return self._salts.getrandbits(8 * SALT_BYTES).to_bytes(SALT_BYTES, "big").hex()

    def new_key(self) -> bytes:
        """The seed's key (``new_key``): the same for every call, from a sequence of its own,
        so neither the ids nor the salts a seed gives move (not secret: tests only)."""
        return (
            random.Random(f"key:{self._seed}")
            .getrandbits(8 * SALT_BYTES)
            .to_bytes(SALT_BYTES, "big")
        )
