"""The rule model: fields, errors naming the rule and field, texts and fingerprints."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.errors import InvalidInputError
from norma.rules import (
    MAX_METADATA_CHARS,
    MAX_METADATA_DEPTH,
    MAX_METADATA_VALUES,
    MAX_RULE_ID_LENGTH,
    Rule,
    Scope,
    rule_fingerprint,
    rule_texts,
    validate_tenant_id,
)
from tests.rules._values import nested


def test_scope_is_case_insensitive() -> None:
    assert Scope(" STEP ") is Scope.STEP
    assert Rule(id="r", condition_text="c", scope="Scenario", scenario_id="s").scope is Scope.SCENARIO


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"id": "", "condition_text": "c"}, "id"),
        ({"id": " r", "condition_text": "c"}, "leading or trailing"),
        ({"id": "r", "condition_text": "  "}, "condition_text: must not be empty"),
        ({"id": "r", "condition_text": "c", "scope": "scenario"}, "needs scenario_id"),
        ({"id": "r", "condition_text": "c", "scope": "step"}, "needs step_id"),
        ({"id": "r", "condition_text": "c", "scenario_id": "s"}, "GLOBAL rule takes no"),
        ({"id": "r", "condition_text": "c", "examples": "one string"}, "not one string"),
        ({"id": "r", "condition_text": "c", "examples": ["ok", " "]}, "example 1 is empty"),
        ({"id": "r", "condition_text": "c", "metadata": {"x": math.nan}}, "metadata.x"),
        ({"id": "r", "condition_text": "c", "max_fires_per_session": 0}, "max_fires_per_session"),
        ({"id": "r", "condition_text": "c", "colour": "red"}, "colour"),
    ],
)
def test_bad_rules_name_the_rule_and_field(fields: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message) as caught:
        Rule(**fields)
    if fields["id"] == "r":
        assert "rule 'r'" in str(caught.value)


def test_from_mapping_round_trip_and_texts() -> None:
    rule = Rule(id="r", condition_text=" asks for a refund ", action_text="explain", examples=["money back"])
    assert Rule.from_mapping(rule.to_dict()) == rule
    assert rule.embedding_text == "asks for a refund explain"
    assert rule_texts(rule) == ["asks for a refund explain", "money back"]
    with pytest.raises(InvalidInputError, match="mapping"):
        Rule.from_mapping(["r"])  # type: ignore[arg-type]


@given(st.text(min_size=1).filter(str.strip), st.lists(st.text(min_size=1).filter(str.strip), max_size=3))
def test_fingerprint_changes_exactly_with_the_texts(condition: str, examples: list[str]) -> None:
    rule = Rule(id="r", condition_text=condition, examples=examples)
    assert rule_fingerprint(rule.model_copy(update={"priority": 5, "tags": ("t",)})) == rule_fingerprint(rule)
    changed = Rule(id="r", condition_text=condition, examples=[*examples, "another"])
    assert rule_fingerprint(changed) != rule_fingerprint(rule)


@pytest.mark.parametrize("tenant", ["", " acme", "acme ", "a\x01b", "x" * 201])
def test_bad_tenant_ids_are_refused(tenant: str) -> None:
    with pytest.raises(InvalidInputError, match="tenant id"):
        validate_tenant_id(tenant)


def test_a_good_tenant_id_is_returned() -> None:
    assert validate_tenant_id("acme-bank") == "acme-bank"


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        (nested(MAX_METADATA_DEPTH + 1), f"nests deeper than {MAX_METADATA_DEPTH} levels"),
        ({"a": [1, {"b": math.inf}]}, r"metadata\.a\[1\]\.b must be a finite number"),
        ({"a": {1: "x"}}, "key 1 at metadata.a must be a string"),
        ({"a": {"b"}}, "is a set, not a JSON value"),
        ({"a": b"bytes"}, "is a bytes, not a JSON value"),
        ({"a": "\ud800"}, "not valid Unicode"),
        ({"a": 10**4300}, "4,300 digits"),
        ({"a": list(range(MAX_METADATA_VALUES))}, f"more than {MAX_METADATA_VALUES:,} values"),
        ({"a": "x" * MAX_METADATA_CHARS}, f"more than {MAX_METADATA_CHARS:,} characters"),
    ],
)
def test_metadata_is_json_within_the_limits(metadata: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message) as caught:
        Rule(id="r", condition_text="c", metadata=metadata)
    assert caught.value.location == "metadata"


def test_metadata_at_the_limits_is_accepted_and_tuples_become_lists() -> None:
    deepest = Rule(id="r", condition_text="c", metadata=nested(MAX_METADATA_DEPTH))
    assert deepest.metadata == nested(MAX_METADATA_DEPTH)
    rule = Rule(id="r", condition_text="c", metadata={"span": (1, 2), "big": 10**4000, "x": "x\x85\x00"})
    assert rule.metadata == {"span": [1, 2], "big": 10**4000, "x": "x\x85\x00"}
    assert Rule.from_mapping(rule.to_dict()) == rule


@pytest.mark.parametrize("field", ["scenario_id", "step_id"])
@pytest.mark.parametrize("value", ["a\x00b", "a\nb", "s" * (MAX_RULE_ID_LENGTH + 1)])
def test_scenario_and_step_ids_are_bounded_like_ids(field: str, value: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        Rule(id="r", condition_text="c", scope="step", **{"scenario_id": "s", "step_id": "t", field: value})
    assert caught.value.location == field


def test_the_error_names_the_first_field_at_fault() -> None:
    with pytest.raises(InvalidInputError) as caught:
        Rule(id="r", condition_text="c", priority="high", tags="one")
    assert caught.value.location == "priority"
    assert "rule 'r'" in caught.value.message
