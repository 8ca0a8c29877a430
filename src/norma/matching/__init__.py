"""Which of a tenant's rules apply to a user message (ADR-002): hybrid vector + BM25, priority and scope.

* :class:`Rule`, :class:`Scope` (from :mod:`norma.rules`, re-exported), :class:`SessionState` — the rule and the
  conversation it is matched in.
* :class:`RuleMatcher` — a tenant's rules compiled into in-memory indexes; ``match`` / ``match_many`` /
  ``amatch`` return :class:`MatchedRule` lists (a :class:`MatchResult`) with a :class:`MatchExplanation` each.
* :class:`MatchConfig` — every weight, threshold and switch; ``MatchConfig.adr()`` is ADR-002 exactly.
* :func:`load_rules` — rules from a YAML / JSON rulebook (read by :func:`norma.rules.load_rulebook`).
* :func:`tenant_matcher` / :class:`TenantMatchers` — a tenant's matcher built from a store's vectors, cached and
  refreshed when the tenant's version moves; :func:`candidate_matcher` — push-down over the nearest stored rules;
  :func:`snapshot_matcher` — the tenant as stored, built without writing to the store (read-only tools).
* The gate (``MatchConfig(threshold="auto")``): :class:`AppliedGate` (on every :class:`MatchResult`), measured on
  the rulebook's own examples, or :func:`calibrate_gate` from labelled messages (:func:`observe` once, then
  :func:`fit_gate` per target, to compare calibrations without matching again), stored per tenant
  (:func:`stored_gate`), or a quantile the tenant sets for its traffic (:func:`quantile_setting`,
  :func:`stored_gate_quantile`); :func:`synthesize_labelled` — positives and near misses written by an LLM, to calibrate
  without hand labels.
* :func:`generate_examples` / :func:`fill_examples` — example messages for rules, written by an LLM (docs/llm.md).
* :func:`load_labelled` / :class:`LabelledMessage` — messages with the rule ids that should apply (JSONL);
  :func:`evaluate_rulebook` — acc@1, recall@k, the gate's precision and recall, per rule, confusions;
  :func:`diagnose_rulebook` — misplaced examples, near-duplicate rules, thin or unrelated examples.

See docs/matching.md.
"""

from __future__ import annotations

from norma.matching._calibrate import CALIBRATION_PRIOR, Observed, calibrate_gate, fit_gate, observe
from norma.matching._config import MatchConfig
from norma.matching._doctor import Diagnosis, Finding, diagnose_rulebook
from norma.matching._evaluate import (
    Confusion,
    MessageOutcome,
    MultiLabelScores,
    RulebookEvaluation,
    RuleQuality,
    evaluate_rulebook,
)
from norma.matching._examples import ExamplesResult, examples_prompt, fill_examples, generate_examples, parse_examples
from norma.matching._files import load_rules
from norma.matching._gate import (
    FALLBACK_SIMILARITY,
    GATE_MIN_PROBES,
    AppliedGate,
    GateKind,
    gate_from_dict,
    gate_quantile_setting,
    quantile_setting,
)
from norma.matching._labelled import (
    LabelledMessage,
    LabelledMessagesError,
    check_labelled,
    load_labelled,
    parse_labelled,
)
from norma.matching._lexical import tokenize
from norma.matching._matcher import RuleMatcher
from norma.matching._models import SessionState
from norma.matching._results import DroppedRule, MatchedRule, MatchExplanation, MatchResult
from norma.matching._synthetic import NearMiss, SyntheticLabels, near_miss_prompt, synthesize_labelled
from norma.matching._tenants import (
    DEFAULT_REFRESH_INTERVAL,
    TenantMatchers,
    candidate_matcher,
    snapshot_matcher,
    stored_gate,
    stored_gate_quantile,
    tenant_matcher,
    tenant_matchers,
)
from norma.rules import Rule, Scope

__all__ = [
    "AppliedGate",
    "CALIBRATION_PRIOR",
    "Confusion",
    "DEFAULT_REFRESH_INTERVAL",
    "Diagnosis",
    "DroppedRule",
    "ExamplesResult",
    "FALLBACK_SIMILARITY",
    "Finding",
    "GATE_MIN_PROBES",
    "GateKind",
    "LabelledMessage",
    "LabelledMessagesError",
    "MatchConfig",
    "MatchExplanation",
    "MatchResult",
    "MatchedRule",
    "MessageOutcome",
    "MultiLabelScores",
    "NearMiss",
    "Observed",
    "Rule",
    "RuleMatcher",
    "RuleQuality",
    "RulebookEvaluation",
    "Scope",
    "SessionState",
    "SyntheticLabels",
    "TenantMatchers",
    "calibrate_gate",
    "candidate_matcher",
    "check_labelled",
    "diagnose_rulebook",
    "evaluate_rulebook",
    "examples_prompt",
    "fill_examples",
    "fit_gate",
    "gate_from_dict",
    "gate_quantile_setting",
    "generate_examples",
    "load_labelled",
    "load_rules",
    "near_miss_prompt",
    "observe",
    "parse_examples",
    "parse_labelled",
    "quantile_setting",
    "snapshot_matcher",
    "stored_gate",
    "stored_gate_quantile",
    "synthesize_labelled",
    "tenant_matcher",
    "tenant_matchers",
    "tokenize",
]
