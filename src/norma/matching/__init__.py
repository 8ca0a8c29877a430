"""Which of a tenant's rules apply to a user message (ADR-002): hybrid vector + BM25, priority and scope.

* :class:`Rule`, :class:`Scope`, :class:`SessionState` — the rule and the conversation it is matched in.
* :class:`RuleMatcher` — a tenant's rules compiled into in-memory indexes; ``match`` / ``match_many`` /
  ``amatch`` return :class:`MatchedRule` lists (a :class:`MatchResult`) with a :class:`MatchExplanation` each.
* :class:`MatchConfig` — every weight, threshold and switch; ``MatchConfig.adr()`` is ADR-002 exactly.
* :func:`load_rules` — rules from a YAML / JSON file.
* :func:`generate_examples` / :func:`fill_examples` — example messages for rules, written by an LLM (docs/llm.md).

See docs/matching.md.
"""

from __future__ import annotations

from norma.matching._config import MatchConfig
from norma.matching._examples import ExamplesResult, examples_prompt, fill_examples, generate_examples, parse_examples
from norma.matching._files import load_rules
from norma.matching._lexical import tokenize
from norma.matching._matcher import RuleMatcher
from norma.matching._models import (
    MAX_RULE_ID_LENGTH,
    MAX_RULE_ITEMS,
    MAX_RULE_TEXT_CHARS,
    Rule,
    Scope,
    SessionState,
    rule_fingerprint,
    rule_texts,
)
from norma.matching._results import DroppedRule, MatchedRule, MatchExplanation, MatchResult

__all__ = [
    "DroppedRule",
    "ExamplesResult",
    "MAX_RULE_ID_LENGTH",
    "MAX_RULE_ITEMS",
    "MAX_RULE_TEXT_CHARS",
    "MatchConfig",
    "MatchExplanation",
    "MatchResult",
    "MatchedRule",
    "Rule",
    "RuleMatcher",
    "Scope",
    "SessionState",
    "examples_prompt",
    "fill_examples",
    "generate_examples",
    "load_rules",
    "parse_examples",
    "rule_fingerprint",
    "rule_texts",
    "tokenize",
]
