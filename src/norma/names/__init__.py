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

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.names._batch import MAX_HASH_SEEDS as MAX_HASH_SEEDS
    from norma.names._batch import MAX_RECORD_BYTES as MAX_RECORD_BYTES
    from norma.names._batch import NameScore as NameScore
    from norma.names._batch import ScoredRecord as ScoredRecord
    from norma.names._batch import ScoreOptions as ScoreOptions
    from norma.names._batch import count_records as count_records
    from norma.names._batch import read_lines as read_lines
    from norma.names._batch import score_jsonl as score_jsonl
    from norma.names._batch import score_over_seeds as score_over_seeds
    from norma.names._batch import score_record as score_record
    from norma.names._batch import seed_summary as seed_summary
    from norma.names._bound import score_upper_bound as score_upper_bound
    from norma.names._catalog import EXTRA_RULES as EXTRA_RULES
    from norma.names._catalog import RULE_CATALOG as RULE_CATALOG
    from norma.names._catalog import RULE_DESCRIPTIONS as RULE_DESCRIPTIONS
    from norma.names._catalog import format_rules_for_query as format_rules_for_query
    from norma.names._catalog import rule_description as rule_description
    from norma.names._compat import COMPATS as COMPATS
    from norma.names._compat import SIMILARITY_LEVELS as SIMILARITY_LEVELS
    from norma.names._compat import name_part_weights as name_part_weights
    from norma.names._compliance import evaluate_rule_compliance as evaluate_rule_compliance
    from norma.names._compliance import evaluator_errors as evaluator_errors
    from norma.names._compliance import reset_evaluator_errors as reset_evaluator_errors
    from norma.names._compliance import rule_compliance_score as rule_compliance_score
    from norma.names._evaluators import RULE_EVALUATORS as RULE_EVALUATORS
    from norma.names._evaluators import evaluate_rule as evaluate_rule
    from norma.names._from_labels import generate_from_labels as generate_from_labels
    from norma.names._from_labels import quality_from_labels as quality_from_labels
    from norma.names._from_labels import upper_bound_from_labels as upper_bound_from_labels
    from norma.names._generate import generate_variations as generate_variations
    from norma.names._labels import DEFAULT_DISTRIBUTION as DEFAULT_DISTRIBUTION
    from norma.names._labels import DEFAULT_RULE_PERCENTAGE as DEFAULT_RULE_PERCENTAGE
    from norma.names._labels import Labels as Labels
    from norma.names._labels import RuleBased as RuleBased
    from norma.names._pyhash import MAX_HASH_SEED as MAX_HASH_SEED
    from norma.names._pyhash import str_hash as str_hash
    from norma.names._quality import part_score as part_score
    from norma.names._quality import variation_quality as variation_quality
    from norma.names._query import QUERY_DISTRIBUTIONS as QUERY_DISTRIBUTIONS
    from norma.names._query import VariationQuery as VariationQuery
    from norma.names._query import build_query as build_query
    from norma.names._query import query_phrasing_prompt as query_phrasing_prompt
    from norma.names._query import query_template as query_template
    from norma.names._query import query_template_issues as query_template_issues
    from norma.names._query import random_labels as random_labels
    from norma.names._query import render_distribution as render_distribution
    from norma.names._query import validate_query_template as validate_query_template
    from norma.names._similarity import orthographic_similarity as orthographic_similarity
    from norma.names._similarity import phonetic_similarity as phonetic_similarity
    from norma.names._similarity import transliterate as transliterate

_PUBLIC: dict[str, str] = {
    "build_query": "_query",
    "evaluate_rule": "_evaluators",
    "generate_from_labels": "_from_labels",
    "generate_variations": "_generate",
    "Labels": "_labels",
    "orthographic_similarity": "_similarity",
    "part_score": "_quality",
    "phonetic_similarity": "_similarity",
    "quality_from_labels": "_from_labels",
    "random_labels": "_query",
    "rule_compliance_score": "_compliance",
    "score_jsonl": "_batch",
    "score_over_seeds": "_batch",
    "score_record": "_batch",
    "score_upper_bound": "_bound",
    "ScoreOptions": "_batch",
    "str_hash": "_pyhash",
    "transliterate": "_similarity",
    "upper_bound_from_labels": "_from_labels",
    "validate_query_template": "_query",
    "variation_quality": "_quality",
    "VariationQuery": "_query",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "COMPATS": "_compat",
    "count_records": "_batch",
    "DEFAULT_DISTRIBUTION": "_labels",
    "DEFAULT_RULE_PERCENTAGE": "_labels",
    "evaluate_rule_compliance": "_compliance",
    "evaluator_errors": "_compliance",
    "EXTRA_RULES": "_catalog",
    "format_rules_for_query": "_catalog",
    "MAX_HASH_SEED": "_pyhash",
    "MAX_HASH_SEEDS": "_batch",
    "MAX_RECORD_BYTES": "_batch",
    "name_part_weights": "_compat",
    "QUERY_DISTRIBUTIONS": "_query",
    "query_phrasing_prompt": "_query",
    "query_template": "_query",
    "query_template_issues": "_query",
    "read_lines": "_batch",
    "render_distribution": "_query",
    "reset_evaluator_errors": "_compliance",
    "RULE_CATALOG": "_catalog",
    "rule_description": "_catalog",
    "RULE_DESCRIPTIONS": "_catalog",
    "RULE_EVALUATORS": "_evaluators",
    "RuleBased": "_labels",
    "ScoredRecord": "_batch",
    "seed_summary": "_batch",
    "SIMILARITY_LEVELS": "_compat",
    "NameScore": "_batch",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
