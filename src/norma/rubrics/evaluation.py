"""Compatibility path ``norma.rubrics.evaluation`` (synth-ai's ``synth_ai.task.rubrics.evaluation``).

Re-exports the evaluate_* functions.

Prefer ``from norma.rubrics import ...``; this module only keeps explicit-submodule imports working.
"""

from __future__ import annotations

from norma.rubrics._evaluation import evaluate_events_against_rubric, evaluate_outcome_against_rubric

__all__ = ["evaluate_events_against_rubric", "evaluate_outcome_against_rubric"]
