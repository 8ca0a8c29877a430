"""The copy-on-write containers of the match index against a plain list and dict, and their sharing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from norma.matching._cow import ChunkedList, ShardedMap

# a list of updates: (new length growth, {position: value}) with positions below the new length
_list_updates = st.lists(
    st.tuples(st.integers(0, 700), st.dictionaries(st.integers(0, 3000), st.integers(), max_size=20)), max_size=8
)


@settings(max_examples=60, deadline=None)
@given(updates=_list_updates)
def test_chunked_list_behaves_like_a_list_and_never_changes(updates: list[tuple[int, dict[int, int]]]) -> None:
    current: ChunkedList[int] = ChunkedList()
    plain: list[int] = []
    history: list[tuple[ChunkedList[int], list[int]]] = [(current, [])]
    for growth, raw in updates:
        length = len(plain) + growth
        changes = {p: v for p, v in raw.items() if p < length}
        current = current.updated(changes, length, -1)
        plain = plain + [-1] * growth
        for position, value in changes.items():
            plain[position] = value
        history.append((current, list(plain)))
    for version, expected in history:  # every earlier version still reads as it did
        assert len(version) == len(expected)
        assert list(version) == expected
        assert [version[i] for i in range(len(expected))] == expected


def test_chunked_list_shares_the_chunks_it_does_not_change() -> None:
    first = ChunkedList[int]().updated({i: i for i in range(2000)}, 2000, 0)
    second = first.updated({1500: -5}, 2000, 0)
    assert second[1500] == -5
    assert first[1500] == 1500
    assert [a is b for a, b in zip(first._chunks, second._chunks, strict=True)] == [True, True, False, True]
    with pytest.raises(IndexError):
        first[2000]
    with pytest.raises(ValueError, match="only grows"):
        first.updated({}, 10, 0)


_keys = st.text(min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(updates=st.lists(st.dictionaries(_keys, st.one_of(st.none(), st.integers())), max_size=8))
def test_sharded_map_behaves_like_a_dict_and_never_changes(updates: list[dict[str, int | None]]) -> None:
    current: ShardedMap[str, int] = ShardedMap()
    plain: dict[str, int] = {}
    history: list[tuple[ShardedMap[str, int], dict[str, int]]] = [(current, {})]
    for changes in updates:
        current = current.updated(changes)
        plain = dict(plain)
        for key, value in changes.items():
            if value is None:
                plain.pop(key, None)
            else:
                plain[key] = value
        history.append((current, plain))
    for version, expected in history:
        assert len(version) == len(expected)
        assert {key: version[key] for key in version} == expected
        for key in [*list(expected), "absent key"]:
            assert (key in version) == (key in expected)
            assert version.get(key) == expected.get(key)


def test_sharded_map_copies_only_the_shards_it_changes() -> None:
    first = ShardedMap[str, int]().updated({f"k{i}": i for i in range(5000)})
    second = first.updated({"k7": -1})
    shared = sum(a is b for a, b in zip(first._shards, second._shards, strict=True))
    assert shared == len(first._shards) - 1
    assert (first["k7"], second["k7"]) == (7, -1)
