"""A fixed turn report, built as the checker builds one (``MatchedRuleSummary`` from a match's
``Enforcement.to_dict()`` and ``MatchExplanation.to_dict()``) but with hand-chosen numbers, so that the JSON the
library, the service's ``/check`` and the MCP tool ``check_turn`` answer for it can be pinned byte for byte without
the embedding model (whose last digits depend on the CPU)."""

from __future__ import annotations

import json
import math
from typing import Any

from norma.checks import CheckResult, Span
from norma.matching import MatchExplanation
from norma.matching._enforce import enforcement
from norma.rules import Severity, Verdict
from norma.turns import CheckedRule, MatchedRuleSummary, TurnReport

__all__ = ["MESSAGE", "OUTPUT", "REPORT_JSON", "assert_same_json", "fixed_report", "report_text"]

MESSAGE = "can I get a refund for my order"
OUTPUT = "See our refund policy. Card 4111111111111111."


def _explanation(*, example: int | None, centroid: float | None, threshold: float | None, on: str) -> MatchExplanation:
    return MatchExplanation(
        similarity=0.8123456789012345,
        vector_score=0.1 + 0.2,  # 0.30000000000000004: the shortest repr is kept
        matched_text="can I get a refund for my order" if example is not None else "customer asks for a refund",
        matched_example=example,
        bm25_raw=3.0,
        bm25_normalized=1.0,
        matched_terms=("refund", "order"),
        hybrid=0.5,
        priority_normalized=0.0,
        scope_weight=1.0,
        final=0.71,
        threshold=threshold,
        threshold_on=on,
        weights={"vector": 0.7, "bm25": 0.3, "hybrid": 1.0},
        bm25_normalization="query",
        example_centroid=centroid,
    )


def _matched(rule_id: str, final: float, confidence: float, explanation: MatchExplanation) -> MatchedRuleSummary:
    decided = enforcement(confidence)
    return MatchedRuleSummary(
        rule_id=rule_id,
        final_score=final,
        enforced=decided.enforced,
        enforcement=decided.to_dict(),
        explanation=explanation.to_dict(),
    )


def fixed_report(tenant_id: str = "acme", rules_version: int | None = 3) -> TurnReport:
    """A failing turn: ``refund`` governs (one check passed, one failed), ``orders`` is a neighbour (its
    requirement skipped, not enforced), ``card-safety`` applies always and fails with masked evidence."""
    matches = (
        _matched("refund", 0.71, 0.9312, _explanation(example=1, centroid=None, threshold=None, on="confidence")),
        _matched("orders", 0.5, 0.25, _explanation(example=None, centroid=0.625, threshold=0.4, on="similarity")),
    )
    refund = CheckedRule(
        rule_id="refund",
        description="explain the refund policy and give the form reference",
        matched=True,
        enforced=True,
        verdict=Verdict.FAIL,
        score=0.5,
        weight=2.0,
        required=True,
        checks=(
            CheckResult(
                rule_id="refund",
                check_id="policy",
                kind="contains",
                severity=Severity.ERROR,
                weight=1.0,
                status=Verdict.PASS,
                message="found 'refund policy'",
            ),
            CheckResult(
                rule_id="refund",
                check_id="reference",
                kind="regex",
                severity=Severity.ERROR,
                weight=1.0,
                status=Verdict.FAIL,
                message="no match for REF-[0-9]{4}",
            ),
        ),
    )
    orders = CheckedRule(
        rule_id="orders",
        description="give the order's status",
        matched=True,
        enforced=False,
        verdict=Verdict.SKIP,
        score=None,
        weight=0.0,
        required=False,
        checks=(
            CheckResult(
                rule_id="orders",
                check_id="status",
                kind="contains",
                severity=Severity.WARNING,
                weight=1.0,
                status=Verdict.SKIP,
                message="not enforced: confidence 0.25 < 0.7 that it governs the message",
                enforced=False,
            ),
        ),
    )
    cards = CheckedRule(
        rule_id="card-safety",
        description="customer asks about branch opening hours",
        matched=False,
        verdict=Verdict.FAIL,
        score=0.0,
        weight=1.0,
        required=True,
        checks=(
            CheckResult(
                rule_id="card-safety",
                check_id="no-card",
                kind="no_pii",
                severity=Severity.ERROR,
                weight=1.0,
                status=Verdict.FAIL,
                message="1 card number (é)",
                evidence=(Span(start=28, end=44, line=1, column=29, text="************1111"),),
            ),
        ),
    )
    return TurnReport(
        verdict=Verdict.FAIL,
        reward=1 / 3,
        tenant_id=tenant_id,
        rules_version=rules_version,
        matches=matches,
        rules=(refund, orders, cards),
    )


