"""A user's existing synth-ai rubric code runs unchanged with ``synth_ai`` aliased to norma.rubrics."""

from __future__ import annotations

import json
import runpy
import sys
import types
from pathlib import Path

import pytest

import norma.rubrics
from norma.rubrics import evaluation, loaders, models, scoring, strict

SCRIPT = Path(__file__).parent / "data" / "synth_user_code.py"


def _alias(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-line migration, done as import aliases: every synth_ai rubric path is a norma module."""
    for name in ("synth_ai", "synth_ai.task"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    aliases = {
        "synth_ai.rubrics": norma.rubrics,
        "synth_ai.task.rubrics": norma.rubrics,
        "synth_ai.task.rubrics.models": models,
        "synth_ai.task.rubrics.loaders": loaders,
        "synth_ai.task.rubrics.evaluation": evaluation,
        "synth_ai.task.rubrics.scoring": scoring,
        "synth_ai.task.rubrics.strict": strict,
    }
    for name, module in aliases.items():
        monkeypatch.setitem(sys.modules, name, module)


def test_existing_user_code_runs_unchanged(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _alias(monkeypatch)
    runpy.run_path(str(SCRIPT), run_name="__main__")
    report = json.loads(capsys.readouterr().out)
    assert report["basic_reward"] == pytest.approx((0.9 * 2.0 + 0.8 * 1.0) / 3.0)
    assert report["basic_keys"] == ["aggregation", "per_criterion", "reward"]
    assert report["events_reward"] == pytest.approx(0.85)
    assert report["events_v2_reward"] == pytest.approx(0.85)
    assert report["outcome"] == {
        "aggregation": "weighted_sum",
        "reward": pytest.approx(0.85),
        "per_criterion": {
            "quality": {"reward": 0.9, "weight": 1.0, "required": False},
            "performance": {"reward": 0.8, "weight": 1.0, "required": False},
        },
    }
    assert report["score_key"] == 0.5
    assert report["dict_criteria"] == ["x"]
    assert report["blend"] == [["performance", 3.0, False], ["security", 2.0, True], ["quality", 1.0, False]]
    assert report["blend_fields"] == ["1.1", "Evaluate code quality", "weighted_sum"]
    assert report["strict_ok"] is True
    assert report["strict_file_error"] is True
    assert report["bulk"] == ["1"]
    assert report["old_names"] == [True, True, "progress"]
    assert report["criterion_v2"] is True
    assert report["empty_error"] == "Rubric source is empty"
    assert report["weight_error"] is True
    assert report["judge_error"] is True


def test_compat_submodules_export_the_same_objects() -> None:
    assert models.Criterion is norma.rubrics.Criterion
    assert loaders.load_rubric is norma.rubrics.load_rubric
    assert evaluation.evaluate_outcome_against_rubric is norma.rubrics.evaluate_outcome_against_rubric
    assert scoring.score_events_against_rubric is norma.rubrics.score_events_against_rubric
    assert strict.ValidationError is norma.rubrics.ValidationError


def test_the_whole_synth_ai_surface_is_there() -> None:
    names = {
        "Criterion", "Rubric", "load_rubric", "blend_rubrics", "evaluate_events_against_rubric",
        "evaluate_outcome_against_rubric", "score_events_against_rubric", "score_outcome_against_rubric",
        "StrictCriterion", "StrictRubric", "validate_rubric_dict", "validate_rubric_file", "validate_rubric_files",
        "ValidationError", "RubricSpec", "RubricCriterion",
    }  # fmt: skip
    assert names <= set(norma.rubrics.__all__)
