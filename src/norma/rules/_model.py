"""The rule a tenant writes, and the texts of a rule that get embedded.

:class:`Rule` is the contract shared by the rule store, matching, the CLI and the service. A rule's vectors are one
row per text of :func:`rule_texts` (row 0: condition and action together, then one row per example, in order);
:func:`rule_fingerprint` changes exactly when those texts change, so a store knows when a stored vector is stale.
"""

from __future__ import annotations

import enum
import hashlib
import math
from collections.abc import Mapping
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from norma.errors import InvalidInputError

__all__ = [
    "MAX_RULE_ID_LENGTH",
    "MAX_RULE_ITEMS",
    "MAX_RULE_TEXT_CHARS",
    "Rule",
    "Scope",
    "check_tenant_id",
    "describe_validation_error",
    "rule_fingerprint",
    "rule_texts",
]

MAX_RULE_ID_LENGTH = 200
"""Longest rule id accepted (ids travel in URLs and database keys)."""
MAX_RULE_TEXT_CHARS = 10_000
"""Longest ``condition_text`` / ``action_text`` and longest example (the model reads 256 tokens of each)."""
MAX_RULE_ITEMS = 200
"""Most examples, and most tags, one rule may carry."""


class Scope(enum.StrEnum):
    """Where a rule applies: always, in one scenario, or in one step of a scenario."""

    GLOBAL = "global"
    SCENARIO = "scenario"
    STEP = "step"

    @classmethod
    def _missing_(cls, value: object) -> Scope | None:
        if isinstance(value, str):
            lowered = value.strip().lower()
            for member in cls:
                if member.value == lowered:
                    return member
        return None


