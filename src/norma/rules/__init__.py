"""The rule model every capability and the store share: the bottom layer of norma, next to ``norma.errors``.

* :class:`Rule`, :class:`Scope` — one statement of expected behaviour and where it applies.
* :func:`rule_texts` / :func:`rule_fingerprint` — the texts of a rule that get embedded, and a digest that changes
  exactly when they do (a store knows when a stored vector is stale).
* :func:`validate_tenant_id` and the limits (:data:`MAX_RULE_ID_LENGTH`, :data:`MAX_RULE_TEXT_CHARS`,
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

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.rules._checks import CHECK_KINDS as CHECK_KINDS
    from norma.rules._checks import MAX_CHECK_TERM_CHARS as MAX_CHECK_TERM_CHARS
    from norma.rules._checks import MAX_JUDGE_VOTES as MAX_JUDGE_VOTES
    from norma.rules._checks import PII_KINDS as PII_KINDS
    from norma.rules._checks import Check as Check
    from norma.rules._checks import ContainsCheck as ContainsCheck
    from norma.rules._checks import JsonCheck as JsonCheck
    from norma.rules._checks import JudgeCheck as JudgeCheck
    from norma.rules._checks import LengthCheck as LengthCheck
    from norma.rules._checks import NoPiiCheck as NoPiiCheck
    from norma.rules._checks import RegexCheck as RegexCheck
    from norma.rules._checks import When as When
    from norma.rules._model import MAX_METADATA_CHARS as MAX_METADATA_CHARS
    from norma.rules._model import MAX_METADATA_DEPTH as MAX_METADATA_DEPTH
    from norma.rules._model import MAX_METADATA_VALUES as MAX_METADATA_VALUES
    from norma.rules._model import MAX_RULE_ID_LENGTH as MAX_RULE_ID_LENGTH
    from norma.rules._model import MAX_RULE_ITEMS as MAX_RULE_ITEMS
    from norma.rules._model import MAX_RULE_TEXT_CHARS as MAX_RULE_TEXT_CHARS
    from norma.rules._model import Rule as Rule
    from norma.rules._model import Scope as Scope
    from norma.rules._model import describe_validation_error as describe_validation_error
    from norma.rules._model import rule_fingerprint as rule_fingerprint
    from norma.rules._model import rule_texts as rule_texts
    from norma.rules._model import validate_tenant_id as validate_tenant_id
    from norma.rules._rulebook import MAX_RULEBOOK_BYTES as MAX_RULEBOOK_BYTES
    from norma.rules._rulebook import MAX_RULEBOOK_RULES as MAX_RULEBOOK_RULES
    from norma.rules._rulebook import MAX_RULEBOOK_VALUES as MAX_RULEBOOK_VALUES
    from norma.rules._rulebook import RULEBOOK_FORMAT as RULEBOOK_FORMAT
    from norma.rules._rulebook import Rulebook as Rulebook
    from norma.rules._rulebook import RulebookError as RulebookError
    from norma.rules._rulebook import RulebookProblem as RulebookProblem
    from norma.rules._rulebook import dump_rulebook as dump_rulebook
    from norma.rules._rulebook import load_rulebook as load_rulebook
    from norma.rules._vocabulary import FailOn as FailOn
    from norma.rules._vocabulary import Severity as Severity
    from norma.rules._vocabulary import Verdict as Verdict

_PUBLIC: dict[str, str] = {
    "Check": "_checks",
    "validate_tenant_id": "_model",
    "ContainsCheck": "_checks",
    "dump_rulebook": "_rulebook",
    "FailOn": "_vocabulary",
    "JsonCheck": "_checks",
    "JudgeCheck": "_checks",
    "LengthCheck": "_checks",
    "load_rulebook": "_rulebook",
    "MAX_CHECK_TERM_CHARS": "_checks",
    "MAX_JUDGE_VOTES": "_checks",
    "MAX_METADATA_CHARS": "_model",
    "MAX_METADATA_DEPTH": "_model",
    "MAX_METADATA_VALUES": "_model",
    "MAX_RULE_ID_LENGTH": "_model",
    "MAX_RULE_ITEMS": "_model",
    "MAX_RULE_TEXT_CHARS": "_model",
    "MAX_RULEBOOK_BYTES": "_rulebook",
    "MAX_RULEBOOK_RULES": "_rulebook",
    "MAX_RULEBOOK_VALUES": "_rulebook",
    "NoPiiCheck": "_checks",
    "RegexCheck": "_checks",
    "Rule": "_model",
    "rule_fingerprint": "_model",
    "rule_texts": "_model",
    "Rulebook": "_rulebook",
    "RulebookError": "_rulebook",
    "RulebookProblem": "_rulebook",
    "Scope": "_model",
    "Severity": "_vocabulary",
    "Verdict": "_vocabulary",
    "When": "_checks",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "CHECK_KINDS": "_checks",
    "describe_validation_error": "_model",
    "PII_KINDS": "_checks",
    "RULEBOOK_FORMAT": "_rulebook",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
