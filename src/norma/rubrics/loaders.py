"""Compatibility path ``norma.rubrics.loaders`` (synth-ai's ``synth_ai.task.rubrics.loaders``).

Re-exports load_rubric and blend_rubrics.

Prefer ``from norma.rubrics import ...``; this module only keeps explicit-submodule imports working.
"""

from __future__ import annotations

from norma.rubrics._blend import blend_rubrics
from norma.rubrics._loaders import load_rubric

__all__ = ["blend_rubrics", "load_rubric"]
