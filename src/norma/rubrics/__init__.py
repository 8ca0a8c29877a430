r"""Rubrics: weighted criteria turned into a reward; a drop-in replacement for ``synth_ai.task.rubrics``.

The compatible surface (same names, behaviour, results and error texts as synth-ai's rubric module):
:class:`Criterion`, :class:`Rubric`, :class:`CriterionExample` (synth-ai 0.9.11), :func:`load_rubric`,
:func:`blend_rubrics`, :func:`evaluate_events_against_rubric`, :func:`evaluate_outcome_against_rubric`,
:func:`score_events_against_rubric`, :func:`score_outcome_against_rubric`, :class:`StrictCriterion`,
:class:`StrictRubric`, :func:`validate_rubric_dict`, :func:`validate_rubric_file`, :func:`validate_rubric_files`,
:data:`ValidationError` and the aliases :data:`RubricSpec` (= ``StrictRubric``) and :data:`RubricCriterion`
(= ``StrictCriterion``).

Beyond it, opt-in: safe URL loading limits (``timeout``, ``max_bytes``), ``enforce_required`` and ``pass_threshold``
verdicts, aggregators for ``custom`` rubrics (a built-in's name, or a function passed as ``aggregator=``), JSON
Schema export (:func:`rubric_json_schema`), one check of a rubric file or mapping (:func:`validate_rubric`, valid or
not with every problem's field path) and one evaluation of events or an outcome (:func:`evaluate_rubric`), which the
CLI and the HTTP service both call, a list of what an evaluation would silently skip or take as is
(:func:`validate_rubric_inputs`: ids matching no criterion, rewards not numbers or outside [0, 1]; the CLI warns
about them), and file-level helpers for CI (:func:`check_rubric_file`, :func:`evaluate_rubric_file`). Criteria
without a reward can be scored by an LLM judge (:func:`judge_rubric`, :func:`judge_rubric_file`, ``norma rubric
judge``), with synth-ai's backend judge format read by :func:`backend_judge_rubric`.
Errors are :class:`~norma.errors.RubricError`\ s that are also the builtin the compatible loaders let through
(:class:`RubricFileError` and its subclasses, :class:`RubricJSONError`, :class:`RubricYAMLError`,
:class:`BackendJudgeFormatError`). See docs/rubrics.md.
"""

from __future__ import annotations

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.errors import RubricError as RubricError
    from norma.rubrics._aggregators import BUILTIN_AGGREGATORS as BUILTIN_AGGREGATORS
    from norma.rubrics._aggregators import Aggregator as Aggregator
    from norma.rubrics._aggregators import aggregator_names as aggregator_names
    from norma.rubrics._aggregators import get_aggregator as get_aggregator
    from norma.rubrics._blend import blend_rubrics as blend_rubrics
    from norma.rubrics._blend import blend_weights as blend_weights
    from norma.rubrics._errors import BackendJudgeFormatError as BackendJudgeFormatError
    from norma.rubrics._errors import RubricFileError as RubricFileError
    from norma.rubrics._errors import RubricFileMissingError as RubricFileMissingError
    from norma.rubrics._errors import RubricIsADirectoryError as RubricIsADirectoryError
    from norma.rubrics._errors import RubricJSONError as RubricJSONError
    from norma.rubrics._errors import RubricPermissionError as RubricPermissionError
    from norma.rubrics._errors import RubricYAMLError as RubricYAMLError
    from norma.rubrics._evaluation import AggregatorChoice as AggregatorChoice
    from norma.rubrics._evaluation import RubricScore as RubricScore
    from norma.rubrics._evaluation import evaluate_events_against_rubric as evaluate_events_against_rubric
    from norma.rubrics._evaluation import evaluate_outcome_against_rubric as evaluate_outcome_against_rubric
    from norma.rubrics._evaluation import evaluate_rubric as evaluate_rubric
    from norma.rubrics._evaluation import evaluate_values as evaluate_values
    from norma.rubrics._evaluation import score_events_against_rubric as score_events_against_rubric
    from norma.rubrics._evaluation import score_outcome_against_rubric as score_outcome_against_rubric
    from norma.rubrics._fetch import fetch_rubric_text as fetch_rubric_text
    from norma.rubrics._files import blend_rubric_files as blend_rubric_files
    from norma.rubrics._files import evaluate_rubric_file as evaluate_rubric_file
    from norma.rubrics._files import load_rubric_file as load_rubric_file
    from norma.rubrics._inputs import validate_rubric_inputs as check_rubric_inputs  # noqa: F401 - old name, kept
    from norma.rubrics._inputs import validate_rubric_inputs as validate_rubric_inputs
    from norma.rubrics._judge import BACKEND_JUDGE_SCALES as BACKEND_JUDGE_SCALES
    from norma.rubrics._judge import backend_judge_rubric as backend_judge_rubric
    from norma.rubrics._judge import judge_rubric as judge_rubric
    from norma.rubrics._judge import judge_rubric_file as judge_rubric_file
    from norma.rubrics._loaders import RubricSource as RubricSource
    from norma.rubrics._loaders import load_rubric as load_rubric
    from norma.rubrics._loaders import parse_rubric_text as parse_rubric_text
    from norma.rubrics._loaders import read_rubric_file as read_rubric_file
    from norma.rubrics._models import AGGREGATIONS as AGGREGATIONS
    from norma.rubrics._models import Criterion as Criterion
    from norma.rubrics._models import CriterionExample as CriterionExample
    from norma.rubrics._models import Rubric as Rubric
    from norma.rubrics._schema import rubric_json_schema as rubric_json_schema
    from norma.rubrics._strict import StrictCriterion as StrictCriterion
    from norma.rubrics._strict import StrictRubric as StrictRubric
    from norma.rubrics._strict import ValidationError as ValidationError
    from norma.rubrics._strict import validate_rubric_dict as validate_rubric_dict
    from norma.rubrics._strict import validate_rubric_file as validate_rubric_file
    from norma.rubrics._strict import validate_rubric_files as validate_rubric_files
    from norma.rubrics._validate import RubricIssue as RubricIssue
    from norma.rubrics._validate import RubricValidity as RubricCheck  # noqa: F401 - old name, kept
    from norma.rubrics._validate import RubricValidity as RubricValidity
    from norma.rubrics._validate import check_rubric_file as check_rubric_file
    from norma.rubrics._validate import field_path as field_path
    from norma.rubrics._validate import validate_rubric as check_rubric  # noqa: F401 - old name, kept
    from norma.rubrics._validate import validate_rubric as validate_rubric
    from norma.rubrics._validate import validation_issues as validation_issues

    RubricCriterion = StrictCriterion  # old name (synth_ai.rubrics), kept for compatibility
    RubricSpec = StrictRubric  # old name (synth_ai.rubrics), kept for compatibility

