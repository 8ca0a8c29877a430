"""Compatibility path ``norma.rubrics.scoring`` (synth-ai's ``synth_ai.task.rubrics.scoring``).

Re-exports the older score_* functions.

Prefer ``from norma.rubrics import ...``; this module only keeps explicit-submodule imports working.
"""

from __future__ import annotations

from norma.rubrics._evaluation import score_events_against_rubric, score_outcome_against_rubric

__all__ = ["score_events_against_rubric", "score_outcome_against_rubric"]
