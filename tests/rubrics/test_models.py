"""The flexible models behave like synth-ai's: defaults, weight and aggregation rules, ids, unknown keys."""

from __future__ import annotations

import pydantic
import pytest

from norma.rubrics import Criterion, Rubric, ValidationError


def test_criterion_defaults() -> None:
    criterion = Criterion(id="a", description="A")
    assert criterion.weight == 1.0
    assert criterion.required is False


@pytest.mark.parametrize("weight", [0, 0.0, -1, -0.001])
def test_non_positive_weight_is_rejected(weight: float) -> None:
    with pytest.raises(ValidationError, match="criterion weight must be positive"):
        Criterion(id="a", description="A", weight=weight)


def test_weight_has_no_upper_bound() -> None:
    assert Criterion(id="a", description="A", weight=250.0).weight == 250.0


def test_validation_error_is_pydantics() -> None:
    assert ValidationError is pydantic.ValidationError
    with pytest.raises(pydantic.ValidationError):
        Criterion(id="a", description="A", weight=-1)


def test_unknown_keys_are_ignored() -> None:
    criterion = Criterion.model_validate({"id": "a", "description": "A", "colour": "blue"})
    assert criterion.model_dump() == {"id": "a", "description": "A", "weight": 1.0, "required": False}


def test_int_id_is_rejected() -> None:
    with pytest.raises(ValidationError, match="id"):
        Criterion.model_validate({"id": 3, "description": "A"})


def test_rubric_defaults_and_empty_criteria() -> None:
    rubric = Rubric(version="1")
    assert rubric.goal_text is None
    assert rubric.criteria == []
    assert rubric.aggregation == "weighted_sum"


def test_rubric_version_is_required_and_a_number_is_rejected() -> None:
    with pytest.raises(ValidationError, match="version"):
        Rubric.model_validate({"criteria": []})
    with pytest.raises(ValidationError, match="version"):
        Rubric.model_validate({"version": 1})


@pytest.mark.parametrize("aggregation", ["sum", "weighted_sum", "mean", "weighted_mean", "custom", "inherit"])
def test_known_aggregations(aggregation: str) -> None:
    assert Rubric(version="1", aggregation=aggregation).aggregation == aggregation


def test_unknown_aggregation_message() -> None:
    with pytest.raises(ValidationError) as caught:
        Rubric(version="1", aggregation="median")
    # synth-ai 0.9.11's list: mean and weighted_mean joined the four of the earlier releases
    expected = "aggregation must be one of ['custom', 'inherit', 'mean', 'sum', 'weighted_mean', 'weighted_sum']"
    assert expected in str(caught.value)


def test_duplicate_ids_are_an_error() -> None:
    with pytest.raises(ValidationError, match="duplicate criterion id: a"):
        Rubric(
            version="1",
            criteria=[Criterion(id="a", description="A"), Criterion(id="a", description="again")],
        )
