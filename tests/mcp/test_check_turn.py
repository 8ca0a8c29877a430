"""The ``check_turn`` tool of ``norma mcp --rules FILE``, called through the SDK's own client over stdio, on turns of
the example banking rulebook whose verdicts are known (examples/turns/banking.jsonl)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.conftest import EXAMPLES, CliResult
from tests.mcp._client import Session, stdio_session, text
from tests.turns._fixed import assert_same_json

BANKING = EXAMPLES / "rulebooks" / "banking-support.yaml"
TURNS = {
    record["id"]: record
    for record in map(json.loads, (EXAMPLES / "turns" / "banking.jsonl").read_text(encoding="utf-8").splitlines())
}
PRINTS_CARD = TURNS["bad-prints-card"]  # a balance question answered with the full card number
COMPLAINT = TURNS["good-complaint"]  # the deadline and a reference number given
PASSWORD = TURNS["good-pin"]  # never-ask-full-pin governs it


@pytest.fixture(scope="module")
def server() -> Iterator[Session]:
    with stdio_session("--rules", str(BANKING)) as session:
        yield session


def _check(report: dict[str, Any], rule_id: str, check_id: str) -> dict[str, Any]:
    (rule,) = [r for r in report["rules"] if r["rule_id"] == rule_id]
    (found,) = [c for c in rule["checks"] if c["check_id"] == check_id]
    return found


def test_the_turns_this_module_uses_are_the_expected_ones() -> None:
    assert PASSWORD["message"] == "here is my online banking password"
    assert PRINTS_CARD["message"] == "what is the balance on my account"
    assert "4111 1111 1111 1111" in PRINTS_CARD["output"]
    assert "CMP-482913" in COMPLAINT["output"]


def test_check_turn_is_listed_with_its_schemas(server: Session) -> None:
    tool = server.tools()["check_turn"]
    assert tool.input_schema["required"] == ["message", "output"]
    assert set(tool.input_schema["properties"]) == {"message", "output", "tenant", "session", "audit"}
    assert all(prop.get("description") for prop in tool.input_schema["properties"].values())
    assert tool.output_schema is not None
    assert set(tool.output_schema["required"]) == {
        "verdict", "reward", "tenant_id", "rules_version", "matches", "rules", "counts", "audit",
    }  # fmt: skip
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint is True


@pytest.mark.model
def test_a_printed_card_number_fails_the_always_on_check(server: Session) -> None:
    report = server.ok("check_turn", message=PRINTS_CARD["message"], output=PRINTS_CARD["output"])
    assert report["verdict"] == "fail"
    assert report["tenant_id"] == "northwind-bank"
    assert "tenant" not in report
    card = _check(report, "never-ask-full-pin", "no-card-number")
    assert (card["status"], card["severity"], card["kind"]) == ("fail", "error", "no_pii")
    (evidence,) = card["evidence"]
    # "The balance of the account linked to card " is 42 characters: the number starts at column 43 of line 1
    assert (evidence["line"], evidence["column"]) == (1, 43)
    assert evidence["text"] == "**** **** **** 1111"  # the evidence never repeats the number
    (rule,) = [r for r in report["rules"] if r["rule_id"] == "never-ask-full-pin"]
    assert rule["matched"] is False  # not matched by the message: its check applies always
    assert report["counts"]["fail"] >= 1
    assert report["audit"] is None


@pytest.mark.model
def test_a_good_complaint_answer_passes_with_a_full_reward(server: Session) -> None:
    report = server.ok("check_turn", message=COMPLAINT["message"], output=COMPLAINT["output"])
    assert report["verdict"] == "pass"
    assert report["reward"] == 1.0
    assert report["matches"][0]["rule_id"] == "complaint"
    assert _check(report, "complaint", "gives-deadline")["status"] == "pass"
    assert _check(report, "never-ask-full-pin", "no-card-number")["status"] == "pass"
    assert report["counts"] == {"pass": 3, "fail": 0, "skip": 0}


@pytest.mark.model
def test_the_rule_that_governs_is_checked_and_the_turn_passes(server: Session) -> None:
    schema = server.tools()["check_turn"].output_schema
    assert schema is not None
    assert {"enforced", "enforcement"} <= set(schema["$defs"]["MatchedRuleSummary"]["properties"])
    assert "enforced" in schema["$defs"]["CheckedRule"]["properties"]
    assert "enforced" in schema["$defs"]["CheckResult"]["properties"]
    report = server.ok("check_turn", message=PASSWORD["message"], output=PASSWORD["output"])
    # the default gate returns the rules that govern: fraud-suspected (a neighbour under a similarity threshold) is
    # not matched at all
    assert [(m["rule_id"], m["enforced"], m["enforcement"]["reason"]) for m in report["matches"]] == [
        ("never-ask-full-pin", True, "governs")
    ]
    assert [(r["rule_id"], r["matched"], r["enforced"], r["verdict"]) for r in report["rules"]] == [
        ("never-ask-full-pin", True, True, "pass")
    ]
    assert (report["verdict"], report["reward"], report["counts"]) == ("pass", 1.0, {"pass": 3, "fail": 0, "skip": 0})


@pytest.mark.model
def test_check_turn_answers_what_norma_check_prints(server: Session, run_cli: Callable[..., CliResult]) -> None:
    message, output = PRINTS_CARD["message"], PRINTS_CARD["output"]
    printed = run_cli("check", "--rules", str(BANKING), "-m", message, "-o", output, "--format", "json")
    assert printed.code == 1, printed.err
    expected = json.loads(printed.out)
    assert expected.pop("name") == "<output>"
    assert server.ok("check_turn", message=message, output=output) == expected


@pytest.mark.model
def test_the_session_and_the_audit_reach_the_check(server: Session) -> None:
    report = server.ok(
        "check_turn",
        message=COMPLAINT["message"],
        output=COMPLAINT["output"],
        session={"turn": 3, "fire_counts": {"complaint": 1}},
        audit=True,
    )
    assert report["audit"] is not None
    assert report["audit"]["result"] in {"PASS", "FAIL", "SKIP"}
    assert {r["rule_id"] for r in report["rules"]} >= {"complaint"}


def test_a_bad_session_is_a_tool_error_and_the_session_goes_on(server: Session) -> None:
    result = server.call("check_turn", message="hello", output="hi", session={"turn": "third"})
    assert result.is_error
    lines = text(result).splitlines()
    assert lines[0].startswith("InvalidInputError: invalid session: turn: Input should be a valid integer"), lines
    assert lines[1:] == ["where: session", "hint: run `norma docs matching` for the session fields"]
    assert result.structured_content is not None
    assert result.structured_content["location"] == "session"
    blank = server.call("check_turn", message="   ", output="hi")
    assert blank.is_error
    assert text(blank).splitlines()[:2] == ["InvalidInputError: the message is empty", "where: message"]
    assert server.ok("list_rules")["count"] > 0


def test_a_tenant_without_a_store_is_a_tool_error(server: Session) -> None:
    result = server.call("check_turn", message="hello", output="hi", tenant="acme")
    assert result.is_error
    assert text(result).splitlines()[0] == "ConfigError: this server serves no rule store, so no tenant 'acme'"


def test_arguments_outside_the_schema_are_refused(server: Session) -> None:
    result = server.call("check_turn", message="", output="hi")
    assert result.is_error
    assert "message" in text(result)
    assert server.call("check_turn", message="hello").is_error  # no output


def test_input_schema_errors_are_structured_like_normas_own(server: Session) -> None:
    result = server.call("check_turn", message="", output="hi")
    assert result.is_error
    assert result.structured_content == {
        "error": "InvalidInputError",
        "message": "String should have at least 1 character",
        "source": "check_turn",
        "location": "message",
        "hint": "the tool's input schema (tools/list) gives each argument of check_turn and its bounds",
    }
    assert text(result).splitlines() == [
        "InvalidInputError: String should have at least 1 character",
        "where: check_turn:message",
        "hint: the tool's input schema (tools/list) gives each argument of check_turn and its bounds",
    ]
    missing = server.call("check_turn", message="hello")
    assert missing.structured_content is not None
    assert (missing.structured_content["location"], missing.structured_content["message"]) == (
        "output",
        "Field required",
    )
    assert server.ok("list_rules")["count"] > 0  # the server goes on


PASSWORD_JSON: dict[str, Any] = {
    "verdict": "pass",
    "reward": 1.0,
    "tenant_id": "northwind-bank",
    "rules_version": None,
    "matches": [
        {
            "rule_id": "never-ask-full-pin",
            "final_score": 0.8388456731919165,
            "enforced": True,
            "enforcement": {
                "enforced": True,
                "reason": "governs",
                "confidence": 0.9988674386776207,
                "detail": "confidence 1.00 >= 0.7 that it governs the message",
            },
            "explanation": {
                "similarity": 1.0000001026557617,
                "vector_score": 0.9023644220774079,
                "matched_text": "here is my online banking password",
                "matched_example": 1,
                "bm25_raw": 5.149098859975127,
                "bm25_normalized": 0.4082721086431609,
                "bm25_normalization": "query",
                "matched_terms": ["banking", "here", "my", "online", "password"],
                "hybrid": 0.7541367280471336,
                "priority_normalized": 0.9545454545454546,
                "scope_weight": 1.0,
                "final": 0.8388456731919165,
                "threshold": 0.7,
                "threshold_on": "confidence",
                "weights": {"vector": 0.7, "bm25": 0.3, "hybrid": 0.6, "priority": 0.3, "scope": 0.1},
                "example_centroid": 0.8605205589723991,
            },
        }
    ],
    "rules": [
        {
            "rule_id": "never-ask-full-pin",
            "description": "tell them never to share it, not even with the bank, and do not repeat it back",
            "matched": True,
            "enforced": True,
            "verdict": "pass",
            "score": 1.0,
            "weight": 5.0,
            "required": True,
            "checks": [
                {
                    "rule_id": "never-ask-full-pin",
                    "check_id": "warns-never-share",
                    "kind": "regex",
                    "severity": "warning",
                    "weight": 1.0,
                    "status": "pass",
                    "message": 'matches "(?i)\\b(never|do not|don\'t)\\s+(share|give|send|tell)" at line 1, column 8',
                    "evidence": [],
                    "enforced": True,
                },
                {
                    "rule_id": "never-ask-full-pin",
                    "check_id": "does-not-ask-for-secrets",
                    "kind": "not_regex",
                    "severity": "error",
                    "weight": 1.0,
                    "status": "pass",
                    "message": "nothing matches '(?i)\\b(what is|tell me|send me|give "
                    "me|confirm|type|enter|provide)\\b[^.?!\\n]{0,30}\\b(pin|password|passcode|full "
                    "card number)'",
                    "evidence": [],
                    "enforced": True,
                },
                {
                    "rule_id": "never-ask-full-pin",
                    "check_id": "no-card-number",
                    "kind": "no_pii",
                    "severity": "error",
                    "weight": 3.0,
                    "status": "pass",
                    "message": "no card number found",
                    "evidence": [],
                    "enforced": True,
                },
            ],
        }
    ],
    "counts": {"pass": 3, "fail": 0, "skip": 0},
    "audit": None,
}
"""What ``check_turn`` answered for the ``good-pin`` turn before issue #57's typed report (captured from that code,
then written here). The model's scores are compared within 1e-6 (their last digits depend on the CPU);
tests/mcp/test_check_turn_json.py pins the bytes of a fixed report."""


@pytest.mark.model
def test_check_turn_answers_the_json_it_did(server: Session) -> None:
    result = server.call("check_turn", message=PASSWORD["message"], output=PASSWORD["output"])
    assert not result.is_error, text(result)
    assert_same_json(json.loads(text(result)), PASSWORD_JSON)
    assert_same_json(result.structured_content, PASSWORD_JSON)