def describe_validation_error(error: pydantic.ValidationError) -> str:
    """Every problem of ``error`` as ``field.path: message``, joined by ``; `` (one line for an error message)."""
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "rule"
        message = str(item["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


class Rule(BaseModel):
    """One statement of expected behaviour: when ``condition_text`` holds, do ``action_text``.

    Building a rule with bad fields raises :class:`~norma.errors.InvalidInputError` naming the rule and the field
    (it is also a ``ValueError``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    id: str = Field(min_length=1, max_length=MAX_RULE_ID_LENGTH)
    """Unique within a tenant; stable across edits (history is kept per id)."""
    tenant_id: str = Field(default="default", min_length=1, max_length=MAX_RULE_ID_LENGTH)
    """The tenant that owns the rule; a matcher holds the rules of one tenant."""
    condition_text: str = Field(max_length=MAX_RULE_TEXT_CHARS)
    """When the rule applies, in natural language ("customer asks for a refund")."""
    action_text: str = Field(default="", max_length=MAX_RULE_TEXT_CHARS)
    """What the agent should do when it applies."""
    scope: Scope = Scope.GLOBAL
    """GLOBAL rules are always candidates; SCENARIO / STEP ones only while that scenario / step is active."""
    scenario_id: str | None = None
    """The scenario a SCENARIO or STEP rule belongs to."""
    step_id: str | None = None
    """The step a STEP rule belongs to."""
    priority: int = Field(default=0, ge=-1_000_000, le=1_000_000)
    """Business preference: higher wins ties and adds to the final score."""
    enabled: bool = True
    """Disabled rules are never matched (they are kept, with their history)."""
    max_fires_per_session: int | None = Field(default=None, ge=1)
    """Stop matching the rule after it fired this many times in a session (None: no limit)."""
    cooldown_turns: int | None = Field(default=None, ge=1)
    """After firing, skip the rule for this many turns (None: no cooldown)."""
    tags: tuple[str, ...] = Field(default=(), max_length=MAX_RULE_ITEMS)
    """Free labels, usable as match filters."""
    examples: tuple[str, ...] = Field(default=(), max_length=MAX_RULE_ITEMS)
    """Example user messages that should match (ADR-002 option D); each is embedded."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else the tenant wants to keep with the rule (JSON-serialisable)."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except pydantic.ValidationError as exc:
            rule_id = data.get("id")
            name = f"rule {rule_id!r}" if isinstance(rule_id, str) and rule_id else "rule"
            raise InvalidInputError(
                f"invalid {name}: {describe_validation_error(exc)}",
                location=str(rule_id) if isinstance(rule_id, str) else None,
                hint="fix the field named above (see docs/matching.md for the rule format)",
            ) from None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Rule:
        """A rule from a plain mapping (JSON / YAML), with the same errors as the constructor."""
        if not isinstance(data, Mapping):
            raise InvalidInputError(
                f"a rule must be a mapping of fields, got {type(data).__name__}",
                hint="write each rule as an object with at least id and condition_text",
            )
        return cls(**{str(k): v for k, v in data.items()})

    @field_validator("id", "tenant_id")
    @classmethod
    def _strip_id(cls, value: str) -> str:
        if value != value.strip() or not value:
            raise ValueError("must be non-empty and have no leading or trailing spaces")
        if any(ord(c) < 32 for c in value):
            raise ValueError("must not contain control characters")
        return value

    @field_validator("condition_text")
    @classmethod
    def _condition_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("tags", "examples", mode="before")
    @classmethod
    def _list_to_tuple(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("must be a list of strings, not one string")
        if isinstance(value, list):
            return tuple(value)
        return value

    @field_validator("examples")
    @classmethod
    def _examples_not_blank(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for i, text in enumerate(value):
            if not text.strip():
                raise ValueError(f"example {i} is empty")
            if len(text) > MAX_RULE_TEXT_CHARS:
                raise ValueError(f"example {i} is {len(text):,} characters, over the limit of {MAX_RULE_TEXT_CHARS:,}")
        return value

    @field_validator("tags")
    @classmethod
    def _tags_short(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for i, tag in enumerate(value):
            if len(tag) > MAX_RULE_ID_LENGTH:
                raise ValueError(f"tag {i} is {len(tag):,} characters, over the limit of {MAX_RULE_ID_LENGTH}")
        return value

    @model_validator(mode="after")
    def _scope_fields(self) -> Rule:
        if self.scope is Scope.GLOBAL and (self.scenario_id is not None or self.step_id is not None):
            raise ValueError("a GLOBAL rule takes no scenario_id or step_id (use scope 'scenario' or 'step')")
        if self.scope is Scope.SCENARIO:
            if not self.scenario_id:
                raise ValueError("a SCENARIO rule needs scenario_id")
            if self.step_id is not None:
                raise ValueError("a SCENARIO rule takes no step_id (use scope 'step')")
        if self.scope is Scope.STEP and not self.step_id:
            raise ValueError("a STEP rule needs step_id")
        for key, value in self.metadata.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"metadata.{key} must be a finite number")
        return self

    @property
    def embedding_text(self) -> str:
        """The text embedded for the rule itself: condition and action (ADR-002 step 1)."""
        if self.action_text.strip():
            return f"{self.condition_text.strip()} {self.action_text.strip()}"
        return self.condition_text.strip()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping that :meth:`from_mapping` turns back into an equal rule."""
        return self.model_dump(mode="json")


def rule_texts(rule: Rule) -> list[str]:
    """The texts whose vectors represent ``rule``: its :attr:`Rule.embedding_text`, then each example."""
    return [rule.embedding_text, *rule.examples]


def rule_fingerprint(rule: Rule) -> str:
    """A hex digest of :func:`rule_texts`: equal fingerprints mean the stored vectors are still valid."""
    digest = hashlib.sha256()
    for text in rule_texts(rule):
        encoded = text.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "little"))
        digest.update(encoded)
    return digest.hexdigest()


def check_tenant_id(tenant_id: str) -> str:
    """``tenant_id`` if it is a usable tenant id, else InvalidInputError."""
    if not isinstance(tenant_id, str) or not tenant_id or tenant_id != tenant_id.strip():
        raise InvalidInputError(
            f"tenant id {tenant_id!r} must be a non-empty string without leading or trailing spaces",
            hint="pass the tenant id exactly as it was created",
        )
    if len(tenant_id) > MAX_RULE_ID_LENGTH or any(ord(c) < 32 for c in tenant_id):
        raise InvalidInputError(f"tenant id {tenant_id[:40]!r} is too long or has control characters")
    return tenant_id
