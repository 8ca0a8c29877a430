"""The SARIF norma writes validates against the official SARIF 2.1.0 JSON schema (OASIS SARIF TC, draft-07).

The schema is test data (tests/data/sarif-schema-2.1.0.json, see tests/data/README.md): nothing downloads it at
test time. ``format`` keywords are not asserted (jsonschema checks them only when asked)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft7Validator

from norma.audit import AuditConfig, AuditReport, DocumentSet, analyze, load_documents
from norma.reports import Incomplete, render_turns, to_sarif
from norma.turns import Norma, TurnReport
from norma.turns import open as open_rules
from tests.audit.test_reports import CHATTY, FAILING, PASSING, WARNING
from tests.conftest import EXAMPLES, REPO

SCHEMA_FILE = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"
BANKING = EXAMPLES / "rulebooks" / "banking-support.yaml"
CHEAP = AuditConfig(embeddings=False)


@pytest.fixture(scope="module")
def validator() -> Draft7Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


def errors(validator: Draft7Validator, log: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(log)]


def test_the_schema_is_the_unmodified_oasis_one() -> None:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["$id"].endswith("/sarif-schema-2.1.0.json")
    assert schema["required"] == ["version", "runs"]
    assert schema["properties"]["version"] == {
        "description": "The SARIF format version of this log file.",
        "enum": ["2.1.0"],
    }
    assert schema["definitions"]["result"]["required"] == ["message"]
    assert len(SCHEMA_FILE.read_bytes()) == 117481


# --- a log the schema must refuse: the test can fail --------------------------------------------------------------


def _minimal() -> dict[str, Any]:
    return {
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "r", "message": {"text": "m"}}]}],
    }


def test_a_minimal_log_is_valid(validator: Draft7Validator) -> None:
    assert errors(validator, _minimal()) == []


@pytest.mark.parametrize(
    ("breakage", "why"),
    [
        (lambda log: log["runs"][0]["results"][0].pop("message"), "'message' is a required property"),
        (lambda log: log["runs"][0]["results"][0].update(level="info"), "'info' is not one of"),
        (lambda log: log.update(version="2.0.0"), "is not one of ['2.1.0']"),
        (lambda log: log["runs"][0]["tool"]["driver"].pop("name"), "'name' is a required property"),
        (
            lambda log: log["runs"][0]["results"][0].update(
                locations=[{"physicalLocation": {"artifactLocation": {"uri": "a"}, "region": {"startLine": 0}}}]
            ),
            "less than the minimum of 1",
        ),
        (lambda log: log["runs"][0]["results"][0].update(unknown=1), "Additional properties"),
    ],
)
def test_a_broken_log_is_refused(validator: Draft7Validator, breakage: Any, why: str) -> None:
    log = _minimal()
    breakage(log)
    found = errors(validator, log)
    assert found
    assert any(why in e for e in found), found


# --- the audit ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def docs() -> DocumentSet:
    return load_documents(EXAMPLES / "audit" / "docs")


def test_audit_sarif_of_one_report_validates(validator: Draft7Validator, docs: DocumentSet) -> None:
    log = to_sarif([("answer.md", analyze(FAILING, docs, CHEAP))])
    assert any(r["kind"] == "fail" for r in log["runs"][0]["results"])
    assert errors(validator, log) == []


def test_audit_sarif_of_a_batch_validates(validator: Draft7Validator, docs: DocumentSet) -> None:
    items: list[tuple[str, AuditReport]] = [
        (f"outputs/run 1.jsonl:{n}", analyze(r, docs, CHEAP))
        for n, r in zip((1, 3, 4, 5), (PASSING, WARNING, FAILING, CHATTY), strict=True)
    ]
    log = to_sarif(items, "warning")
    kinds = {r["kind"] for r in log["runs"][0]["results"]}
    assert {"fail", "notApplicable"} <= kinds
    assert errors(validator, log) == []


def test_the_validator_sees_a_broken_audit_log(validator: Draft7Validator, docs: DocumentSet) -> None:
    log = to_sarif([("answer.md", analyze(FAILING, docs, CHEAP))])
    broken = copy.deepcopy(log)
    del broken["runs"][0]["results"][0]["message"]
    assert errors(validator, log) == []
    assert any("'message' is a required property" in e for e in errors(validator, broken))


# --- the turn check -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def banking() -> Norma:
    return open_rules(BANKING, judge=None)


@pytest.mark.model
def test_turn_sarif_of_an_output_file_validates(validator: Draft7Validator, banking: Norma) -> None:
    report = banking.check(
        "there is a payment on my account I never made", "Payments take time.\nCheck again next week."
    )
    log = json.loads(render_turns("sarif", [("answers/fraud.txt", report)]))
    errors_found = {r["ruleId"] for r in log["runs"][0]["results"] if r["level"] == "error"}
    assert "fraud-suspected/offers-freeze" in errors_found
    assert errors(validator, log) == []


@pytest.mark.model
def test_turn_sarif_with_evidence_validates(validator: Draft7Validator, banking: Norma) -> None:
    report = banking.check("what is my balance", "Hello.\nYour card 4111 1111 1111 1111 is fine.")
    log = json.loads(render_turns("sarif", [("answer.txt", report)]))
    (result,) = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 11}
    assert errors(validator, log) == []


@pytest.mark.model
def test_turn_sarif_of_a_batch_validates(validator: Draft7Validator, banking: Norma) -> None:
    turns = [json.loads(line) for line in (EXAMPLES / "turns" / "banking.jsonl").read_text("utf-8").splitlines()]
    items: list[tuple[str, TurnReport]] = [
        (f"examples/turns/banking.jsonl:{n}", banking.check(t["message"], t["output"]))
        for n, t in enumerate(turns, start=1)
    ]
    log = json.loads(render_turns("sarif", items, "warning"))
    results = log["runs"][0]["results"]
    assert {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results} >= {2, 3, 5, 7}
    assert len(log["runs"][0]["properties"]["reports"]) == len(turns)
    assert errors(validator, log) == []


@pytest.mark.model
def test_turn_sarif_of_an_interrupted_batch_validates(validator: Draft7Validator, banking: Norma) -> None:
    report = banking.check("what is my balance", "Your card 4111 1111 1111 1111 is fine.")
    stopped = Incomplete(done=1, total=9, signal="SIGTERM", exit_code=143)
    log = json.loads(render_turns("sarif", [("turns.jsonl:1", report)], incomplete=stopped))
    (invocation,) = log["runs"][0]["invocations"]
    assert (invocation["executionSuccessful"], invocation["exitCode"], invocation["exitSignalName"]) == (
        False,
        143,
        "SIGTERM",
    )
    assert invocation["toolExecutionNotifications"][0]["message"]["text"] == (
        "interrupted (SIGTERM) after 1 of 9 records: the other 8 were not checked"
    )
    assert log["runs"][0]["properties"]["incomplete"] is True
    assert errors(validator, log) == []


@pytest.mark.model
def test_turn_sarif_with_an_audit_validates(validator: Draft7Validator) -> None:
    audited = open_rules(BANKING, judge=None, audit=True, documents=EXAMPLES / "audit" / "docs")
    report = audited.check("Implementa la clase FlowShaper", FAILING["output"])
    assert report.audit is not None
    assert report.audit.violations
    log = json.loads(render_turns("sarif", [("examples/turns/x.jsonl:4", report)]))
    audit_results = [r for r in log["runs"][0]["results"] if r["ruleId"].startswith("IR.")]
    assert audit_results
    assert errors(validator, log) == []
    broken = copy.deepcopy(log)
    broken["runs"][0]["results"][0]["level"] = "info"
    assert errors(validator, broken)


@pytest.mark.model
def test_turn_sarif_with_no_failure_validates(validator: Draft7Validator, banking: Norma) -> None:
    report = banking.check("I want to make a complaint", "Logged under CMP-482913; we answer within eight weeks.")
    log = json.loads(render_turns("sarif", [("output", report)]))
    assert log["runs"][0]["results"] == []
    assert errors(validator, log) == []


@pytest.mark.model
def test_an_inline_output_has_no_file_location(validator: Draft7Validator, banking: Norma) -> None:
    report = banking.check("what is my balance", "Your card 4111 1111 1111 1111 is fine.")
    log = json.loads(render_turns("sarif", [("<output>", report)]))
    (result,) = log["runs"][0]["results"]
    assert result["locations"] == []
    assert (result["properties"]["outputLine"], result["properties"]["outputColumn"]) == (1, 11)
    assert errors(validator, log) == []
