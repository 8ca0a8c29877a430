"""Rubric code of a task app, written against synth-ai's rubric module, in the style of its README.

It imports only ``synth_ai`` names. tests/rubrics/test_compat.py runs it with those modules aliased to
``norma.rubrics`` and checks what it prints (one JSON object).
"""

from __future__ import annotations

import json
from pathlib import Path

from synth_ai.rubrics import RubricCriterion as OldCriterion
from synth_ai.rubrics import RubricSpec as OldSpec
from synth_ai.rubrics import validate_rubric_file as old_validate_rubric_file
from synth_ai.task.rubrics import (
    Criterion,
    Rubric,
    RubricCriterion,
    RubricSpec,
    StrictRubric,
    ValidationError,
    blend_rubrics,
    evaluate_events_against_rubric,
    evaluate_outcome_against_rubric,
    load_rubric,
    score_events_against_rubric,
    validate_rubric_dict,
    validate_rubric_file,
    validate_rubric_files,
)
from synth_ai.task.rubrics.evaluation import evaluate_events_against_rubric as evaluate_events_v2
from synth_ai.task.rubrics.loaders import load_rubric as load_rubric_v2
from synth_ai.task.rubrics.models import Criterion as CriterionV2

HERE = Path(__file__).resolve().parent
report: dict[str, object] = {}

# README "Basic Usage"
rubric = Rubric(
    version="1.0",
    goal_text="Evaluate code quality",
    criteria=[
        Criterion(id="correctness", description="Code works correctly", weight=2.0),
        Criterion(id="style", description="Follows style guide", weight=1.0),
    ],
    aggregation="weighted_sum",
)
events = [
    {"criterion_id": "correctness", "reward": 0.9},
    {"criterion_id": "style", "reward": 0.8},
]
result = evaluate_events_against_rubric(events, rubric)
report["basic_reward"] = result["reward"]
report["basic_keys"] = sorted(result)

# README "Loading" and "Evaluation"
loaded = load_rubric(str(HERE / "task_rubric.json"))
events = [
    {"criterion_id": "quality", "reward": 0.9},
    {"id": "performance", "reward": 0.8},
]
report["events_reward"] = evaluate_events_against_rubric(events, loaded)["reward"]
report["events_v2_reward"] = evaluate_events_v2(events, load_rubric_v2(HERE / "task_rubric.json"))["reward"]
outcome = {"quality": 0.9, "performance": 0.8}
report["outcome"] = evaluate_outcome_against_rubric(outcome, loaded)
report["score_key"] = score_events_against_rubric([{"id": "quality", "score": 1.0}], loaded)["score"]
from_dict = load_rubric({"version": "1.0", "criteria": [{"id": "x", "description": "X"}]})
report["dict_criteria"] = [c.id for c in from_dict.criteria]

# blending
base = load_rubric(HERE / "task_rubric.json")
override = load_rubric(str(HERE / "task_overrides.yaml"))
merged = blend_rubrics(base, override)
report["blend"] = [[c.id, c.weight, c.required] for c in merged.criteria]
report["blend_fields"] = [merged.version, merged.goal_text, merged.aggregation]

# README "Strict Validation"
try:
    strict = validate_rubric_dict(
        {
            "version": "1.0",
            "goal_text": "Evaluate X",
            "aggregation": "weighted_sum",
            "criteria": [
                {"id": "a", "description": "A", "weight": 0.6},
                {"id": "b", "description": "B", "weight": 0.4},
            ],
        }
    )
    report["strict_ok"] = isinstance(strict, StrictRubric)
except ValidationError as e:
    report["strict_ok"] = f"Validation failed: {e}"

try:
    validate_rubric_file(HERE / "verifier_rubric_bad.json")
    report["strict_file_error"] = None
except ValidationError as e:
    report["strict_file_error"] = "criterion weights must sum to 1 (got 1.200000)" in str(e)

report["bulk"] = [r.version for r in validate_rubric_files([HERE / "verifier_rubric.json"])]
report["old_names"] = [
    OldSpec is RubricSpec is StrictRubric,
    OldCriterion is RubricCriterion,
    old_validate_rubric_file(HERE / "verifier_rubric.json").criteria[0].id,
]
report["criterion_v2"] = CriterionV2 is Criterion

# errors task apps catch
try:
    load_rubric("   ")
except ValueError as e:
    report["empty_error"] = str(e)
try:
    Criterion(id="a", description="A", weight=0)
except ValidationError as e:
    report["weight_error"] = "criterion weight must be positive" in str(e)
try:
    load_rubric({"event": {}, "outcome": {}})
except ValueError as e:
    report["judge_error"] = "backend judge format" in str(e)

print(json.dumps(report, sort_keys=True))
