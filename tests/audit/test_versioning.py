"""§9.02: which bump a change between two rule-set snapshots requires."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from norma.audit import AuditConfig, Bump, required_bump, ruleset_snapshot


@pytest.fixture
def snapshot() -> dict[str, Any]:
    return ruleset_snapshot(config=AuditConfig())


def test_no_change(snapshot: dict[str, Any]) -> None:
    assert required_bump(snapshot, copy.deepcopy(snapshot)).bump is Bump.NONE


def test_algorithm_change_is_minor(snapshot: dict[str, Any]) -> None:
    new = copy.deepcopy(snapshot)
    new["rules"]["IR.4.02"]["version"] = "1.2"
    assert required_bump(snapshot, new).bump is Bump.MINOR


def test_new_rule_is_minor(snapshot: dict[str, Any]) -> None:
    new = copy.deepcopy(snapshot)
    new["rules"]["IR.9.01"] = {**new["rules"]["IR.3.02"], "id": "IR.9.01"}
    report = required_bump(snapshot, new)
    assert report.bump is Bump.MINOR
    assert report.reasons == ("IR.9.01 added",)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("ir_4_01_embedding_threshold", 0.70, Bump.MAJOR),
        ("ir_4_01_embedding_threshold", 0.60, Bump.PATCH),
        ("ir_7_02_formality_tolerance", "low", Bump.MAJOR),
        ("ir_7_02_formality_tolerance", "high", Bump.PATCH),
    ],
)
def test_threshold_direction(snapshot: dict[str, Any], field: str, value: Any, expected: Bump) -> None:
    new = ruleset_snapshot(config=AuditConfig(**{field: value}))
    assert required_bump(snapshot, new).bump is expected


def test_severity_raise_and_removal_are_major(snapshot: dict[str, Any]) -> None:
    raised = copy.deepcopy(snapshot)
    raised["rules"]["IR.3.02"]["severity"] = "ERROR"
    assert required_bump(snapshot, raised).bump is Bump.MAJOR
    removed = copy.deepcopy(snapshot)
    del removed["rules"]["IR.3.02"]
    assert required_bump(snapshot, removed).bump is Bump.MAJOR
