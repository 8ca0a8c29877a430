"""The conversation a rule is matched in: where it is and what already fired."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from norma.errors import InvalidInputError
from norma.rules import describe_validation_error

__all__ = ["SessionState"]


class SessionState(BaseModel):
    """What the matcher needs to know about the conversation: where it is and what already fired."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    active_scenario_id: str | None = None
    """The scenario in progress; SCENARIO rules of other scenarios are not candidates."""
    active_step_id: str | None = None
    """The step in progress; STEP rules of other steps are not candidates."""
    turn: int = Field(default=0, ge=0)
    """The current turn number (0-based), used by cooldowns."""
    fire_counts: dict[str, int] = Field(default_factory=dict)
    """How many times each rule id fired in this session."""
    last_fired_turn: dict[str, int] = Field(default_factory=dict)
    """The turn each rule id last fired on."""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> SessionState:
        """A session from a plain mapping (JSON); :class:`~norma.errors.InvalidInputError` naming the bad fields.

        (The constructor raises pydantic's ``ValidationError``, a ``ValueError``, so that a session nested in a
        request model keeps each problem's own field path.)
        """
        if not isinstance(data, Mapping):
            raise InvalidInputError(
                f"a session must be a mapping of fields, got {type(data).__name__}", location="session"
            )
        try:
            return cls(**{str(k): v for k, v in data.items()})
        except pydantic.ValidationError as exc:
            raise InvalidInputError(
                f"invalid session: {describe_validation_error(exc)}",
                location="session",
                hint="run `norma docs matching` for the session fields",
            ) from None

    def record_fired(self, rule_ids: list[str] | tuple[str, ...]) -> SessionState:
        """A copy where ``rule_ids`` fired on the current turn (counts and last turn updated)."""
        counts = dict(self.fire_counts)
        last = dict(self.last_fired_turn)
        for rule_id in rule_ids:
            counts[rule_id] = counts.get(rule_id, 0) + 1
            last[rule_id] = self.turn
        return self.model_copy(update={"fire_counts": counts, "last_fired_turn": last})

    def next_turn(self) -> SessionState:
        """A copy one turn later."""
        return self.model_copy(update={"turn": self.turn + 1})
