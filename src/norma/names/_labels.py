"""A MIID query's labels: one validated, immutable model, the checks of each label and the validator's defaults.

A query's labels are ``{"variation_count", "phonetic_similarity", "orthographic_similarity", "rule_based":
{"selected_rules", "rule_percentage", ...}}``, what the validator draws and :func:`norma.names.build_query`
returns. :class:`Labels` holds them checked once, with the validator's defaults filled in:

* no ``phonetic_similarity`` / ``orthographic_similarity`` (or ``None``): :data:`DEFAULT_DISTRIBUTION`;
* selected rules without a ``rule_percentage``: :data:`DEFAULT_RULE_PERCENTAGE`;
* no ``rule_based`` (or an empty one): no rules, and the final score is 0.8 * base; a ``rule_based`` without
  ``selected_rules`` scores the same (its metrics still report a rule compliance of 0); an empty
  ``selected_rules`` list makes the final score the base score.

``Labels(...)`` is strict (unknown fields are errors); :meth:`Labels.from_mapping` reads a query's labels dict as
the validator does, ignoring the keys scoring does not read (``rule_descriptions``, ``percentage``...), and names
the faulty field as ``labels.<field>``. The positional functions of the validator's interface
(``variation_quality``, ``generate_variations``, ``score_upper_bound``) check their arguments with the same checks
and fall back on the same defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field, model_validator

from norma.errors import InvalidInputError
from norma.names._validate import check_count, check_fraction, check_str_list

__all__ = [
    "DEFAULT_DISTRIBUTION",
    "DEFAULT_RULE_PERCENTAGE",
    "LEVELS",
    "Labels",
    "RuleBased",
    "check_distribution",
    "check_labels",
    "check_rule_based",
]

LEVELS = ("Light", "Medium", "Far")
"""The similarity levels, in the order the validator scores them."""

DEFAULT_DISTRIBUTION: Mapping[str, float] = MappingProxyType({"Medium": 1.0})
"""The validator's level distribution when the labels give none (``None``)."""

DEFAULT_RULE_PERCENTAGE = 30
"""The validator's rule percentage when ``rule_based`` has selected rules but no ``rule_percentage``."""

_FIELDS = ("variation_count", "phonetic_similarity", "orthographic_similarity", "rule_based")
_RULE_FIELDS = ("selected_rules", "rule_percentage")
_LABELS_HINT = 'pass {"variation_count": 10, "phonetic_similarity": {...}, ...}, as build_query returns'
_RULE_BASED_HINT = f'use {{"selected_rules": [...], "rule_percentage": {DEFAULT_RULE_PERCENTAGE}}}'


def check_distribution(value: object, what: str) -> dict[str, float]:
    """Return a similarity distribution such as ``{"Light": 0.2, "Medium": 0.6, "Far": 0.2}``.

    ``None`` means :data:`DEFAULT_DISTRIBUTION`. Keys must be similarity levels, values numbers in ``[0, 1]``.
    """
    if value is None:
        return dict(DEFAULT_DISTRIBUTION)
    if not isinstance(value, Mapping):
        raise InvalidInputError(
            f"{what} must be a mapping of level to fraction, not {type(value).__name__}",
            location=what,
            hint='use {"Light": 0.2, "Medium": 0.6, "Far": 0.2}',
        )
    out: dict[str, float] = {}
    for key, fraction in value.items():
        if key not in LEVELS:
            raise InvalidInputError(
                f"{what} has an unknown similarity level {key!r}",
                location=f"{what}.{key}",
                hint="levels are Light, Medium and Far",
            )
        out[key] = check_fraction(fraction, f"{what}.{key}")
    return out