_PUBLIC: dict[str, str] = {
    "backend_judge_rubric": "_judge",
    "blend_rubric_files": "_files",
    "blend_rubrics": "_blend",
    "validate_rubric": "_validate",
    "validate_rubric_inputs": "_inputs",
    "Criterion": "_models",
    "CriterionExample": "_models",
    "evaluate_events_against_rubric": "_evaluation",
    "evaluate_outcome_against_rubric": "_evaluation",
    "evaluate_rubric": "_evaluation",
    "evaluate_rubric_file": "_files",
    "evaluate_values": "_evaluation",
    "fetch_rubric_text": "_fetch",
    "judge_rubric": "_judge",
    "judge_rubric_file": "_judge",
    "load_rubric": "_loaders",
    "load_rubric_file": "_files",
    "parse_rubric_text": "_loaders",
    "Rubric": "_models",
    "rubric_json_schema": "_schema",
    "RubricValidity": "_validate",
    "RubricCriterion": "_strict:StrictCriterion",
    "RubricError": "norma.errors",
    "RubricIssue": "_validate",
    "RubricSpec": "_strict:StrictRubric",
    "score_events_against_rubric": "_evaluation",
    "score_outcome_against_rubric": "_evaluation",
    "StrictCriterion": "_strict",
    "StrictRubric": "_strict",
    "validate_rubric_dict": "_strict",
    "validate_rubric_file": "_strict",
    "validate_rubric_files": "_strict",
    "ValidationError": "_strict",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "check_rubric_file": "_validate",
    "check_rubric": "_validate:validate_rubric",
    "check_rubric_inputs": "_inputs:validate_rubric_inputs",
    "RubricCheck": "_validate:RubricValidity",
    "AGGREGATIONS": "_models",
    "Aggregator": "_aggregators",
    "BUILTIN_AGGREGATORS": "_aggregators",
    "aggregator_names": "_aggregators",
    "AggregatorChoice": "_evaluation",
    "BACKEND_JUDGE_SCALES": "_judge",
    "BackendJudgeFormatError": "_errors",
    "blend_weights": "_blend",
    "field_path": "_validate",
    "get_aggregator": "_aggregators",
    "read_rubric_file": "_loaders",
    "RubricFileError": "_errors",
    "RubricFileMissingError": "_errors",
    "RubricIsADirectoryError": "_errors",
    "RubricJSONError": "_errors",
    "RubricPermissionError": "_errors",
    "RubricSource": "_loaders",
    "RubricYAMLError": "_errors",
    "validation_issues": "_validate",
    "RubricScore": "_evaluation",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
