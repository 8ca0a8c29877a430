"""MIID name-variation scoring: rule evaluators, rule compliance, phonetic and orthographic similarity, quality.

What it reproduces: the name-variation scorer the MIID validator published (yanez-compliance/MIID-subnet, commit
62bb538, the scoring files unchanged at 659496b). MIID removed name-variation scoring from its open repository on
2026-06-09 (commits b171f87 and 5e9b16e); the subnet now scores image variations on a closed grading service, which
norma does not model.

Every function takes ``compat="miid"`` (the default: the MIID validator's result to the last bit, including its
dependence on ``PYTHONHASHSEED``) or ``compat="stable"`` (deterministic across processes and Python versions, no
gaps between similarity levels, no float overshoot). ``docs/design/010-names-compat.md`` compares the two.

The functions whose result depends on Python's ``hash()`` of a string in compat="miid" take ``hash_seed=``: the
validator's result under that ``PYTHONHASHSEED``, the same in every process (:func:`str_hash` computes CPython's
keyed string hash); ``hash_seed=None``, the default, uses the current process's own ``hash()``.

A query's labels (``build_query(...).labels``) can be given as they are to the ``*_from_labels`` functions and to
the batch scorer; :class:`Labels` is the checked form they are read into, with the validator's defaults.
"""

from __future__ import annotations

from norma.names._batch import (
    MAX_HASH_SEEDS,
    MAX_RECORD_BYTES,
    NameScore,
    ScoredRecord,
    ScoreOptions,
    count_records,
    read_lines,
    score_jsonl,
    score_over_seeds,
    score_record,
    seed_summary,
)
from norma.names._bound import score_upper_bound
from norma.names._catalog import (
    EXTRA_RULES,
    RULE_CATALOG,
    RULE_DESCRIPTIONS,
    format_rules_for_query,
    rule_description,
)
from norma.names._compat import COMPATS, SIMILARITY_LEVELS
from norma.names._compliance import (
    evaluate_rule_compliance,
    evaluator_errors,
    reset_evaluator_errors,
    rule_compliance_score,
)
from norma.names._evaluators import RULE_EVALUATORS, evaluate_rule
from norma.names._from_labels import generate_from_labels, quality_from_labels, upper_bound_from_labels
from norma.names._generate import generate_variations
from norma.names._labels import DEFAULT_DISTRIBUTION, DEFAULT_RULE_PERCENTAGE, Labels, RuleBased
from norma.names._pyhash import MAX_HASH_SEED, str_hash
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
    "DEFAULT_DISTRIBUTION",
    "DEFAULT_RULE_PERCENTAGE",
    "EXTRA_RULES",
    "Labels",
    "MAX_HASH_SEED",
    "MAX_HASH_SEEDS",
    "MAX_RECORD_BYTES",
    "NameScore",
    "QUERY_DISTRIBUTIONS",
    "RULE_CATALOG",
    "RULE_DESCRIPTIONS",
    "RULE_EVALUATORS",
    "RuleBased",
    "SIMILARITY_LEVELS",
    "ScoreOptions",
    "ScoredRecord",
    "VariationQuery",
    "build_query",
    "count_records",
    "evaluate_rule",
    "evaluate_rule_compliance",
    "evaluator_errors",
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
    "read_lines",
    "render_distribution",
    "reset_evaluator_errors",
    "rule_compliance_score",
    "rule_description",
    "score_jsonl",
    "score_over_seeds",
    "score_record",
    "score_upper_bound",
    "seed_summary",
    "str_hash",
    "transliterate",
    "upper_bound_from_labels",
    "validate_query_template",
    "variation_quality",
]