def _rule_fields(value: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The checked ``selected_rules`` (a tuple) and ``rule_percentage`` (a float) of ``value``, where present."""
    out: dict[str, Any] = {}
    if "selected_rules" in value:
        out["selected_rules"] = tuple(check_str_list(value["selected_rules"], f"{prefix}selected_rules"))
    if "rule_percentage" in value:
        out["rule_percentage"] = check_fraction(value["rule_percentage"], f"{prefix}rule_percentage", upper=100.0)
    return out


def _not_a_mapping(value: object, what: str) -> InvalidInputError:
    return InvalidInputError(
        f"{what} must be a mapping, not {type(value).__name__}", location=what, hint=_RULE_BASED_HINT
    )


def check_rule_based(value: object) -> Mapping[str, Any] | None:
    """Check the ``rule_based`` labels: ``None`` or a mapping whose ``selected_rules`` (if any) is a list of str
    and whose ``rule_percentage`` (if any) is a number in [0, 100]; returns ``value`` itself."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _not_a_mapping(value, "rule_based")
    _rule_fields(value, "rule_based.")
    return value


def check_labels(labels: object) -> Mapping[str, Any]:
    """Return ``labels`` if it is a mapping with a ``variation_count``; else raise :class:`InvalidInputError`."""
    if not isinstance(labels, Mapping):
        raise InvalidInputError(
            f"labels must be an object, not {type(labels).__name__}", location="labels", hint=_LABELS_HINT
        )
    if "variation_count" not in labels:
        raise InvalidInputError("labels lack variation_count", location="labels.variation_count")
    return labels


def _unknown(data: Mapping[str, Any], fields: tuple[str, ...], prefix: str) -> None:
    """Raise on the first key of ``data`` that is not one of ``fields`` (named ``prefix + key``)."""
    for key in data:
        if key not in fields:
            raise InvalidInputError(
                f"unknown field {prefix}{key}",
                location=f"{prefix}{key}",
                hint=f"the fields are {', '.join(fields)}",
            )


def _invalid_input(error: pydantic.ValidationError, what: str) -> InvalidInputError:
    """The :class:`InvalidInputError` a check raised inside pydantic's validation, or one describing ``error``."""
    items = error.errors()
    for item in items:
        found = item.get("ctx", {}).get("error")
        if isinstance(found, InvalidInputError):
            return found
    first = items[0]
    where = ".".join(str(part) for part in first["loc"])
    return InvalidInputError(f"invalid {what}: {first['msg']}", location=where or None)


class RuleBased(BaseModel):
    """The ``rule_based`` labels: the rules to follow, and the share of the variations that should follow them."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)

    selected_rules: tuple[str, ...] | None = None
    """The rule ids (``RULE_CATALOG``); ``None`` when the labels name none (the rule score then counts as 0)."""
    rule_percentage: float = Field(default=float(DEFAULT_RULE_PERCENTAGE), ge=0.0, le=100.0)
    """How many of the variations, in percent, should follow the rules (used when rules are selected)."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except pydantic.ValidationError as exc:
            raise _invalid_input(exc, "rule_based") from None

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        if isinstance(data, RuleBased):
            return data
        if not isinstance(data, Mapping):
            raise _not_a_mapping(data, "rule_based")
        _unknown(data, _RULE_FIELDS, "")
        return _rule_fields(data, "")

    def to_dict(self) -> dict[str, Any]:
        """The ``rule_based`` dict of a query (``selected_rules`` only when the labels name rules)."""
        out: dict[str, Any] = {}
        if self.selected_rules is not None:
            out["selected_rules"] = list(self.selected_rules)
        out["rule_percentage"] = self.rule_percentage
        return out


class Labels(BaseModel):
    """A MIID query's labels, checked, with the validator's defaults filled in (see the module docstring).

    Building one with a bad field raises :class:`~norma.errors.InvalidInputError` naming the field (it is also a
    ``ValueError``); :meth:`from_mapping` reads a query's labels dict.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)

    variation_count: int | float
    """How many variations the query asks for (a finite number >= 0; the generator needs an integer)."""
    phonetic_similarity: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_DISTRIBUTION))
    """Share of the variations wanted in each phonetic similarity level, e.g. ``{"Light": 0.2, "Medium": 0.8}``."""
    orthographic_similarity: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_DISTRIBUTION))
    """Share of the variations wanted in each orthographic similarity level."""
    rule_based: RuleBased | None = None
    """The rules and their share; ``None`` when the labels have no (or an empty) ``rule_based``."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except pydantic.ValidationError as exc:
            raise _invalid_input(exc, "labels") from None

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        if isinstance(data, Labels):
            return data
        if not isinstance(data, Mapping):
            raise InvalidInputError(
                f"labels must be an object, not {type(data).__name__}", location="labels", hint=_LABELS_HINT
            )
        if "variation_count" not in data:
            raise InvalidInputError("labels lack variation_count", location="variation_count")
        _unknown(data, _FIELDS, "")
        # In the order variation_quality checks its arguments, so the first error is the one it would raise.
        phonetic = check_distribution(data.get("phonetic_similarity"), "phonetic_similarity")
        orthographic = check_distribution(data.get("orthographic_similarity"), "orthographic_similarity")
        count = check_count(data["variation_count"], "variation_count")
        rule_based = data.get("rule_based")
        if rule_based is not None and not isinstance(rule_based, RuleBased):
            if not isinstance(rule_based, Mapping):
                raise _not_a_mapping(rule_based, "rule_based")
            _unknown(rule_based, _RULE_FIELDS, "rule_based.")
            rule_based = RuleBased.model_construct(**_rule_fields(rule_based, "rule_based.")) if rule_based else None
        return {
            "variation_count": count,
            "phonetic_similarity": phonetic,
            "orthographic_similarity": orthographic,
            "rule_based": rule_based,
        }

    @classmethod
    def from_mapping(cls, labels: object) -> Labels:
        """The labels of a query dict, as the validator reads them: keys scoring does not read are ignored.

        Raises:
            InvalidInputError: ``labels`` is not a mapping, lacks ``variation_count`` or has a bad value; the
                location (and the message) name the field as ``labels.<field>``.
        """
        mapping = check_labels(labels)
        known: dict[str, Any] = {key: mapping[key] for key in _FIELDS if key in mapping}
        rule_based = known.get("rule_based")
        if isinstance(rule_based, Mapping) and rule_based:
            # Keep only what scoring reads (not rule_descriptions or percentage), and keep a rule_based that had
            # only such keys: it is not "no rule_based" (the metrics report its rule compliance).
            read = {key: rule_based[key] for key in _RULE_FIELDS if key in rule_based}
            known["rule_based"] = read or RuleBased()
        try:
            return cls(**known)
        except InvalidInputError as exc:
            raise _in_labels_terms(exc) from None

    @classmethod
    def of(cls, labels: Labels | Mapping[str, Any]) -> Labels:
        """``labels`` itself if it is a :class:`Labels`, else :meth:`from_mapping` of it."""
        return labels if isinstance(labels, Labels) else cls.from_mapping(labels)

    def to_dict(self) -> dict[str, Any]:
        """The labels as a query's dict (``rule_based`` only when there is one): what the positional functions and
        :meth:`from_mapping` take."""
        out: dict[str, Any] = {
            "variation_count": self.variation_count,
            "phonetic_similarity": dict(self.phonetic_similarity),
            "orthographic_similarity": dict(self.orthographic_similarity),
        }
        if self.rule_based is not None:
            out["rule_based"] = self.rule_based.to_dict()
        return out


def _in_labels_terms(exc: InvalidInputError) -> InvalidInputError:
    """``exc`` with the field it names written ``labels.<field>`` (message and location; the hint is kept)."""
    message = exc.message
    head = message.split(" ", 1)[0]
    if head.split(".", 1)[0].split("[", 1)[0] in _FIELDS:
        message = f"labels.{message}"
    location = f"labels.{exc.location}" if exc.location else "labels"
    return InvalidInputError(message, source=exc.source, location=location, hint=exc.hint)
