from __future__ import annotations

import pytest

from norma.errors import InvalidInputError
from norma.matching import SessionState


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
