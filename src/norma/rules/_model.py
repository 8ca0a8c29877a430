"""The rule a tenant writes, and the texts of a rule that get embedded.

:class:`Rule` is the contract shared by the rule store, matching, the CLI and the service. A rule's vectors are one
row per text of :func:`rule_texts` (row 0: condition and action together, then one row per example, in order);
:func:`rule_fingerprint` changes exactly when those texts change, so a store knows when a stored vector is stale.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from norma._safety import is_unicode
from norma.errors import InvalidInputError
from norma.rules._checks import CHECK_KINDS, Check, JudgeCheck
from norma.rules._limits import (
    MAX_METADATA_CHARS,
    MAX_METADATA_DEPTH,
    MAX_METADATA_VALUES,
    MAX_RULE_ID_LENGTH,
    MAX_RULE_ITEMS,
    MAX_RULE_TEXT_CHARS,
    JsonChecker,
)

__all__ = [
    "MAX_METADATA_CHARS",
    "MAX_METADATA_DEPTH",
    "MAX_METADATA_VALUES",
    "MAX_RULE_ID_LENGTH",
    "MAX_RULE_ITEMS",
    "MAX_RULE_TEXT_CHARS",
    "Rule",
    "Scope",
    "validate_tenant_id",
    "describe_validation_error",
    "rule_fingerprint",
    "rule_problems",
    "rule_texts",
]

_STORED = "norma.stored"
"""Validation context key set by :meth:`Rule.from_stored`: a rule a store kept is read back without the metadata
limits (they may have been looser when it was written); every other check still applies."""


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


def rule_problems(error: pydantic.ValidationError) -> list[tuple[str, str]]:
    """``(field path, message)`` for every problem of a rule's ``error``: indexes in brackets and the check kind
    pydantic puts in the path left out (``checks[1].pattern``); a problem of the whole rule is ``rule``."""
    out = []
    for item in error.errors():
        loc = list(item["loc"])
        message = str(item["msg"]).removeprefix("Value error, ")
        if len(loc) >= 2 and loc[0] == "checks" and isinstance(loc[1], int):
            if len(loc) >= 3 and loc[2] in CHECK_KINDS:
                del loc[2]
            elif item["type"] in ("union_tag_invalid", "union_tag_not_found"):
                loc.append("kind")
                given = f"unknown kind {item['ctx']['tag']!r}" if item["type"] == "union_tag_invalid" else "no kind"
                message = f"{given}; a check's kind is one of: {', '.join(CHECK_KINDS)}"
        path = ""
        for part in loc:
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        out.append((path or "rule", message))
    return out


def describe_validation_error(error: pydantic.ValidationError, *, root: str = "rule") -> str:
    """Every problem of ``error`` as ``field.path: message``, joined by ``; `` (one line for an error message);
    a problem of the whole object is named ``root``."""
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or root
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
    scenario_id: str | None = Field(default=None, max_length=MAX_RULE_ID_LENGTH)
    """The scenario a SCENARIO or STEP rule belongs to."""
    step_id: str | None = Field(default=None, max_length=MAX_RULE_ID_LENGTH)
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
    checks: tuple[Check, ...] = Field(default=(), max_length=MAX_RULE_ITEMS)
    """Executable statements about an output (:mod:`norma.checks` evaluates them), each with an id unique within
    the rule; see docs/check.md."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else the tenant wants to keep with the rule: JSON values (mappings with string keys, lists, text,
    finite numbers, booleans, null; a tuple becomes a list), at most :data:`MAX_METADATA_DEPTH` levels deep,
    :data:`MAX_METADATA_VALUES` values and :data:`MAX_METADATA_CHARS` characters."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except pydantic.ValidationError as exc:
            rule_id = data.get("id")
            if not isinstance(rule_id, str) or not rule_id or not is_unicode(rule_id):
                rule_id = None
            name = f"rule {rule_id!r}" if rule_id else "rule"
            problems = rule_problems(exc)
            raise InvalidInputError(
                f"invalid {name}: {'; '.join(f'{where}: {message}' for where, message in problems)}",
                location=problems[0][0] if problems and problems[0][0] != "rule" else None,
                hint="fix the field named above (run `norma docs matching` for the rule format)",
            ) from None

    @classmethod
    def from_stored(cls, data: Mapping[str, Any]) -> Rule:
        """A rule a store kept, read back: every check applies except the metadata limits (its metadata was checked
        on its way in, under the limits of its day). Errors are pydantic's ``ValidationError``: stored data that
        fails is the store's problem, not the caller's input."""
        rule = cls.__new__(cls)
        cls.__pydantic_validator__.validate_python(dict(data), self_instance=rule, context={_STORED: True})
        return rule

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

    @field_validator("scenario_id", "step_id")
    @classmethod
    def _no_control_characters(cls, value: str | None) -> str | None:
        if value is not None and any(ord(c) < 32 for c in value):
            raise ValueError("must not contain control characters")
        return value

    @field_validator("metadata")
    @classmethod
    def _metadata_is_json(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        if isinstance(info.context, Mapping) and info.context.get(_STORED):
            return value  # checked on its way in, under the limits of its day: a store must read back what it kept
        checked: dict[str, Any] = JsonChecker().check(value)
        return checked

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
        return self

    @model_validator(mode="after")
    def _checks_fit_the_rule(self) -> Rule:
        seen: dict[str, int] = {}
        for index, check in enumerate(self.checks):
            if check.id in seen:
                raise _located(("checks", index, "id"), f"duplicate of checks[{seen[check.id]}].id ({check.id!r})")
            seen[check.id] = index
            if isinstance(check, JudgeCheck) and check.criterion is None and not self.action_text.strip():
                raise _located(
                    ("checks", index, "criterion"),
                    "a judge check needs a criterion when the rule has no action_text",
                )
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


def _located(loc: tuple[str | int, ...], message: str) -> pydantic.ValidationError:
    """A validation error about the field at ``loc`` (a model validator's own errors would name the whole rule)."""
    return pydantic.ValidationError.from_exception_data(
        "Rule",
        [
            InitErrorDetails(
                type=PydanticCustomError("value_error", "{message}", {"message": message}), loc=loc, input=None
            )
        ],
    )


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


def validate_tenant_id(tenant_id: str) -> str:
    """``tenant_id`` if it is a usable tenant id, else InvalidInputError."""
    if not isinstance(tenant_id, str) or not tenant_id or tenant_id != tenant_id.strip():
        raise InvalidInputError(
            f"tenant id {tenant_id!r} must be a non-empty string without leading or trailing spaces",
            hint="pass the tenant id exactly as it was created",
        )
    if len(tenant_id) > MAX_RULE_ID_LENGTH or any(ord(c) < 32 for c in tenant_id):
        raise InvalidInputError(f"tenant id {tenant_id[:40]!r} is too long or has control characters")
    return tenant_id
