"""Which of a tenant's rules apply to a user message (ADR-002): hybrid vector + BM25, priority and scope.

* :class:`Rule`, :class:`Scope` (from :mod:`norma.rules`), :class:`SessionState` — the rule and the conversation.
* :class:`RuleMatcher` — a tenant's rules compiled into in-memory indexes; ``match`` / ``match_many`` / ``amatch``
  return a :class:`MatchResult` of :class:`MatchedRule` with a :class:`MatchExplanation` each (``explain=True``:
  the :class:`DroppedRule` list too) and an :class:`Enforcement` (whether the rule governs the turn, and why).
  :func:`load_rules` reads a YAML / JSON rulebook; :func:`file_matcher` is a
  rulebook file's matcher, compiled once and cached.
* :class:`MatchConfig` — every weight and threshold; ``MatchConfig.adr()`` is ADR-002 exactly.
* The gate, one typed value per kind (:class:`Gate`: :class:`NoGate`, :class:`FixedGate`, :class:`RulebookGate`,
  :class:`CalibratedGate`, :class:`AdaptedGate`), on every result; :func:`calibrate_gate` sets it from labelled
  messages; :class:`HeldOut` / :func:`read_held_out` — what an adapted encoder stored for its gate.
* :func:`tenant_matcher` / :class:`TenantMatchers` / :func:`tenant_matchers` — a stored tenant's matcher, cached
  and refreshed; :func:`candidate_matcher` — push-down over the nearest stored rules, with the tenant's gate
  (:func:`tenant_gate`); :func:`snapshot_matcher` — the tenant as stored, for read-only tools.
* :func:`load_labelled` / :class:`LabelledMessage` — labelled messages; :func:`evaluate_rulebook` /
  :class:`RulebookEvaluation`; :func:`diagnose_rulebook` / :class:`Diagnosis`; :func:`generate_examples`,
  :func:`fill_examples`, :func:`synthesize_labelled` — examples and labels written by an LLM.

Names are imported on first use, so ``import norma.matching`` is cheap. See docs/matching.md.
"""

from __future__ import annotations

import importlib
import typing

if typing.TYPE_CHECKING:
    from norma.matching._calibrate import calibrate_gate
    from norma.matching._config import MatchConfig
    from norma.matching._doctor import Diagnosis, diagnose_rulebook
    from norma.matching._enforce import Enforcement, EnforcementReason
    from norma.matching._evaluate import RulebookEvaluation, evaluate_rulebook
    from norma.matching._examples import fill_examples, generate_examples
    from norma.matching._files import load_rules
    from norma.matching._gate import (
        AdaptedGate,
        CalibratedGate,
        FixedGate,
        Gate,
        HeldOut,
        NoGate,
        RulebookGate,
        read_held_out,
    )
    from norma.matching._labelled import LabelledMessage, LabelledMessagesError, load_labelled
    from norma.matching._matcher import RuleMatcher
    from norma.matching._models import SessionState
    from norma.matching._results import DroppedRule, MatchedRule, MatchedRuleData, MatchExplanation, MatchResult
    from norma.matching._snapshot import file_matcher
    from norma.matching._synthetic import synthesize_labelled
    from norma.matching._tenants import (
        TenantMatchers,
        candidate_matcher,
        snapshot_matcher,
        tenant_gate,
        tenant_matcher,
        tenant_matchers,
    )
    from norma.rules import Rule, Scope

_WHERE = {
    "AdaptedGate": "_gate",
    "CalibratedGate": "_gate",
    "Diagnosis": "_doctor",
    "DroppedRule": "_results",
    "Enforcement": "_enforce",
    "EnforcementReason": "_enforce",
    "FixedGate": "_gate",
    "Gate": "_gate",
    "HeldOut": "_gate",
    "LabelledMessage": "_labelled",
    "LabelledMessagesError": "_labelled",
    "MatchConfig": "_config",
    "MatchExplanation": "_results",
    "MatchResult": "_results",
    "MatchedRule": "_results",
    "MatchedRuleData": "_results",
    "NoGate": "_gate",
    "Rule": "norma.rules",
    "RuleMatcher": "_matcher",
    "RulebookEvaluation": "_evaluate",
    "RulebookGate": "_gate",
    "Scope": "norma.rules",
    "SessionState": "_models",
    "TenantMatchers": "_tenants",
    "calibrate_gate": "_calibrate",
    "candidate_matcher": "_tenants",
    "diagnose_rulebook": "_doctor",
    "evaluate_rulebook": "_evaluate",
    "file_matcher": "_snapshot",
    "fill_examples": "_examples",
    "generate_examples": "_examples",
    "load_labelled": "_labelled",
    "load_rules": "_files",
    "read_held_out": "_gate",
    "snapshot_matcher": "_tenants",
    "synthesize_labelled": "_synthetic",
    "tenant_gate": "_tenants",
    "tenant_matcher": "_tenants",
    "tenant_matchers": "_tenants",
}

__all__ = [
    "AdaptedGate",
    "CalibratedGate",
    "Diagnosis",
    "DroppedRule",
    "Enforcement",
    "EnforcementReason",
    "FixedGate",
    "Gate",
    "HeldOut",
    "LabelledMessage",
    "LabelledMessagesError",
    "MatchConfig",
    "MatchExplanation",
    "MatchResult",
    "MatchedRule",
    "MatchedRuleData",
    "NoGate",
    "Rule",
    "RuleMatcher",
    "RulebookEvaluation",
    "RulebookGate",
    "Scope",
    "SessionState",
    "TenantMatchers",
    "calibrate_gate",
    "candidate_matcher",
    "diagnose_rulebook",
    "evaluate_rulebook",
    "file_matcher",
    "fill_examples",
    "generate_examples",
    "load_labelled",
    "load_rules",
    "read_held_out",
    "snapshot_matcher",
    "synthesize_labelled",
    "tenant_gate",
    "tenant_matcher",
    "tenant_matchers",
]


def __getattr__(name: str) -> typing.Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'norma.matching' has no attribute {name!r}")
    module = importlib.import_module(where if where.startswith("norma.") else f"norma.matching.{where}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
