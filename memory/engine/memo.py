"""Process-wide memos of what is worked out from an immutable object, found by its identity.

The replay hands the same proposals and day records around from decision to decision and
close to close. Hashing one walks all its fields, and equal objects of different types (``1``
and ``True``) would share an entry; an identity look-up is one dictionary probe. Each entry
holds its object, so an id the runtime reuses for another object never returns the first
object's answer, and a full memo is emptied (its memory is bounded). Reads and writes are
single dictionary operations, safe between threads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class IdentityMemo(Generic[K, V]):
    """``work(key)`` once per object while it is held; at most ``limit`` objects held."""

    def __init__(self, work: Callable[[K], V], limit: int) -> None:
        self.work = work
        self.limit = limit
        self._held: dict[int, tuple[K, V]] = {}

    def __call__(self, key: K) -> V:
        held = self._held.get(id(key))
        if held is not None and held[0] is key:
            return held[1]
        value = self.work(key)
        if len(self._held) >= self.limit:
            self._held.clear()
        self._held[id(key)] = (key, value)
        return value
