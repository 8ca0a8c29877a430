"""Compatibility path ``norma.rubrics.models`` (synth-ai's ``synth_ai.task.rubrics.models``).

Re-exports Criterion, CriterionExample and Rubric.

Prefer ``from norma.rubrics import ...``; this module only keeps explicit-submodule imports working.
"""

from __future__ import annotations

from norma.rubrics._models import Criterion, CriterionExample, Rubric

__all__ = ["Criterion", "CriterionExample", "Rubric"]
