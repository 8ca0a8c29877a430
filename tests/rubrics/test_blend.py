"""blend_rubrics: None handling, criteria order, shared-criterion rules, rubric-level fields."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.rubrics import Criterion, Rubric, blend_rubrics, blend_weights, load_rubric
from tests.conftest import EXAMPLES


def _rubric(*criteria: Criterion, **fields: object) -> Rubric:
    return Rubric.model_validate({"version": "1", "goal_text": "base goal", "criteria": list(criteria), **fields})


def test_none_handling_returns_the_same_objects() -> None:
    rubric = _rubric(Criterion(id="a", description="A"))
    assert blend_rubrics(None, None) is None
    assert blend_rubrics(rubric, None) is rubric
    assert blend_rubrics(None, rubric) is rubric


def test_order_is_override_then_base_only() -> None:
    base = _rubric(*(Criterion(id=i, description=i.upper()) for i in ["a", "b", "c", "d"]))
    override = _rubric(*(Criterion(id=i, description=i.upper()) for i in ["x", "c", "a"]))
    merged = blend_rubrics(base, override)
    assert merged is not None
    assert [c.id for c in merged.criteria] == ["x", "c", "a", "b", "d"]


@pytest.mark.parametrize(
    ("base", "override", "expected"),
    [(2.0, 3.0, 6.0), (1.0, 3.0, 3.0), (2.0, 1.0, 2.0), (1.0, 1.0, 1.0), (0.5, 0.5, 0.25)],
)
def test_weight_rules(base: float, override: float, expected: float) -> None:
    assert blend_weights(base, override) == expected
    merged = blend_rubrics(
        _rubric(Criterion(id="a", description="A", weight=base)),
        _rubric(Criterion(id="a", description="A", weight=override)),
    )
    assert merged is not None
    assert merged.criteria[0].weight == expected


def test_description_and_required() -> None:
    base = _rubric(Criterion(id="a", description="base A", required=True), Criterion(id="b", description="base B"))
    override = _rubric(Criterion(id="a", description=""), Criterion(id="b", description="new B", required=True))
    merged = blend_rubrics(base, override)
    assert merged is not None
    first, second = merged.criteria
    assert (first.description, first.required) == ("base A", False)
    assert (second.description, second.required) == ("new B", True)


def test_aggregation_inherit_and_override() -> None:
    base = _rubric(aggregation="sum")
    assert (blend_rubrics(base, _rubric(aggregation="inherit")) or base).aggregation == "sum"
    assert (blend_rubrics(base, _rubric(aggregation="custom")) or base).aggregation == "custom"
    assert (blend_rubrics(base, _rubric()) or base).aggregation == "weighted_sum"


def test_version_and_goal_text_unless_empty() -> None:
    base = Rubric(version="1", goal_text="base goal")
    merged = blend_rubrics(base, Rubric(version="", goal_text=""))
    assert merged is not None
    assert (merged.version, merged.goal_text) == ("1", "base goal")
    merged = blend_rubrics(base, Rubric(version="2", goal_text=None))
    assert merged is not None
    assert (merged.version, merged.goal_text) == ("2", "base goal")
    merged = blend_rubrics(base, Rubric(version="3", goal_text="new"))
    assert merged is not None
    assert (merged.version, merged.goal_text) == ("3", "new")


def test_example_files_blend() -> None:
    merged = blend_rubrics(
        load_rubric(EXAMPLES / "rubrics" / "code_review.json"),
        load_rubric(EXAMPLES / "rubrics" / "code_review_override.yaml"),
    )
    assert merged is not None
    assert [(c.id, c.weight) for c in merged.criteria] == [
        ("security", 3.0),
        ("tests", 3.0),
        ("style", 1.0),
        ("correctness", 2.0),
        ("docs", 0.5),
    ]
    assert merged.version == "1.1"
    assert merged.goal_text == "Review a pull request the way a careful senior engineer would."
    assert merged.aggregation == "weighted_sum"
    assert merged.criteria[1].description == "New behaviour is covered by tests that could fail."


_criteria = st.lists(
    st.builds(
        Criterion,
        id=st.text(alphabet="abcdef", min_size=1, max_size=3),
        description=st.text(max_size=5),
        weight=st.floats(min_value=0.01, max_value=10),
        required=st.booleans(),
    ),
    max_size=6,
    unique_by=lambda c: c.id,
)
_rubrics = st.builds(
    Rubric,
    version=st.text(max_size=3),
    goal_text=st.none() | st.text(max_size=5),
    criteria=_criteria,
    aggregation=st.sampled_from(["sum", "weighted_sum", "custom", "inherit"]),
)


@given(_rubrics)
def test_blend_with_none_is_identity(rubric: Rubric) -> None:
    assert blend_rubrics(rubric, None) is rubric
    assert blend_rubrics(None, rubric) is rubric


@given(_rubrics, _rubrics)
def test_blend_keeps_every_id_once(base: Rubric, override: Rubric) -> None:
    merged = blend_rubrics(base, override)
    assert merged is not None
    ids = [c.id for c in merged.criteria]
    assert sorted(ids) == sorted({c.id for c in base.criteria} | {c.id for c in override.criteria})
