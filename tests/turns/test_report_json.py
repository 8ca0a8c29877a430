"""A turn report's parts are typed (issue #57): a match's enforcement and explanation are the matcher's own JSON
models, and the report's JSON (``to_dict()``, and the models the service and the MCP server answer) is generated from
the report's fields; the JSON itself is what it was, byte for byte."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import Field, ValidationError

from norma.matching import EnforcementData, EnforcementReason, ExplanationData, MatchedRuleData, MatchExplanation
from norma.matching._enforce import enforcement
from norma.turns import MatchedRuleSummary, TurnReport, turn_rubric
from tests.turns._fixed import REPORT_JSON, fixed_report, report_text

JSON_KEYS = ["verdict", "reward", "tenant_id", "rules_version", "matches", "rules", "counts", "audit"]


def test_the_report_json_is_what_it_was() -> None:
    assert report_text(fixed_report().to_dict()) == report_text(REPORT_JSON)


def test_a_kept_rubric_stays_out_of_the_json() -> None:
    report = fixed_report()
    report.keep_rubric(turn_rubric(report.rules))
    assert report_text(report.to_dict()) == report_text(REPORT_JSON)
    assert sorted(report.json_fields()) == sorted(JSON_KEYS)


def test_the_report_reads_back_from_its_dump() -> None:
    report = fixed_report()
    again = TurnReport.model_validate(report.model_dump())
    assert again == report
    assert again.to_dict() == report.to_dict()


def test_enforcement_and_explanation_are_typed() -> None:
    governs, neighbour = fixed_report().matches
    assert isinstance(governs.enforcement, EnforcementData)
    assert isinstance(governs.explanation, ExplanationData)
    assert (governs.enforcement.reason, governs.enforcement.confidence) == (EnforcementReason.GOVERNS, 0.9312)
    assert (neighbour.enforcement.enforced, neighbour.enforcement.reason) == (False, EnforcementReason.NEIGHBOUR)
    assert governs.explanation.matched_example == 1
    assert governs.explanation.matched_terms == ("refund", "order")
    assert neighbour.explanation.example_centroid == 0.625
    schema = MatchedRuleSummary.model_json_schema()
    assert schema["properties"]["enforcement"]["$ref"] == "#/$defs/EnforcementData"
    assert schema["properties"]["explanation"]["$ref"] == "#/$defs/ExplanationData"


def test_the_typed_parts_still_read_by_key() -> None:
    """Code written when they were dicts (``match.enforcement.get("confidence")``) reads the same values."""
    (governs, _) = fixed_report().matches
    assert governs.enforcement["reason"] == "governs"
    assert governs.enforcement.get("confidence") == 0.9312
    assert governs.enforcement.get("nothing") is None
    assert governs.explanation["threshold_on"] == "confidence"
    with pytest.raises(KeyError):
        governs.explanation["nothing"]


def test_the_parts_refuse_what_the_matcher_never_writes() -> None:
    data = REPORT_JSON["matches"][0]
    with pytest.raises(ValidationError):
        MatchedRuleSummary.model_validate({**data, "enforcement": {**data["enforcement"], "reason": "second"}})
    with pytest.raises(ValidationError):
        MatchedRuleSummary.model_validate({**data, "explanation": {**data["explanation"], "extra": 1}})
    without = {key: value for key, value in data.items() if key != "enforcement"}
    with pytest.raises(ValidationError):
        MatchedRuleSummary.model_validate(without)


def test_the_json_models_are_the_matchers_to_dict() -> None:
    """One schema per result: the models' keys are the dataclasses' ``to_dict()`` keys, in that order, and their
    fields; ``MatchedRuleData`` (``norma match``) and the report share them."""
    explanation = MatchExplanation(**{**REPORT_JSON["matches"][0]["explanation"], "matched_terms": ("refund",)})
    assert list(ExplanationData.model_fields) == list(explanation.to_dict())
    assert set(ExplanationData.model_fields) == {f.name for f in dataclasses.fields(MatchExplanation)}
    decided = enforcement(0.5)
    assert list(EnforcementData.model_fields) == list(decided.to_dict())
    assert ExplanationData.model_validate(explanation.to_dict()).model_dump(mode="json") == explanation.to_dict()
    assert EnforcementData.model_validate(decided.to_dict()).model_dump(mode="json") == decided.to_dict()
    assert MatchedRuleData.model_fields["enforcement"].annotation is EnforcementData
    assert MatchedRuleData.model_fields["explanation"].annotation is ExplanationData


def test_the_json_model_is_generated_from_the_report() -> None:
    model = TurnReport.json_model("Probe", "A probe.", module=__name__)
    assert list(model.model_fields) == JSON_KEYS
    assert all(info.is_required() for info in model.model_fields.values())
    for name, info in TurnReport.model_fields.items():
        assert model.model_fields[name].annotation == info.annotation
        assert model.model_fields[name].description == info.description
    report = fixed_report()
    assert report_text(model(**report.json_fields()).model_dump(mode="json")) == report_text(report.to_dict())
    assert (model.__name__, model.__doc__, model.__module__) == ("Probe", "A probe.", __name__)


def test_a_json_model_moves_fields_first_and_adds_fields_last() -> None:
    model = TurnReport.json_model(
        "Probe",
        "A probe.",
        first=("tenant_id",),
        tenant=(str | None, Field(default=None, exclude_if=lambda v: v is None)),
    )
    assert list(model.model_fields) == ["tenant_id", *(k for k in JSON_KEYS if k != "tenant_id"), "tenant"]
    fields = fixed_report().json_fields()
    assert "tenant" not in model(**fields).model_dump(mode="json")
    assert list(model(**fields, tenant="acme").model_dump(mode="json"))[-1] == "tenant"
    with pytest.raises(ValidationError):
        model(**fields, other=1)
