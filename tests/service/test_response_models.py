"""The responses are the library's models: every JSON route documents a named model, and the models the service
and the MCP tools share describe the library's own JSON exactly (an optional key absent, not null)."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from norma.names import NameScore, score_record
from norma.rubrics import RubricScore, evaluate_rubric
from norma.service import create_app
from norma.service._schemas import CheckResponse
from norma.service._state import ServiceState
from norma.store import RuleStore
from norma.turns import TurnReport
from tests.service.conftest import app_client, bearer, make_settings
from tests.turns._fixed import MESSAGE, OUTPUT, REPORT_JSON, fixed_report, report_text

RUBRIC: dict[str, Any] = {
    "version": "1",
    "goal_text": "answer well",
    "aggregation": "weighted_sum",
    "criteria": [
        {"id": "a", "description": "A", "weight": 2, "required": True},
        {"id": "b", "description": "B", "weight": 1},
    ],
}
LABELS = {"variation_count": 2, "phonetic_similarity": {"Medium": 1.0}, "orthographic_similarity": {"Medium": 1.0}}


def test_every_json_route_answers_a_named_model() -> None:
    paths = create_app(make_settings()).openapi()["paths"]
    untyped = []
    for path, item in paths.items():
        for method, op in item.items():
            ok = op["responses"].get("200") or op["responses"].get("201")
            schema = (ok or {}).get("content", {}).get("application/json", {}).get("schema")
            if schema is not None and "$ref" not in schema:
                untyped.append(f"{method.upper()} {path}: {schema}")
    assert untyped == []
    shared = ("/v1/rubrics/evaluate", "/v1/names/score", "/v1/audit")
    refs = {path: paths[path]["post"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
            for path in shared}  # fmt: skip
    assert refs == {
        "/v1/rubrics/evaluate": "#/components/schemas/RubricScore",
        "/v1/names/score": "#/components/schemas/NameScore",
        "/v1/audit": "#/components/schemas/AuditReport",
    }


@pytest.mark.parametrize(
    ("options", "keys"),
    [
        ({"outcome": {"a": 1, "b": 0.25}}, ["aggregation", "reward", "per_criterion"]),
        (
            {"outcome": {"a": 0.2}, "enforce_required": True, "pass_threshold": 0.5},
            ["aggregation", "reward", "per_criterion", "failed_required", "passed"],
        ),
    ],
)
def test_rubric_score_is_the_evaluation_json(options: dict[str, Any], keys: list[str]) -> None:
    scored = evaluate_rubric(RUBRIC, **options)
    dumped = RubricScore.model_validate(scored).model_dump(mode="json")
    assert list(dumped) == keys
    assert dumped == scored


def test_a_custom_rubric_score_names_its_aggregator() -> None:
    custom = {**RUBRIC, "aggregation": "custom"}
    scored = evaluate_rubric(custom, events=[{"criterion_id": "a", "reward": 1}], aggregator="min")
    dumped = RubricScore.model_validate(scored).model_dump(mode="json")
    assert (dumped["aggregator"], list(dumped)) == ("min", ["aggregation", "reward", "per_criterion", "aggregator"])


@pytest.mark.parametrize("metrics", [False, True])
def test_name_score_is_the_record_json(metrics: bool) -> None:
    record = {"name": "John Smith", "variations": ["Jon Smith", "John Smyth"], "labels": LABELS}
    scored = score_record(record, metrics=metrics, hash_seed=0)
    dumped = NameScore.model_validate(scored).model_dump(mode="json")
    assert dumped == scored
    assert list(dumped)[:2] == ["name", "final"]
    assert ("metrics" in dumped) is metrics
    mcp = NameScore.model_validate({"compat": "miid", "hash_seed": 0, **scored}).model_dump(mode="json")
    assert list(mcp)[:3] == ["compat", "hash_seed", "name"]


CHECK_ANSWER = (
    '{"tenant_id":"acme","verdict":"fail","reward":0.3333333333333333,"rules_version":3,"matches":[{"rule'
    '_id":"refund","final_score":0.71,"enforced":true,"enforcement":{"enforced":true,"reason":"governs","'
    'confidence":0.9312,"detail":"confidence 0.93 >= 0.7 that it governs the message"},"explanation":{"si'
    'milarity":0.8123456789012345,"vector_score":0.30000000000000004,"matched_text":"can I get a refund f'
    'or my order","matched_example":1,"bm25_raw":3.0,"bm25_normalized":1.0,"bm25_normalization":"query","'
    'matched_terms":["refund","order"],"hybrid":0.5,"priority_normalized":0.0,"scope_weight":1.0,"final":'
    '0.71,"threshold":null,"threshold_on":"confidence","weights":{"vector":0.7,"bm25":0.3,"hybrid":1.0},"'
    'example_centroid":null}},{"rule_id":"orders","final_score":0.5,"enforced":false,"enforcement":{"enfo'
    'rced":false,"reason":"neighbour","confidence":0.25,"detail":"confidence 0.25 < 0.7 that it governs t'
    'he message"},"explanation":{"similarity":0.8123456789012345,"vector_score":0.30000000000000004,"matc'
    'hed_text":"customer asks for a refund","matched_example":null,"bm25_raw":3.0,"bm25_normalized":1.0,"'
    'bm25_normalization":"query","matched_terms":["refund","order"],"hybrid":0.5,"priority_normalized":0.'
    '0,"scope_weight":1.0,"final":0.71,"threshold":0.4,"threshold_on":"similarity","weights":{"vector":0.'
    '7,"bm25":0.3,"hybrid":1.0},"example_centroid":0.625}}],"rules":[{"rule_id":"refund","description":"e'
    'xplain the refund policy and give the form reference","matched":true,"enforced":true,"verdict":"fail'
    '","score":0.5,"weight":2.0,"required":true,"checks":[{"rule_id":"refund","check_id":"policy","kind":'
    '"contains","severity":"error","weight":1.0,"status":"pass","message":"found \'refund policy\'","eviden'
    'ce":[],"enforced":true},{"rule_id":"refund","check_id":"reference","kind":"regex","severity":"error"'
    ',"weight":1.0,"status":"fail","message":"no match for REF-[0-9]{4}","evidence":[],"enforced":true}]}'
    ',{"rule_id":"orders","description":"give the order\'s status","matched":true,"enforced":false,"verdic'
    't":"skip","score":null,"weight":0.0,"required":false,"checks":[{"rule_id":"orders","check_id":"statu'
    's","kind":"contains","severity":"warning","weight":1.0,"status":"skip","message":"not enforced: conf'
    'idence 0.25 < 0.7 that it governs the message","evidence":[],"enforced":false}]},{"rule_id":"card-sa'
    'fety","description":"customer asks about branch opening hours","matched":false,"enforced":false,"ver'
    'dict":"fail","score":0.0,"weight":1.0,"required":true,"checks":[{"rule_id":"card-safety","check_id":'
    '"no-card","kind":"no_pii","severity":"error","weight":1.0,"status":"fail","message":"1 card number ('
    'é)","evidence":[{"start":28,"end":44,"line":1,"column":29,"text":"************1111"}],"enforced":tru'
    'e}]}],"counts":{"pass":1,"fail":2,"skip":1},"audit":null}'
)
"""What ``POST /v1/tenants/acme/check`` answered for :func:`~tests.turns._fixed.fixed_report` before issue #57's
typed report (captured from that code, then written here): the bytes, key order and number formatting included."""


class _Rules:
    """A tenant's rules whose check of any turn is the fixed report (the route's framing is what is tested)."""

    def check(self, message: str, output: str, session: object = None, *, audit: bool = False) -> TurnReport:
        assert (message, output, audit) == (MESSAGE, OUTPUT, False)
        return fixed_report("acme")


@pytest.mark.anyio
async def test_check_answers_the_same_bytes(store: RuleStore, acme_key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ServiceState, "rules_of", lambda self, tenant, request: _Rules())
    async with app_client(store) as http:
        response = await http.post(
            "/v1/tenants/acme/check", json={"message": MESSAGE, "output": OUTPUT}, headers=bearer(acme_key)
        )
        document = (await http.get("/openapi.json")).json()
    assert response.status_code == 200, response.text
    assert response.text == CHECK_ANSWER
    assert response.text == report_text({"tenant_id": "acme", **REPORT_JSON}, compact=True)
    schema = {"$ref": "#/components/schemas/CheckResponse", "components": document["components"]}
    Draft202012Validator(schema).validate(response.json())


def test_the_check_response_is_generated_from_the_report() -> None:
    """``CheckResponse`` is ``TurnReport``'s JSON model (never its fields declared again), the tenant's id first as
    the route writes it; every key is required, and nothing else is allowed."""
    fields = CheckResponse.model_fields
    assert list(fields) == ["tenant_id", "verdict", "reward", "rules_version", "matches", "rules", "counts", "audit"]
    for name, info in TurnReport.model_fields.items():
        assert (fields[name].annotation, fields[name].description) == (info.annotation, info.description)
    assert all(info.is_required() for info in fields.values())
    schemas = create_app(make_settings()).openapi()["components"]["schemas"]
    assert schemas["CheckResponse"]["required"] == list(fields)
    assert schemas["CheckResponse"]["additionalProperties"] is False
    summary = schemas["MatchedRuleSummary"]["properties"]
    assert summary["enforcement"]["$ref"] == "#/components/schemas/EnforcementData"
    assert summary["explanation"]["$ref"] == "#/components/schemas/ExplanationData"
    matched = schemas["MatchedRuleData"]["properties"]
    assert matched["explanation"]["$ref"] == "#/components/schemas/ExplanationData"
