"""Copy-on-write containers for the match index: an update copies the pieces it touches and shares the rest.

A :class:`~norma.matching._index.MatchIndex` is immutable, and an update builds the next one. Copying a 100k-rule
list or dict per update would cost a millisecond or more where changing one rule used to cost tens of microseconds,
so the per-slot rule entries live in a :class:`ChunkedList` (chunks of 512) and the maps keyed by rule id, scenario,
step or tag in a :class:`ShardedMap` (256 dicts by key hash): a one-rule update copies one chunk and a few shards.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from itertools import chain
from typing import Any, Generic, TypeVar

__all__ = ["ChunkedList", "ShardedMap"]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_CHUNK_BITS = 9
_CHUNK = 1 << _CHUNK_BITS
_SHARD_MASK = 255
_EMPTY: dict[Any, Any] = {}  # every empty shard (never written: a shard is copied before it changes)
_EMPTY_SHARDS: tuple[dict[Any, Any], ...] = (_EMPTY,) * (_SHARD_MASK + 1)
_MISSING = object()


class ChunkedList(Generic[T]):
    """An immutable sequence kept in chunks of 512 items; :meth:`updated` shares every chunk it does not change."""

    __slots__ = ("_chunks", "_len")

    def __init__(self, chunks: tuple[tuple[T, ...], ...] = (), length: int = 0) -> None:
        self._chunks = chunks
        self._len = length

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index: int) -> T:
        if not 0 <= index < self._len:
            raise IndexError(f"index {index} out of range for {self._len} items")
        return self._chunks[index >> _CHUNK_BITS][index & (_CHUNK - 1)]

    def __iter__(self) -> Iterator[T]:
        return chain.from_iterable(self._chunks)

    def items_at(self, positions: list[int]) -> list[T]:
        """The items at ``positions`` (each in range), in that order: one call for many."""
        chunks, low = self._chunks, _CHUNK - 1
        return [chunks[position >> _CHUNK_BITS][position & low] for position in positions]

    def updated(self, changes: Mapping[int, T], length: int, fill: T) -> ChunkedList[T]:
        """A copy ``length`` long (at least ``len(self)``) with ``changes[i]`` at position ``i``; positions past the
        old end that ``changes`` does not name hold ``fill``."""
        if length < self._len:
            raise ValueError(f"a ChunkedList only grows: {length} < {self._len}")
        chunks = list(self._chunks)
        wanted = (length + _CHUNK - 1) >> _CHUNK_BITS
        chunks.extend(() for _ in range(wanted - len(chunks)))
        touched: dict[int, list[T]] = {}
        for number in range(self._len >> _CHUNK_BITS, wanted):  # the last chunk and new ones, filled to length
            have = len(chunks[number])
            need = min(_CHUNK, length - (number << _CHUNK_BITS))
            if have < need:
                touched[number] = [*chunks[number], *([fill] * (need - have))]
        for position, value in changes.items():
            if not 0 <= position < length:
                raise IndexError(f"position {position} out of range for {length} items")
            number = position >> _CHUNK_BITS
            chunk = touched.get(number)
            if chunk is None:
                chunk = touched[number] = list(chunks[number])
            chunk[position & (_CHUNK - 1)] = value
        for number, items in touched.items():
            chunks[number] = tuple(items)
        return ChunkedList(tuple(chunks), length)


class ShardedMap(Generic[K, V]):
    """An immutable mapping kept in 256 dicts by key hash; :meth:`updated` copies only the dicts its keys fall in."""

    __slots__ = ("_len", "_shards")

    def __init__(self, shards: tuple[dict[K, V], ...] = _EMPTY_SHARDS, length: int = 0) -> None:
        self._shards = shards
        self._len = length

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, key: K) -> V:
        return self._shards[hash(key) & _SHARD_MASK][key]

    def __contains__(self, key: object) -> bool:
        return key in self._shards[hash(key) & _SHARD_MASK]

    def __iter__(self) -> Iterator[K]:
        for shard in self._shards:
            yield from shard

    def get(self, key: K) -> V | None:
        """The value of ``key``, None when absent."""
        return self._shards[hash(key) & _SHARD_MASK].get(key)

    def updated(self, changes: Mapping[K, V | None]) -> ShardedMap[K, V]:
        """A copy with ``changes`` applied: a value sets its key, None deletes it (an absent key is ignored)."""
        shards = list(self._shards)
        copied: set[int] = set()
        length = self._len
        for key, value in changes.items():
            number = hash(key) & _SHARD_MASK
            if number not in copied:
                shards[number] = dict(shards[number])
                copied.add(number)
            shard = shards[number]
            if value is None:
                if shard.pop(key, _MISSING) is not _MISSING:
                    length -= 1
            else:
                if key not in shard:
                    length += 1
                shard[key] = value
        return ShardedMap(tuple(shards), length)
