from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.errors import InvalidInputError
from norma.matching import Rule, Scope, SessionState
from norma.rules import rule_fingerprint, rule_texts


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


def test_session_record_and_next_turn() -> None:
    session = SessionState(turn=2)
    fired = session.record_fired(["a", "b"]).record_fired(["a"])
    assert fired.fire_counts == {"a": 2, "b": 1}
    assert fired.last_fired_turn == {"a": 2, "b": 2}
    assert session.fire_counts == {}
    assert fired.next_turn().turn == 3


@pytest.mark.parametrize(
    "data", [{"turn": -1}, {"turn": "x"}, {"fire_counts": {"r": "many"}}, {"unknown": 1}, {"active_step_id": 3}]
)
def test_bad_session_fields_are_invalid_input_naming_the_field(data: dict[str, object]) -> None:
    field = next(iter(data))
    with pytest.raises(InvalidInputError, match=field) as caught:
        SessionState.from_mapping(data)
    assert caught.value.location == "session"
    with pytest.raises(ValueError, match=field):
        SessionState(**data)  # type: ignore[arg-type]


def test_session_from_mapping() -> None:
    state = SessionState.from_mapping({"active_scenario_id": "cards", "turn": 2, "fire_counts": {"r": 1}})
    assert (state.active_scenario_id, state.turn, state.fire_counts) == ("cards", 2, {"r": 1})
    with pytest.raises(InvalidInputError, match="mapping"):
        SessionState.from_mapping(["cards"])  # type: ignore[arg-type]
