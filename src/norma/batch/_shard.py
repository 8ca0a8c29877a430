"""``--shard i/N``: a deterministic split of a batch by record index, for CI jobs that share one input."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from norma.errors import InvalidInputError

__all__ = ["Shard"]

T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based, as CI matrices number their jobs).

    Shard ``i`` of ``N`` takes the records whose 0-based index ``k`` (blank lines not counted) satisfies
    ``floor((i-1)·n/N) <= k < floor(i·n/N)`` for ``n`` records: contiguous runs, so that the shards' outputs put
    one after the other in shard order are the records in file order (what ``norma merge`` relies on), and sizes
    differ by at most one record.
    """

    index: int
    """Which shard, 1..count."""
    count: int
    """How many shards the input is split into."""

    def __post_init__(self) -> None:
        for name in ("index", "count"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidInputError(f"shard {name} must be an integer, not {value!r}", location="shard")
        if not 1 <= self.index <= self.count:
            raise InvalidInputError(
                f"shard {self.index}/{self.count} is not one of 1/{self.count}..{self.count}/{self.count}",
                location="shard",
                hint="write i/N with 1 <= i <= N, e.g. --shard 2/4",
            )

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/4"`` -> ``Shard(2, 4)``.

        Raises:
            InvalidInputError: not ``i/N`` with integers ``1 <= i <= N``.
        """
        index, slash, count = str(text).strip().partition("/")
        if not slash or not index.strip().isdigit() or not count.strip().isdigit():
            raise InvalidInputError(
                f"{text!r} is not a shard i/N", location="shard", hint="write i/N with 1 <= i <= N, e.g. --shard 2/4"
            )
        return cls(int(index), int(count))

    def bounds(self, total: int) -> tuple[int, int]:
        """``(start, stop)``: the record indexes of this shard among ``total`` records."""
        return (self.index - 1) * total // self.count, self.index * total // self.count

    def select(self, records: Sequence[T]) -> list[T]:
        """This shard's records, in order."""
        start, stop = self.bounds(len(records))
        return list(records[start:stop])

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
