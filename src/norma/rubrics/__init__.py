"""Rubrics: weighted criteria turned into a reward; a drop-in replacement for ``synth_ai.task.rubrics``.

The compatible surface (same names, behaviour, results and error texts as synth-ai's rubric module):
:class:`Criterion`, :class:`Rubric`, :class:`CriterionExample` (synth-ai 0.9.11), :func:`load_rubric`,
:func:`blend_rubrics`, :func:`evaluate_events_against_rubric`, :func:`evaluate_outcome_against_rubric`,
:func:`score_events_against_rubric`, :func:`score_outcome_against_rubric`, :class:`StrictCriterion`,
:class:`StrictRubric`, :func:`validate_rubric_dict`, :func:`validate_rubric_file`, :func:`validate_rubric_files`,
:data:`ValidationError` and the aliases :data:`RubricSpec` (= ``StrictRubric``) and :data:`RubricCriterion`
(= ``StrictCriterion``).

Beyond it, opt-in: safe URL loading limits (``timeout``, ``max_bytes``), ``enforce_required`` and
``pass_threshold`` verdicts, named aggregators for ``custom`` rubrics (:func:`register_aggregator`), JSON Schema
export (:func:`rubric_json_schema`), one check of a rubric file or mapping (:func:`check_rubric`, valid or not with
every problem's field path) and one evaluation of events or an outcome (:func:`evaluate_rubric`), which the CLI and
the HTTP service both call, a list of what an evaluation would silently skip or take as is
(:func:`check_rubric_inputs`: ids matching no criterion, rewards not numbers or outside [0, 1]; the CLI warns about
them), and file-level helpers for CI (:func:`check_rubric_file`, :func:`evaluate_rubric_file`). Criteria without a
reward can be scored by an LLM judge (:func:`judge_rubric`, :func:`judge_rubric_file`, ``norma rubric judge``),
with synth-ai's backend judge format read by :func:`backend_judge_rubric`.
Errors are :class:`~norma.errors.RubricError`\\ s that are also the builtin the compatible loaders let through
(:class:`RubricFileError` and its subclasses, :class:`RubricJSONError`, :class:`RubricYAMLError`,
:class:`BackendJudgeFormatError`). See docs/rubrics.md.
"""

from __future__ import annotations

from norma.errors import RubricError
from norma.rubrics._aggregators import Aggregator, aggregator_names, get_aggregator, register_aggregator
from norma.rubrics._blend import blend_rubrics, blend_weights
from norma.rubrics._check import (
    RubricCheck,
    RubricIssue,
    check_rubric,
    check_rubric_file,
    field_path,
    validation_issues,
)
from norma.rubrics._errors import (
    BackendJudgeFormatError,
    RubricFileError,
    RubricFileMissingError,
    RubricIsADirectoryError,
    RubricJSONError,
    RubricPermissionError,
    RubricYAMLError,
)
from norma.rubrics._evaluation import (
    AggregatorChoice,
    RubricScore,
    evaluate_events_against_rubric,
    evaluate_outcome_against_rubric,
    evaluate_rubric,
    evaluate_values,
    score_events_against_rubric,
    score_outcome_against_rubric,
)
from norma.rubrics._fetch import fetch_rubric_text
from norma.rubrics._files import blend_rubric_files, evaluate_rubric_file, load_rubric_file
from norma.rubrics._inputs import check_rubric_inputs
from norma.rubrics._judge import BACKEND_JUDGE_SCALES, backend_judge_rubric, judge_rubric, judge_rubric_file
from norma.rubrics._loaders import RubricSource, load_rubric, parse_rubric_text, read_rubric_file
from norma.rubrics._models import AGGREGATIONS, Criterion, CriterionExample, Rubric
from norma.rubrics._schema import rubric_json_schema
from norma.rubrics._strict import (
    StrictCriterion,
    StrictRubric,
    ValidationError,
    validate_rubric_dict,
    validate_rubric_file,
    validate_rubric_files,
)

RubricCriterion = StrictCriterion
"""Old name of :class:`StrictCriterion` (from ``synth_ai.rubrics``), kept for compatibility."""

RubricSpec = StrictRubric
"""Old name of :class:`StrictRubric` (from ``synth_ai.rubrics``), kept for compatibility."""

__all__ = [
    "AGGREGATIONS",
    "Aggregator",
    "AggregatorChoice",
    "BACKEND_JUDGE_SCALES",
    "BackendJudgeFormatError",
    "Criterion",
    "CriterionExample",
    "Rubric",
    "RubricCheck",
    "RubricCriterion",
    "RubricError",
    "RubricFileError",
    "RubricFileMissingError",
    "RubricIsADirectoryError",
    "RubricIssue",
    "RubricJSONError",
    "RubricPermissionError",
    "RubricScore",
    "RubricSource",
    "RubricSpec",
    "RubricYAMLError",
    "StrictCriterion",
    "StrictRubric",
    "ValidationError",
    "aggregator_names",
    "backend_judge_rubric",
    "blend_rubric_files",
    "blend_rubrics",
    "blend_weights",
    "check_rubric",
    "check_rubric_file",
    "check_rubric_inputs",
    "evaluate_events_against_rubric",
    "evaluate_outcome_against_rubric",
    "evaluate_rubric",
    "evaluate_rubric_file",
    "evaluate_values",
    "fetch_rubric_text",
    "field_path",
    "get_aggregator",
    "judge_rubric",
    "judge_rubric_file",
    "load_rubric",
    "load_rubric_file",
    "parse_rubric_text",
    "read_rubric_file",
    "register_aggregator",
    "rubric_json_schema",
    "score_events_against_rubric",
    "score_outcome_against_rubric",
    "validate_rubric_dict",
    "validate_rubric_file",
    "validate_rubric_files",
    "validation_issues",
]
