"""MIID name-variation scoring: rule evaluators, rule compliance, phonetic and orthographic similarity, quality.

Every function takes ``compat="miid"`` (the default: the MIID validator's result to the last bit, including its
dependence on ``PYTHONHASHSEED``) or ``compat="stable"`` (deterministic across processes and Python versions, no
gaps between similarity levels, no float overshoot). ``docs/design/010-names-compat.md`` compares the two.
"""

from __future__ import annotations

from norma.names._batch import MAX_RECORD_BYTES, ScoredRecord, count_records, score_jsonl, score_record
from norma.names._bound import score_upper_bound
from norma.names._catalog import (
    EXTRA_RULES,
    RULE_CATALOG,
    RULE_DESCRIPTIONS,
    format_rules_for_query,
    rule_description,
)
from norma.names._compat import COMPATS, SIMILARITY_LEVELS
from norma.names._compliance import evaluate_rule_compliance, rule_compliance_score
from norma.names._evaluators import RULE_EVALUATORS, evaluate_rule
from norma.names._generate import generate_variations
from norma.names._labels import generate_from_labels, quality_from_labels, upper_bound_from_labels
from norma.names._quality import part_score, variation_quality
from norma.names._query import (
    QUERY_DISTRIBUTIONS,
    VariationQuery,
    build_query,
    query_phrasing_prompt,
    query_template,
    query_template_issues,
    random_labels,
    render_distribution,
    validate_query_template,
)
from norma.names._similarity import orthographic_similarity, phonetic_similarity, transliterate

__all__ = [
    "COMPATS",
    "EXTRA_RULES",
    "MAX_RECORD_BYTES",
    "QUERY_DISTRIBUTIONS",
    "RULE_CATALOG",
    "RULE_DESCRIPTIONS",
    "RULE_EVALUATORS",
    "SIMILARITY_LEVELS",
    "ScoredRecord",
    "VariationQuery",
    "build_query",
    "count_records",
    "evaluate_rule",
    "evaluate_rule_compliance",
    "format_rules_for_query",
    "generate_from_labels",
    "generate_variations",
    "orthographic_similarity",
    "part_score",
    "phonetic_similarity",
    "quality_from_labels",
    "query_phrasing_prompt",
    "query_template",
    "query_template_issues",
    "random_labels",
    "render_distribution",
    "rule_compliance_score",
    "rule_description",
    "score_jsonl",
    "score_record",
    "score_upper_bound",
    "transliterate",
    "upper_bound_from_labels",
    "validate_query_template",
    "variation_quality",
]
