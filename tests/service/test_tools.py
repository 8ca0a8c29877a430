"""Capability routes: audit, rubrics, names — results equal the library's for the same input."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from norma.audit import analyze, load_documents
from norma.names import build_query, generate_variations, score_record
from norma.rubrics import evaluate_rubric, validate_rubric
from norma.store import RuleStore
from tests.conftest import CliResult
from tests.service.conftest import ADMIN_KEY, app_client, bearer, make_settings

pytestmark = pytest.mark.anyio

RUBRIC = {
    "version": "1.0",
    "goal_text": "Evaluate code quality",
    "criteria": [
        {"id": "correctness", "description": "Code works", "weight": 2.0, "required": True},
        {"id": "style", "description": "Style guide", "weight": 1.0},
    ],
}


async def test_rubric_validate_valid_and_invalid(client: httpx.AsyncClient, acme_key: str) -> None:
    ok = await client.post("/v1/rubrics/validate", json={"rubric": RUBRIC}, headers=bearer(acme_key))
    assert ok.json() == {"valid": True, "strict": False, "issues": [], "criteria": 2}
    bad = {**RUBRIC, "criteria": [{"id": "x", "description": "d", "weight": "heavy"}]}
    response = await client.post("/v1/rubrics/validate", json={"rubric": bad}, headers=bearer(acme_key))
    assert response.status_code == 200
    assert response.json()["valid"] is False
    assert response.json()["issues"][0]["path"] == "criteria[0].weight"
    strict = await client.post(
        "/v1/rubrics/validate", json={"rubric": RUBRIC, "strict": True}, headers=bearer(acme_key)
    )
    assert strict.json()["valid"] is False  # weights over 1 are not the strict format


JUDGE = {"event": {"criteria": []}, "outcome": {"criteria": []}}
"""A backend judge rubric: readable, but not a task rubric."""

VALIDATE_CASES = {
    "valid": (RUBRIC, False),
    "bad-weight": ({**RUBRIC, "criteria": [{"id": "x", "description": "d", "weight": "heavy"}]}, False),
    "not-strict": (RUBRIC, True),
    "backend-judge": (JUDGE, False),
    "backend-judge-strict": (JUDGE, True),
}


@pytest.mark.parametrize(("rubric", "strict"), VALIDATE_CASES.values(), ids=VALIDATE_CASES.keys())
async def test_rubric_validate_agrees_with_the_cli(
    client: httpx.AsyncClient,
    acme_key: str,
    run_cli: Callable[..., CliResult],
    tmp_path: Path,
    rubric: dict[str, Any],
    strict: bool,
) -> None:
    """``POST /v1/rubrics/validate`` and ``norma rubric validate`` give one verdict (``validate_rubric``): a backend
    judge rubric is ``valid=false`` with its issue on both, not an HTTP 400 on one and a verdict on the other."""
    body = {"rubric": rubric, "strict": strict}
    response = await client.post("/v1/rubrics/validate", json=body, headers=bearer(acme_key))
    assert response.status_code == 200
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps(rubric), encoding="utf-8")
    result = run_cli("rubric", "validate", "--format", "json", *(["--strict"] if strict else []), str(path))
    (check,) = json.loads(result.out)["files"]
    assert result.code == (0 if check["valid"] else 2)
    assert response.json() == {key: check[key] for key in ("valid", "strict", "issues", "criteria")}
    assert response.json() == validate_rubric(rubric, strict=strict).model_dump(exclude={"file"})


async def test_backend_judge_rubric_is_invalid_not_an_error(client: httpx.AsyncClient, acme_key: str) -> None:
    response = await client.post("/v1/rubrics/validate", json={"rubric": JUDGE}, headers=bearer(acme_key))
    assert response.status_code == 200
    assert response.json()["valid"] is False
    (issue,) = response.json()["issues"]
    assert issue["path"] == ""
    assert "backend judge format" in issue["message"]
    evaluate = {"rubric": JUDGE, "outcome": {}}
    refused = await client.post("/v1/rubrics/evaluate", json=evaluate, headers=bearer(acme_key))
    assert refused.status_code == 400  # nothing to evaluate against: an input error, as `norma rubric eval` exits 2
    assert "backend judge format" in refused.json()["detail"]


async def test_rubric_evaluate_agrees_with_the_library_and_the_cli(
    client: httpx.AsyncClient, acme_key: str, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    outcome = {"correctness": 0.4, "style": 1.0}
    body = {"rubric": RUBRIC, "outcome": outcome, "enforce_required": True, "pass_threshold": 0.5}
    served = (await client.post("/v1/rubrics/evaluate", json=body, headers=bearer(acme_key))).json()
    assert served == evaluate_rubric(RUBRIC, outcome=outcome, enforce_required=True, pass_threshold=0.5)
    rubric_file, outcome_file = tmp_path / "rubric.json", tmp_path / "outcome.json"
    rubric_file.write_text(json.dumps(RUBRIC), encoding="utf-8")
    outcome_file.write_text(json.dumps(outcome), encoding="utf-8")
    args = ["--outcome", str(outcome_file), "--enforce-required", "--pass-threshold", "0.5", "--format", "json"]
    result = run_cli("rubric", "eval", str(rubric_file), *args)
    assert result.code == 1  # the verdict fails: correctness is required and below 0.5
    assert json.loads(result.out) == served


async def test_rubric_evaluate_events_and_outcome(client: httpx.AsyncClient, acme_key: str) -> None:
    events = [{"criterion_id": "correctness", "reward": 0.9}, {"criterion_id": "style", "reward": 0.8}]
    body = {"rubric": RUBRIC, "events": events, "pass_threshold": 0.9, "enforce_required": True}
    result = (await client.post("/v1/rubrics/evaluate", json=body, headers=bearer(acme_key))).json()
    assert result["reward"] == pytest.approx((0.9 * 2 + 0.8) / 3)
    assert result["passed"] is False
    outcome = {"rubric": RUBRIC, "outcome": {"correctness": 1.0, "style": 0.5}}
    result = (await client.post("/v1/rubrics/evaluate", json=outcome, headers=bearer(acme_key))).json()
    assert result["reward"] == pytest.approx(2.5 / 3)


async def test_rubric_evaluate_errors(client: httpx.AsyncClient, acme_key: str) -> None:
    neither = await client.post("/v1/rubrics/evaluate", json={"rubric": RUBRIC}, headers=bearer(acme_key))
    assert neither.status_code == 400
    assert neither.json()["field"] == "events"
    bad = {"rubric": {"version": "1", "criteria": "nope"}, "outcome": {}}
    invalid = await client.post("/v1/rubrics/evaluate", json=bad, headers=bearer(acme_key))
    assert invalid.status_code == 400
    assert invalid.json()["field"] == "criteria"


async def test_names_routes_equal_the_library(client: httpx.AsyncClient, acme_key: str) -> None:
    query = (
        await client.post("/v1/names/query", json={"name": "John Smith", "seed": 7}, headers=bearer(acme_key))
    ).json()
    expected = build_query("John Smith", seed=7)
    assert query["labels"] == json.loads(json.dumps(expected.labels))
    assert query["text"] == expected.text
    labels = expected.labels
    rules = labels["rule_based"]
    gen_body = {
        "name": "John Smith",
        "count": labels["variation_count"],
        "phonetic_similarity": labels["phonetic_similarity"],
        "orthographic_similarity": labels["orthographic_similarity"],
        "rules": rules["selected_rules"],
        "rule_percentage": rules["rule_percentage"],
        "seed": 7,
        "compat": "stable",
    }
    generated = (await client.post("/v1/names/generate", json=gen_body, headers=bearer(acme_key))).json()
    assert generated["variations"] == generate_variations(
        "John Smith",
        labels["variation_count"],
        labels["phonetic_similarity"],
        labels["orthographic_similarity"],
        rules["selected_rules"],
        rules["rule_percentage"],
        7,
        compat="stable",
    )
    record = {"name": "John Smith", "variations": generated["variations"], "labels": labels}
    scored = await client.post("/v1/names/score", json={**record, "compat": "stable"}, headers=bearer(acme_key))
    assert scored.status_code == 200
    assert scored.json()["final"] == pytest.approx(score_record(record, compat="stable")["final"])


async def test_names_routes_score_under_a_hash_seed(client: httpx.AsyncClient, acme_key: str) -> None:
    record = {"name": "John Smith", "variations": ["Jon Smith", "John Smyth", "J. Smith"],
              "labels": {"variation_count": 3, "rule_based": {"selected_rules": ["delete_random_letter"]}}}  # fmt: skip
    default = (await client.post("/v1/names/score", json=record, headers=bearer(acme_key))).json()
    assert default["final"] == score_record(record, hash_seed=0)["final"]
    seeded = (await client.post("/v1/names/score", json={**record, "hash_seed": 5}, headers=bearer(acme_key))).json()
    assert seeded["final"] == score_record(record, hash_seed=5)["final"]
    body = {"name": "Anna Lee", "count": 5, "seed": 3, "hash_seed": 11}
    generated = (await client.post("/v1/names/generate", json=body, headers=bearer(acme_key))).json()
    assert generated["variations"] == generate_variations("Anna Lee", 5, seed=3, hash_seed=11)
    bad = await client.post("/v1/names/score", json={**record, "hash_seed": -1}, headers=bearer(acme_key))
    assert bad.status_code in (400, 422)


async def test_names_bad_labels_is_400(client: httpx.AsyncClient, acme_key: str) -> None:
    body = {"name": "John", "variations": ["Jon"], "labels": {}}
    response = await client.post("/v1/names/score", json=body, headers=bearer(acme_key))
    assert response.status_code == 400
    assert response.json()["field"] == "labels.variation_count"


@pytest.fixture
async def audit_client(store: RuleStore, examples: Path) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(store, make_settings(audit_docs=examples / "audit" / "docs")) as http:
        yield http


@pytest.mark.parametrize("case", ["fail_no_references.json", "fail_english_should.json"])
async def test_audit_equals_the_library(audit_client: httpx.AsyncClient, examples: Path, case: str) -> None:
    request = json.loads((examples / "audit" / "cases" / case).read_text(encoding="utf-8"))["request"]
    response = await audit_client.post("/v1/audit", json=request, headers=bearer(ADMIN_KEY))
    assert response.status_code == 200, response.text
    expected = analyze(request, load_documents(examples / "audit" / "docs")).model_dump(mode="json")
    assert response.json() == expected
    assert response.json()["result"] == "FAIL"


async def test_audit_errors(audit_client: httpx.AsyncClient) -> None:
    unknown = {"input": "x", "output": "y", "context_type": "poetry"}
    response = await audit_client.post("/v1/audit", json=unknown, headers=bearer(ADMIN_KEY))
    assert response.status_code == 422
    assert response.json()["field"] == "body.context_type"
    missing_doc = {"input": "x", "output": "y", "active_documents": ["Nope.md"]}
    response = await audit_client.post("/v1/audit", json=missing_doc, headers=bearer(ADMIN_KEY))
    assert response.status_code == 400
    assert response.json()["field"] == "active_documents"
