"""Checks: executable statements about an AI output that a rule carries (issue #38).

A check is data: one frozen model per kind, told apart by ``kind`` (:data:`Check`). Everything a check needs is
validated when the rule is built, so a bad check is refused with its rule, index and field
(``rules[3].checks[1].pattern``): a regular expression RE2 does not accept, a JSON Schema that is not one, a term
without a letter or digit. Evaluating checks against an output is :mod:`norma.checks`'s.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from norma._safety import compile_pattern, is_unicode
from norma.errors import InvalidInputError
from norma.rules._limits import MAX_METADATA_DEPTH, MAX_RULE_ID_LENGTH, MAX_RULE_ITEMS, MAX_RULE_TEXT_CHARS, JsonChecker
from norma.rules._vocabulary import Severity

__all__ = [
    "CHECK_KINDS",
    "MAX_CHECK_TERM_CHARS",
    "MAX_JUDGE_VOTES",
    "PII_KINDS",
    "REQUIREMENT_KINDS",
    "Check",
    "ContainsCheck",
    "JsonCheck",
    "JudgeCheck",
    "LengthCheck",
    "NoPiiCheck",
    "RegexCheck",
    "Severity",
    "When",
]

CHECK_KINDS = (
    "contains",
    "not_contains",
    "regex",
    "not_regex",
    "max_chars",
    "max_words",
    "min_words",
    "json",
    "no_pii",
    "judge",
)
"""Every ``kind`` a check may have."""
REQUIREMENT_KINDS = frozenset({"contains", "regex", "min_words", "json", "judge"})
"""Kinds that state what the output must do: by default they apply only when their rule governs the turn
(``when: enforced``). The others are prohibitions (what the output must not do): by default they apply whenever
their rule matched (``when: matched``)."""
PiiKind = Literal["card", "iban", "email", "phone"]
PII_KINDS: tuple[PiiKind, ...] = ("card", "iban", "email", "phone")
"""What a ``no_pii`` check looks for: card numbers (Luhn), IBANs (mod 97), e-mail addresses, phone numbers."""
MAX_CHECK_TERM_CHARS = 200
"""Longest term of a ``contains`` / ``not_contains`` check."""
MAX_JUDGE_VOTES = 9
"""Most votes a ``judge`` check may ask for (each vote is one LLM call)."""
_MAX_SCHEMA_DEPTH = MAX_METADATA_DEPTH - 2
"""Deepest nesting of a check's JSON Schema: 59, so that the schema fits in a rulebook under its limit of 64 levels
(document, ``rules`` list, rule, ``checks`` list, check: 5 levels)."""


class When(enum.StrEnum):
    """When a check applies, from the narrowest to the widest: when its rule governs the turn (``enforced``: the
    top match, or as close to the message as it), whenever its rule matched (``matched``: as a neighbour too), or to
    every output (``always``)."""

    ENFORCED = "enforced"
    MATCHED = "matched"
    ALWAYS = "always"


class _Check(BaseModel):
    """The fields every check has."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        use_attribute_docstrings=True,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    id: str = Field(min_length=1, max_length=MAX_RULE_ID_LENGTH)
    """Unique within the rule; results name it."""
    kind: str
    """What the check does (:data:`CHECK_KINDS`); each kind is its own model."""
    severity: Severity = Severity.ERROR
    """How much a failure matters: ``error`` (default), ``warning`` or ``info``."""
    weight: float = Field(default=1.0, gt=0, allow_inf_nan=False)
    """The check's weight in a score over several checks (finite, > 0)."""
    when: When | None = None
    """``enforced``: only when the rule governs the turn; ``matched``: whenever the rule matched the message, as a
    neighbour too; ``always``: on every output. Unset (None): ``enforced`` for requirements
    (:data:`REQUIREMENT_KINDS`), ``matched`` for prohibitions; :attr:`applies` is the level in force."""

    @property
    def requirement(self) -> bool:
        """Whether the check states what the output must do (:data:`REQUIREMENT_KINDS`), not what it must not."""
        return self.kind in REQUIREMENT_KINDS

    @property
    def applies(self) -> When:
        """The level in force: ``when``, else the kind's default."""
        if self.when is not None:
            return self.when
        return When.ENFORCED if self.requirement else When.MATCHED

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str) -> str:
        if value != value.strip():
            raise ValueError("must have no leading or trailing spaces")
        if any(ord(c) < 32 for c in value) or not is_unicode(value):
            raise ValueError("must not contain control characters or invalid Unicode")
        return value


