"""``norma mcp --rules FILE --audit-docs DIR`` over stdio, every tool called through the SDK's own client."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from tests.conftest import EXAMPLES, REPO, CliResult
from tests.mcp._client import Session, stdio_session, text

BANKING = EXAMPLES / "rulebooks" / "banking-support.yaml"
AUDIT = EXAMPLES / "audit"
TOOLS = {"match_rules", "check_turn", "audit_output", "score_rubric", "score_name_variations", "list_rules"}
# a labelled message of the example rulebook and the rule it must match (examples/rulebooks/*.labelled.jsonl)
LOST_CARD = "my card has gone missing, I had it at the supermarket this morning"


@pytest.fixture(scope="module")
def server() -> Iterator[Session]:
    with stdio_session("--rules", str(BANKING), "--audit-docs", str(AUDIT / "docs")) as session:
        yield session


def _rulebook_ids() -> list[str]:
    return [rule["id"] for rule in yaml.safe_load(BANKING.read_text(encoding="utf-8"))["rules"]]


def test_the_labelled_message_is_the_one_this_module_expects() -> None:
    lines = (EXAMPLES / "rulebooks" / "banking-support.labelled.jsonl").read_text(encoding="utf-8").splitlines()
    labelled = [json.loads(line) for line in lines]
    assert {"message": LOST_CARD, "expected": ["lost-or-stolen-card"]} in labelled


def test_list_tools_shows_every_tool_with_its_schemas(server: Session) -> None:
    tools = server.tools()
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description, tool.name
        assert tool.output_schema is not None, tool.name
        assert tool.output_schema["type"] == "object", tool.name
        assert tool.annotations is not None, tool.name
        assert tool.annotations.read_only_hint is True, tool.name
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), (tool.name, name)
    match = tools["match_rules"].input_schema
    assert match["required"] == ["message"]
    assert match["properties"]["top_k"]["anyOf"][0] == {"type": "integer", "minimum": 1, "maximum": 100}
    assert set(tools["match_rules"].output_schema["required"]) == {"message", "rules", "matches", "gate"}
    audit = tools["audit_output"]
    assert audit.input_schema["required"] == ["input", "output"]
    assert audit.input_schema["properties"]["lang"]["enum"] == ["auto", "en", "es"]
    assert audit.output_schema["properties"]["result"]["$ref"].endswith("/Verdict")
    assert set(tools["score_name_variations"].input_schema["required"]) == {"name", "variations", "labels"}
    assert tools["list_rules"].output_schema["$defs"]["RuleSummary"]["required"] == [
        "id", "condition_text", "action_text", "priority", "scope", "scenario_id", "step_id", "enabled", "tags",
    ]  # fmt: skip


def test_the_server_says_what_it_serves_on_stderr_not_stdout(server: Session) -> None:
    assert f"norma mcp over stdio: transport stdio, rules {BANKING}, audit_docs {AUDIT / 'docs'}" in (
        server.stderr.read_text(encoding="utf-8")
    )


@pytest.mark.model
def test_match_rules_finds_the_labelled_rule(server: Session) -> None:
    found = server.ok("match_rules", message=LOST_CARD)
    assert found["message"] == LOST_CARD
    assert found["rules"] == len(_rulebook_ids())
    assert found["matches"][0]["rule_id"] == "lost-or-stolen-card"
    assert found["matches"][0]["rule"]["action_text"] == (
        "start the lost card flow and block the card before anything else"
    )
    finals = [m["final_score"] for m in found["matches"]]
    assert finals == sorted(finals, reverse=True)
    assert found["gate"]["kind"] == "confidence"
    assert "tenant" not in found
    assert "dropped" not in found
    one = server.ok("match_rules", message=LOST_CARD, top_k=1, explain=True)
    assert [m["rule_id"] for m in one["matches"]] == ["lost-or-stolen-card"]
    assert {d["reason"] for d in one["dropped"]} >= {"threshold"}
    none = server.ok("match_rules", message=LOST_CARD, tags=["no-such-tag"])
    assert none["matches"] == []


@pytest.mark.model
def test_match_rules_says_which_matches_govern_the_turn(server: Session) -> None:
    schema = server.tools()["match_rules"].output_schema
    assert schema is not None
    assert "enforcement" in schema["$defs"]["MatchedRuleData"]["required"]
    enforcement = schema["$defs"]["EnforcementData"]
    assert enforcement["required"] == ["enforced", "reason", "confidence", "detail"]
    assert schema["$defs"]["EnforcementReason"]["enum"] == ["governs", "neighbour"]
    # examples/turns/banking.jsonl's good-pin message: never-ask-full-pin governs it; fraud-suspected does not, and
    # the default gate leaves it out (why: in the dropped list)
    found = server.ok("match_rules", message="here is my online banking password", explain=True)
    decided = {m["rule_id"]: m["enforcement"] for m in found["matches"]}
    governs = decided["never-ask-full-pin"]["confidence"]
    assert decided["never-ask-full-pin"] == {
        "enforced": True,
        "reason": "governs",
        "confidence": governs,
        "detail": f"confidence {governs:.2f} >= 0.7 that it governs the message",
    }
    assert 0.7 <= governs <= 1
    assert list(decided) == ["never-ask-full-pin"]
    (fraud,) = [d for d in found["dropped"] if d["rule_id"] == "fraud-suspected"]
    assert fraud["reason"] == "threshold"
    assert fraud["detail"].startswith("confidence 0.")
    assert "< 0.7 that it governs the message (similarity 0." in fraud["detail"]


@pytest.mark.model
def test_match_rules_answers_what_norma_match_prints(server: Session, run_cli: Callable[..., CliResult]) -> None:
    printed = run_cli("match", "--rules", str(BANKING), LOST_CARD, "--format", "json")
    assert printed.code == 0, printed.err
    assert server.ok("match_rules", message=LOST_CARD) == json.loads(printed.out)


def test_audit_output_fails_an_answer_without_references(server: Session) -> None:
    case = json.loads((AUDIT / "cases" / "fail_no_references.json").read_text(encoding="utf-8"))
    assert case["expect"] == {"result": "FAIL", "violations": ["IR.0.01", "IR.8.01"]}
    report = server.ok("audit_output", **case["request"], embeddings=False, lang="en")
    assert report["result"] == "FAIL"
    assert sorted({v["rule"] for v in report["violations"]}) == ["IR.0.01", "IR.8.01"]
    assert report["lang"] == "en"
    spanish = server.ok("audit_output", **case["request"], embeddings=False, lang="es")
    assert spanish["lang"] == "es"
    assert spanish["result"] == "FAIL"


def test_audit_output_skips_a_greeting(server: Session) -> None:
    case = json.loads((AUDIT / "cases" / "skip_greeting.json").read_text(encoding="utf-8"))
    assert case["expect"]["result"] == "SKIP"
    assert server.ok("audit_output", **case["request"], embeddings=False)["result"] == "SKIP"


# code_review.json: weighted_sum of correctness 2.0, tests 1.5, style 1.0, docs 0.5 (weights sum to 5)
OUTCOME = {"correctness": 1.0, "tests": 0.5, "style": 0.0, "docs": 1.0}
REWARD = (2.0 * 1.0 + 1.5 * 0.5 + 1.0 * 0.0 + 0.5 * 1.0) / 5.0  # 0.65


def test_score_rubric_from_an_object_a_file_and_events(server: Session) -> None:
    rubric = json.loads((EXAMPLES / "rubrics" / "code_review.json").read_text(encoding="utf-8"))
    inline = server.ok("score_rubric", rubric=rubric, outcome=OUTCOME, pass_threshold=0.6)
    assert inline["reward"] == pytest.approx(REWARD)
    assert (inline["aggregation"], inline["passed"]) == ("weighted_sum", True)
    assert inline["per_criterion"]["tests"] == {"reward": 0.5, "weight": 1.5, "required": False}
    assert inline["per_criterion"]["correctness"]["required"] is True
    from_file = server.ok("score_rubric", rubric="examples/rubrics/code_review.json", outcome=OUTCOME)
    assert from_file["reward"] == pytest.approx(REWARD)
    assert "passed" not in from_file  # no verdict asked for: the key is absent, as in `norma rubric eval`
    events = [{"criterion_id": cid, "reward": reward} for cid, reward in OUTCOME.items()]
    assert server.ok("score_rubric", rubric=rubric, events=events)["reward"] == pytest.approx(REWARD)
    failing = server.ok("score_rubric", rubric=rubric, outcome={**OUTCOME, "correctness": 0.0}, pass_threshold=0.6)
    assert failing["reward"] == pytest.approx(0.25)
    assert failing["passed"] is False


def test_score_name_variations_gives_the_validator_s_golden_score(server: Session) -> None:
    fixes = json.loads((REPO / "tests" / "names" / "data" / "golden_fixes.json").read_text(encoding="utf-8"))
    # the validator's own (final, base) for this name, these variations and labels, under PYTHONHASHSEED 0
    name, variations, phonetic, orthographic, count, rule_based, seed, (final, base) = fixes["quality"][1]
    assert (name, seed) == ("kathryn", 0)
    labels = {
        "variation_count": count,
        "phonetic_similarity": phonetic,
        "orthographic_similarity": orthographic,
        "rule_based": rule_based,
    }
    scored = server.ok("score_name_variations", name=name, variations=variations, labels=labels, hash_seed=seed)
    assert (scored["final"].hex(), scored["base"].hex()) == (final, base)
    assert (scored["compat"], scored["hash_seed"], scored["name"], scored["variations"]) == ("miid", 0, name, 10)
    assert "metrics" not in scored
    assert (
        "rule_compliance"
        in server.ok("score_name_variations", name=name, variations=variations, labels=labels, metrics=True)["metrics"]
    )


def test_list_rules_of_the_rulebook(server: Session) -> None:
    listed = server.ok("list_rules")
    assert listed["tenant"] is None
    assert listed["count"] == len(_rulebook_ids())
    assert [rule["id"] for rule in listed["rules"]] == sorted(_rulebook_ids())
    fraud = next(rule for rule in listed["rules"] if rule["id"] == "fraud-suspected")
    assert (fraud["priority"], fraud["scope"], fraud["enabled"], fraud["tags"]) == (
        100,
        "global",
        True,
        ["fraud", "urgent"],
    )


def _error(result: Any) -> tuple[list[str], dict[str, Any]]:
    assert result.is_error
    return text(result).splitlines(), result.structured_content


def test_a_bad_call_is_a_tool_error_with_what_where_hint_and_the_session_goes_on(server: Session) -> None:
    rubric = json.loads((EXAMPLES / "rubrics" / "code_review.json").read_text(encoding="utf-8"))
    rubric["criteria"][1]["weight"] = -1
    lines, error = _error(server.call("score_rubric", rubric=rubric, outcome=OUTCOME))
    assert lines[0].startswith("RubricError: ")
    assert lines[1:] == ["where: rubric:criteria[1].weight", "hint: see `norma rubric schema` for the format"]
    assert (error["error"], error["source"], error["location"]) == ("RubricError", "rubric", "criteria[1].weight")
    # the same session answers the next call
    assert server.ok("score_rubric", rubric="examples/rubrics/code_review.json", outcome=OUTCOME)["reward"] == (
        pytest.approx(REWARD)
    )


@pytest.mark.parametrize(
    ("tool", "arguments", "first", "where", "hint"),
    [
        (
            "score_rubric",
            {"rubric": "examples/rubrics/nowhere.json", "outcome": OUTCOME},
            "RubricFileMissingError: ",
            "where: examples/rubrics/nowhere.json",
            None,
        ),
        (
            "score_rubric",
            {"rubric": {"criteria": [{"id": "a", "weight": 1}]}},
            "RubricError: give exactly one of events and outcome",
            "where: events",
            None,
        ),
        (
            "list_rules",
            {"tenant": "acme"},
            "ConfigError: this server serves no rule store, so no tenant 'acme'",
            "where: tenant",
            "hint: leave out the tenant to use the served rulebook, or start the server with --store URL",
        ),
        (
            "audit_output",
            {"input": "hola", "output": "adiós", "active_documents": ["Nope.md"], "embeddings": False},
            "InvalidInputError: active document 'Nope.md' is not among the loaded documents",
            "where: active_documents",
            "hint: add the file to the documents folder (--docs) or remove it from active_documents",
        ),
        (
            "score_name_variations",
            {
                "name": "Ana",
                "variations": ["Anna"],
                "labels": {"variation_count": 1, "phonetic_similarity": {"Huge": 1.0}},
            },
            "InvalidInputError: labels.phonetic_similarity has an unknown similarity level 'Huge'",
            "where: labels.phonetic_similarity.Huge",
            "hint: levels are Light, Medium and Far",
        ),
    ],
)
def test_norma_errors_come_back_as_tool_errors(
    server: Session, tool: str, arguments: dict[str, Any], first: str, where: str | None, hint: str | None
) -> None:
    lines, error = _error(server.call(tool, **arguments))
    assert lines[0].startswith(first), lines
    assert error["error"] == first.split(":")[0]
    if where is not None:
        assert where in lines, lines
    if hint is not None:
        assert hint in lines, lines
    assert all(line.startswith(("where: ", "hint: ")) for line in lines[1:]), lines


def test_arguments_that_break_the_input_schema_are_refused_by_the_sdk(server: Session) -> None:
    result = server.call("match_rules", message="hello", top_k=0)
    assert result.is_error
    assert "top_k" in text(result)
    assert "greater than or equal to 1" in text(result)
    assert server.call("no_such_tool").is_error
    assert server.ok("list_rules")["count"] == len(_rulebook_ids())


def test_the_shared_output_schemas_are_the_library_models(server: Session) -> None:
    from norma.matching import MatchedRuleData
    from norma.names import NameScore
    from norma.rubrics import RubricScore

    tools = server.tools()
    for tool, model in (("score_rubric", RubricScore), ("score_name_variations", NameScore)):
        schema = tools[tool].output_schema
        assert schema is not None
        assert schema["properties"] == model.model_json_schema(mode="serialization")["properties"], tool
    match_schema = tools["match_rules"].output_schema
    assert match_schema is not None
    library = MatchedRuleData.model_json_schema(mode="serialization")
    assert match_schema["$defs"]["MatchedRuleData"]["properties"] == library["properties"]
