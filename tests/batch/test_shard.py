"""``Shard``: parsing ``i/N`` and the contiguous split."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.batch import Shard
from norma.errors import InvalidInputError


def test_parse_and_bounds() -> None:
    shard = Shard.parse(" 2/4 ")
    assert (shard.index, shard.count, str(shard)) == (2, 4, "2/4")
    assert shard.bounds(10) == (2, 5)
    assert shard.select(list("abcdefghij")) == ["c", "d", "e"]


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/2", "2", "1/-2", "", "1.5/3"])
def test_bad_shards_are_refused(text: str) -> None:
    with pytest.raises(InvalidInputError, match="shard"):
        Shard.parse(text)


@given(st.integers(0, 300), st.integers(1, 12))
def test_shards_cover_the_records_once_in_order(total: int, count: int) -> None:
    records = list(range(total))
    parts = [Shard(index, count).select(records) for index in range(1, count + 1)]
    assert [item for part in parts for item in part] == records
    sizes = [len(part) for part in parts]
    assert max(sizes) - min(sizes) <= 1
