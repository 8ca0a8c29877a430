"""Compatibility path ``norma.rubrics.strict`` (synth-ai's ``synth_ai.task.rubrics.strict``).

Re-exports the strict validators.

Prefer ``from norma.rubrics import ...``; this module only keeps explicit-submodule imports working.
"""

from __future__ import annotations

from norma.rubrics._strict import (
    StrictCriterion,
    StrictRubric,
    ValidationError,
    validate_rubric_dict,
    validate_rubric_file,
    validate_rubric_files,
)

__all__ = [
    "StrictCriterion",
    "StrictRubric",
    "ValidationError",
    "validate_rubric_dict",
    "validate_rubric_file",
    "validate_rubric_files",
]