class ContainsCheck(_Check):
    """``contains``: the output mentions any (``mode: any``, default) or all (``mode: all``) of ``terms``.
    ``not_contains``: the output mentions none of them (``any``), or not all of them together (``all``).

    Terms are found case- and accent-insensitively, on word boundaries (scripts written without spaces, such as
    Chinese and Japanese, have no word boundaries to respect)."""

    kind: Literal["contains", "not_contains"]
    terms: tuple[str, ...] = Field(min_length=1, max_length=MAX_RULE_ITEMS)
    """Words or phrases, each with at least one letter or digit and no leading or trailing spaces."""
    mode: Literal["any", "all"] = "any"
    """``any`` (default) or ``all`` of the terms."""

    @field_validator("terms", mode="before")
    @classmethod
    def _list_of_terms(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("must be a list of terms, not one string")
        return tuple(value) if isinstance(value, list) else value

    @field_validator("terms")
    @classmethod
    def _usable_terms(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for i, term in enumerate(value):
            if len(term) > MAX_CHECK_TERM_CHARS:
                raise ValueError(f"term {i} is {len(term):,} characters, over the limit of {MAX_CHECK_TERM_CHARS}")
            if term != term.strip():
                raise ValueError(f"term {i} has leading or trailing spaces")
            if not is_unicode(term) or not any(c.isalnum() for c in term):
                raise ValueError(f"term {i} ({term[:40]!r}) has no letter or digit")
        return value


class RegexCheck(_Check):
    """``regex``: the output matches ``pattern`` somewhere. ``not_regex``: it matches nowhere.

    Patterns are RE2 (linear time: no back-references, no look-arounds), compiled when the rule is built; flags go
    inline (``(?i)`` for case-insensitive, ``(?m)`` for ``^`` / ``$`` at every line, ``(?s)`` for ``.`` matching
    line ends)."""

    kind: Literal["regex", "not_regex"]
    pattern: str = Field(min_length=1, max_length=MAX_RULE_TEXT_CHARS)
    """An RE2 regular expression."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        if not is_unicode(value):
            raise ValueError("is not valid Unicode")
        try:
            compile_pattern(value)
        except InvalidInputError as exc:
            raise ValueError(f"{exc.message} ({exc.hint})") from None
        return value


class LengthCheck(_Check):
    """``max_chars``: at most ``limit`` characters (code points). ``max_words`` / ``min_words``: at most / at least
    ``limit`` words, a word being a run of non-space characters holding a letter or digit (a lone ``-`` bullet is
    not a word; text without spaces, such as Chinese, counts one word per run)."""

    kind: Literal["max_chars", "max_words", "min_words"]
    limit: int = Field(ge=0)
    """The bound (>= 0; >= 1 for ``min_words``, which would otherwise always pass)."""

    @field_validator("limit")
    @classmethod
    def _min_words_positive(cls, value: int, info: ValidationInfo) -> int:
        if info.data.get("kind") == "min_words" and value < 1:
            raise ValueError("must be at least 1 for min_words (0 would always pass)")
        return value


class JsonCheck(_Check):
    """``json``: the output, or its first fenced code block marked ``json`` (or unmarked), is a JSON document;
    with ``schema``, one that the JSON Schema accepts."""

    kind: Literal["json"]
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    """A JSON Schema (its ``$schema`` picks the draft; the latest one without it), checked when the rule is built.
    Only local references (``$ref: "#/..."``) are accepted: norma never fetches a schema. Written ``schema``."""

    @field_validator("json_schema")
    @classmethod
    def _is_a_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        checked: dict[str, Any] = JsonChecker(max_depth=_MAX_SCHEMA_DEPTH).check(value, path="schema")
        remote = _remote_reference(checked)
        if remote is not None:
            raise ValueError(f"$ref {remote[:80]!r} is not local: only references inside the schema ('#/...') work")
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import validator_for

        try:
            validator_for(checked).check_schema(checked)
        except SchemaError as exc:
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in exc.path)
            raise ValueError(f"is not a valid JSON Schema: at schema{where}: {exc.message}") from None
        return checked


def _remote_reference(schema: Any) -> str | None:
    """The first ``$ref`` / ``$dynamicRef`` string of ``schema`` that does not start with ``#``, if any."""
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if key in ("$ref", "$dynamicRef") and isinstance(child, str) and not child.startswith("#"):
                    return child
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)
    return None


class NoPiiCheck(_Check):
    """``no_pii``: the output holds none of the personal data in ``kinds``: card numbers (13-19 digits passing
    Luhn), IBANs (mod 97 and the country's length), e-mail addresses, phone numbers (international ``+...`` or a
    national form; there is no checksum to confirm these)."""

    kind: Literal["no_pii"]
    kinds: tuple[PiiKind, ...] = Field(default=PII_KINDS, min_length=1)
    """Which personal data to look for (default: all of :data:`PII_KINDS`)."""

    @field_validator("kinds")
    @classmethod
    def _distinct(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError("lists a kind twice")
        return value


class JudgeCheck(_Check):
    """``judge``: an LLM decides whether the output follows ``criterion`` (default: the rule's ``action_text``).
    Without an LLM the check is skipped, never passed."""

    kind: Literal["judge"]
    criterion: str | None = Field(default=None, max_length=MAX_RULE_TEXT_CHARS)
    """What the output must do; None: the rule's ``action_text`` (a rule without one needs a criterion)."""
    votes: int = Field(default=1, ge=1, le=MAX_JUDGE_VOTES)
    """How many times to ask (odd, so a majority decides)."""

    @field_validator("criterion")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank (leave it out to judge by the rule's action_text)")
        return value

    @field_validator("votes")
    @classmethod
    def _odd(cls, value: int) -> int:
        if value % 2 == 0:
            raise ValueError("must be odd, so that a majority decides")
        return value


Check = Annotated[
    ContainsCheck | RegexCheck | LengthCheck | JsonCheck | NoPiiCheck | JudgeCheck,
    Field(discriminator="kind"),
]
"""One check, of the model its ``kind`` names."""