REPORT_JSON: dict[str, Any] = {
    "verdict": "fail",
    "reward": 0.3333333333333333,
    "tenant_id": "acme",
    "rules_version": 3,
    "matches": [
        {
            "rule_id": "refund",
            "final_score": 0.71,
            "enforced": True,
            "enforcement": {
                "enforced": True,
                "reason": "governs",
                "confidence": 0.9312,
                "detail": "confidence 0.93 >= 0.7 that it governs the message",
            },
            "explanation": {
                "similarity": 0.8123456789012345,
                "vector_score": 0.30000000000000004,
                "matched_text": "can I get a refund for my order",
                "matched_example": 1,
                "bm25_raw": 3.0,
                "bm25_normalized": 1.0,
                "bm25_normalization": "query",
                "matched_terms": ["refund", "order"],
                "hybrid": 0.5,
                "priority_normalized": 0.0,
                "scope_weight": 1.0,
                "final": 0.71,
                "threshold": None,
                "threshold_on": "confidence",
                "weights": {"vector": 0.7, "bm25": 0.3, "hybrid": 1.0},
                "example_centroid": None,
            },
        },
        {
            "rule_id": "orders",
            "final_score": 0.5,
            "enforced": False,
            "enforcement": {
                "enforced": False,
                "reason": "neighbour",
                "confidence": 0.25,
                "detail": "confidence 0.25 < 0.7 that it governs the message",
            },
            "explanation": {
                "similarity": 0.8123456789012345,
                "vector_score": 0.30000000000000004,
                "matched_text": "customer asks for a refund",
                "matched_example": None,
                "bm25_raw": 3.0,
                "bm25_normalized": 1.0,
                "bm25_normalization": "query",
                "matched_terms": ["refund", "order"],
                "hybrid": 0.5,
                "priority_normalized": 0.0,
                "scope_weight": 1.0,
                "final": 0.71,
                "threshold": 0.4,
                "threshold_on": "similarity",
                "weights": {"vector": 0.7, "bm25": 0.3, "hybrid": 1.0},
                "example_centroid": 0.625,
            },
        },
    ],
    "rules": [
        {
            "rule_id": "refund",
            "description": "explain the refund policy and give the form reference",
            "matched": True,
            "enforced": True,
            "verdict": "fail",
            "score": 0.5,
            "weight": 2.0,
            "required": True,
            "checks": [
                {
                    "rule_id": "refund",
                    "check_id": "policy",
                    "kind": "contains",
                    "severity": "error",
                    "weight": 1.0,
                    "status": "pass",
                    "message": "found 'refund policy'",
                    "evidence": [],
                    "enforced": True,
                },
                {
                    "rule_id": "refund",
                    "check_id": "reference",
                    "kind": "regex",
                    "severity": "error",
                    "weight": 1.0,
                    "status": "fail",
                    "message": "no match for REF-[0-9]{4}",
                    "evidence": [],
                    "enforced": True,
                },
            ],
        },
        {
            "rule_id": "orders",
            "description": "give the order's status",
            "matched": True,
            "enforced": False,
            "verdict": "skip",
            "score": None,
            "weight": 0.0,
            "required": False,
            "checks": [
                {
                    "rule_id": "orders",
                    "check_id": "status",
                    "kind": "contains",
                    "severity": "warning",
                    "weight": 1.0,
                    "status": "skip",
                    "message": "not enforced: confidence 0.25 < 0.7 that it governs the message",
                    "evidence": [],
                    "enforced": False,
                }
            ],
        },
        {
            "rule_id": "card-safety",
            "description": "customer asks about branch opening hours",
            "matched": False,
            "enforced": False,
            "verdict": "fail",
            "score": 0.0,
            "weight": 1.0,
            "required": True,
            "checks": [
                {
                    "rule_id": "card-safety",
                    "check_id": "no-card",
                    "kind": "no_pii",
                    "severity": "error",
                    "weight": 1.0,
                    "status": "fail",
                    "message": "1 card number (é)",
                    "evidence": [{"start": 28, "end": 44, "line": 1, "column": 29, "text": "************1111"}],
                    "enforced": True,
                }
            ],
        },
    ],
    "counts": {"pass": 1, "fail": 2, "skip": 1},
    "audit": None,
}
"""``fixed_report().to_dict()``, as the code before issue #57's typed enforcement and explanation wrote it (captured
from it, then written here): keys in order, every float as it was printed (``1.0`` not ``1``), None as null."""


def report_text(data: dict[str, Any], *, compact: bool = False) -> str:
    """``data`` as JSON text, as the service (``compact``: Starlette's ``JSONResponse``) or the MCP tools
    (``json.dumps``, its default separators) write it: comparing texts compares key order and number formatting."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":") if compact else None)


def assert_same_json(got: Any, expected: Any, where: str = "$") -> None:
    """``got`` is ``expected``: the same keys in the same order, the same types (an int is not a float), the same
    values, floats within 1e-6 (a real model's last digits depend on the CPU: docs/design/030-embeddings.md)."""
    assert type(got) is type(expected), f"{where}: {type(got).__name__} != {type(expected).__name__}"
    if isinstance(expected, dict):
        assert list(got) == list(expected), f"{where}: keys {list(got)} != {list(expected)}"
        for key in expected:
            assert_same_json(got[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert len(got) == len(expected), f"{where}: {len(got)} items != {len(expected)}"
        for index, (a, b) in enumerate(zip(got, expected, strict=True)):
            assert_same_json(a, b, f"{where}[{index}]")
    elif isinstance(expected, float):
        assert math.isclose(got, expected, rel_tol=0, abs_tol=1e-6), f"{where}: {got} != {expected}"
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r}"
