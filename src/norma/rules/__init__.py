"""The rule model every capability and the store share: the bottom layer of norma, next to ``norma.errors``.

* :class:`Rule`, :class:`Scope` — one statement of expected behaviour and where it applies.
* :func:`rule_texts` / :func:`rule_fingerprint` — the texts of a rule that get embedded, and a digest that changes
  exactly when they do (a store knows when a stored vector is stale).
* :func:`check_tenant_id` and the limits (:data:`MAX_RULE_ID_LENGTH`, :data:`MAX_RULE_TEXT_CHARS`,
  :data:`MAX_RULE_ITEMS`, and for ``metadata`` :data:`MAX_METADATA_DEPTH`, :data:`MAX_METADATA_VALUES`,
  :data:`MAX_METADATA_CHARS`): the same for every way in (Python, a rulebook file, a request body), and chosen so
  that every rule the store accepts fits in a rulebook, so an export always imports back.
* Checks — executable statements about an output a rule carries (``Rule.checks``): :data:`Check`, one model per
  kind (:class:`ContainsCheck`, :class:`RegexCheck`, :class:`LengthCheck`, :class:`JsonCheck`,
  :class:`NoPiiCheck`, :class:`JudgeCheck`), :class:`Severity`, :class:`When`; validated when the rule is built
  (:mod:`norma.checks` evaluates them).
* Rulebooks — a tenant's rules as one YAML / JSON file: :func:`load_rulebook` (the one reader of the format; it
  reports every problem in one :class:`RulebookError`; :data:`MAX_RULEBOOK_RULES`, :data:`MAX_RULEBOOK_BYTES`,
  :data:`MAX_RULEBOOK_VALUES`) and :func:`dump_rulebook` (whose output it reads back into equal rules).
* The shared vocabulary (issue #48): :class:`Severity`, :class:`Verdict` (``pass`` / ``fail`` / ``skip`` of a
  check, a rule, a turn) and the fail-on policy :class:`FailOn`.

This package imports nothing of norma but ``errors`` and ``_safety``. See docs/store.md for the rulebook format and
docs/matching.md for the rule fields.
"""

from __future__ import annotations

from norma.rules._checks import (
    CHECK_KINDS,
    MAX_CHECK_TERM_CHARS,
    MAX_JUDGE_VOTES,
    PII_KINDS,
    Check,
    ContainsCheck,
    JsonCheck,
    JudgeCheck,
    LengthCheck,
    NoPiiCheck,
    RegexCheck,
    When,
)
from norma.rules._model import (
    MAX_METADATA_CHARS,
    MAX_METADATA_DEPTH,
    MAX_METADATA_VALUES,
    MAX_RULE_ID_LENGTH,
    MAX_RULE_ITEMS,
    MAX_RULE_TEXT_CHARS,
    Rule,
    Scope,
    check_tenant_id,
    describe_validation_error,
    rule_fingerprint,
    rule_texts,
)
from norma.rules._rulebook import (
    MAX_RULEBOOK_BYTES,
    MAX_RULEBOOK_RULES,
    MAX_RULEBOOK_VALUES,
    RULEBOOK_FORMAT,
    Rulebook,
    RulebookError,
    RulebookProblem,
    dump_rulebook,
    load_rulebook,
)
from norma.rules._vocabulary import FailOn, Severity, Verdict

__all__ = [
    "CHECK_KINDS",
    "Check",
    "ContainsCheck",
    "FailOn",
    "JsonCheck",
    "JudgeCheck",
    "LengthCheck",
    "MAX_CHECK_TERM_CHARS",
    "MAX_JUDGE_VOTES",
    "MAX_METADATA_CHARS",
    "MAX_METADATA_DEPTH",
    "MAX_METADATA_VALUES",
    "MAX_RULEBOOK_BYTES",
    "MAX_RULEBOOK_RULES",
    "MAX_RULEBOOK_VALUES",
    "MAX_RULE_ID_LENGTH",
    "MAX_RULE_ITEMS",
    "MAX_RULE_TEXT_CHARS",
    "NoPiiCheck",
    "PII_KINDS",
    "RULEBOOK_FORMAT",
    "RegexCheck",
    "Rule",
    "Rulebook",
    "RulebookError",
    "RulebookProblem",
    "Scope",
    "Severity",
    "Verdict",
    "When",
    "check_tenant_id",
    "describe_validation_error",
    "dump_rulebook",
    "load_rulebook",
    "rule_fingerprint",
    "rule_texts",
]
