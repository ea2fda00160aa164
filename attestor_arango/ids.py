"""Time-ordered ids (UUIDv7 layout), with a seeded source for reproducible tests."""

from __future__ import annotations

import os
import random
import threading
import uuid
from typing import Protocol


class IdSource(Protocol):
    def new_id(self, now_us: int) -> str: ...


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


class SeededIdSource(UUID7Source):
    """Deterministic UUIDv7 ids for tests and benchmarks."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self._random = random.Random(seed)

    def _rand(self) -> int:
        return self._random.getrandbits(80)
