"""The compiled match index: immutable versions, copy-on-write updates, and derived values kept across versions."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from norma.errors import InvalidInputError
from norma.matching import MatchConfig, Rule, RuleMatcher, Scope
from norma.matching._index import MatchIndex
from tests.matching.conftest import AxisEmbedder


def _snapshot(index: MatchIndex) -> dict[str, object]:
    size = index.size
    return {
        "size": size,
        "version": index.version,
        "rule_at": list(index.rule_at),
        "texts_at": list(index.texts_at),
        "ids": list(index.ids),
        "slot_of": {key: index.slot_of[key] for key in index.slot_of},
        "arrays": [a[:size].tolist() for a in (index.priority, index.scope, index.usable, index.alive)],
        "groups": [
            {key: groups[key].tolist() for key in groups} for groups in (index.by_scenario, index.by_step, index.by_tag)
        ],
    }


def _rule(rng: random.Random, rule_id: str) -> Rule:
    scope = rng.choice(list(Scope))
    return Rule(
        id=rule_id,
        condition_text=rng.choice(["refund", "card", "hello", "weather", "delivery"]),
        scope=scope,
        scenario_id=None if scope is Scope.GLOBAL else rng.choice(["s1", "s2"]),
        step_id="p1" if scope is Scope.STEP else None,
        priority=rng.randint(0, 3),
        enabled=rng.random() > 0.2,
        tags=rng.sample(["a", "b", "c"], rng.randint(0, 2)),
    )


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_updates_publish_new_versions_and_leave_old_ones_unchanged(seed: int) -> None:
    rng = random.Random(seed)
    matcher = RuleMatcher([_rule(rng, f"r{i}") for i in range(rng.randint(0, 12))], embedder=AxisEmbedder())
    versions = [(matcher._index, _snapshot(matcher._index))]
    for _ in range(6):
        ids = [r.id for r in matcher.rules]
        if ids and rng.random() < 0.4:
            matcher.remove(rng.sample(ids, rng.randint(1, min(3, len(ids)))))
        else:
            pool = ids + [f"n{rng.randint(0, 30)}" for _ in range(3)]
            matcher.upsert([_rule(rng, rule_id) for rule_id in set(rng.sample(pool, rng.randint(1, 3)))])
        index = matcher._index
        assert index is not versions[-1][0]
        for array in (index.priority, index.scope, index.usable, index.alive):
            assert not array.flags.writeable
        versions.append((index, _snapshot(index)))
    for index, before in versions:
        assert _snapshot(index) == before
    # what an updated index derived (kept from the previous version where nothing it depends on changed) is what a
    # fresh computation gives
    last = matcher._index
    fresh = MatchIndex(**{name: getattr(last, name) for name in MatchIndex.__dataclass_fields__})
    for name in ("id_rank", "global_usable", "priority_bounds", "priority_norm"):
        assert np.array_equal(getattr(last, name), getattr(fresh, name))


def test_an_update_that_changes_no_id_keeps_the_id_order() -> None:
    rules = [Rule(id=f"r{i}", condition_text="refund", priority=i % 3) for i in range(20)]
    matcher = RuleMatcher(rules, MatchConfig(threshold=None), embedder=AxisEmbedder())
    matcher.match("refund")
    before = matcher._index
    matcher.upsert([Rule(id="r3", condition_text="card delivery")])  # same id, same slot
    after = matcher._index
    assert "id_rank" in after.__dict__
    assert after.id_rank is before.id_rank
    assert after.priority is before.priority  # no per-slot value changed: the arrays are shared
    matcher.upsert([Rule(id="r3", condition_text="card", priority=7)])
    assert matcher._index.priority is not after.priority
    assert after.priority[3] == 0  # the earlier version still reads its own priority


def test_a_batch_of_mixed_dimensions_changes_nothing() -> None:
    rules = [Rule(id="a", condition_text="refund"), Rule(id="b", condition_text="card")]
    matcher = RuleMatcher([], embedder=AxisEmbedder())
    vectors = {"a": np.ones((1, 4), dtype=np.float32), "b": np.ones((1, 5), dtype=np.float32)}
    with pytest.raises(InvalidInputError, match="rule 'b': vectors of dim 5"):
        matcher.upsert(rules, vectors)
    assert len(matcher) == 0
    assert matcher._index.vectors is None
    assert matcher.version == 0


def test_vectors_set_many_stores_what_set_stores() -> None:
    # a matcher built at once writes every rule's vectors in one pass: the same rows, slots and example centroids
    from norma.matching._vectors import VectorIndex

    rng = np.random.default_rng(21)

    def unit(count: int) -> np.ndarray:
        rows = rng.standard_normal((count, 24)).astype(np.float32)
        return np.asarray(rows / np.linalg.norm(rows, axis=1, keepdims=True), dtype=np.float32)

    blocks = {slot: unit(1 + slot % 5) for slot in range(200)}
    one, many = VectorIndex(24), VectorIndex(24)
    for slot, rows in blocks.items():
        one.set(slot, rows)
    many.set(7, unit(2))  # replaced by set_many
    one.remove(7)
    one.set(7, blocks[7])
    many.set_many(list(blocks), list(blocks.values()))
    for slot, rows in blocks.items():
        assert np.array_equal(many.rows_of(slot), rows)
        assert many.centroid_norm(slot) == one.centroid_norm(slot)
    query = unit(2)
    assert np.array_equal(one.rule_similarities(query, 200), many.rule_similarities(query, 200))
    for a, b in zip(one.similarity_bounds(query, 200), many.similarity_bounds(query, 200), strict=True):
        assert np.array_equal(a, b)
