"""The check models on rules: defaults, the round trip through to_dict and a rulebook, and every bad check refused
when the rule is built, naming the rule, the check's index and the field."""

from __future__ import annotations

from typing import Any

import pytest

from norma.errors import InvalidInputError
from norma.rules import (
    ContainsCheck,
    JsonCheck,
    JudgeCheck,
    LengthCheck,
    NoPiiCheck,
    RegexCheck,
    Rule,
    RulebookError,
    Severity,
    When,
    dump_rulebook,
    load_rulebook,
)

ONE_OF_EACH: list[dict[str, Any]] = [
    {"id": "mentions-policy", "kind": "contains", "terms": ["refund policy", "remboursement"], "mode": "all"},
    {"id": "no-password", "kind": "not_contains", "terms": ["password"], "severity": "warning", "weight": 2.5},
    {"id": "has-reference", "kind": "regex", "pattern": r"(?i)ref-[0-9]{4}"},
    {"id": "no-url", "kind": "not_regex", "pattern": r"https?://\S+", "severity": "info"},
    {"id": "short", "kind": "max_chars", "limit": 500},
    {"id": "brief", "kind": "max_words", "limit": 80},
    {"id": "complete", "kind": "min_words", "limit": 5},
    {"id": "is-json", "kind": "json", "schema": {"type": "object", "required": ["status"]}},
    {"id": "no-card", "kind": "no_pii", "kinds": ["card", "iban"], "when": "always"},
    {"id": "polite", "kind": "judge", "criterion": "the answer is polite", "votes": 3},
]


def _rule(checks: list[dict[str, Any]], action_text: str = "explain the refund policy") -> Rule:
    return Rule(id="refund", condition_text="customer asks for a refund", action_text=action_text, checks=checks)


def test_each_kind_is_its_own_model_with_documented_defaults() -> None:
    rule = _rule(ONE_OF_EACH)
    types = [type(c) for c in rule.checks]
    assert types == [
        ContainsCheck,
        ContainsCheck,
        RegexCheck,
        RegexCheck,
        LengthCheck,
        LengthCheck,
        LengthCheck,
        JsonCheck,
        NoPiiCheck,
        JudgeCheck,
    ]
    short = rule.checks[4]
    assert (short.severity, short.weight, short.when, short.applies) == (Severity.ERROR, 1.0, None, When.MATCHED)
    assert rule.checks[8].when is When.ALWAYS
    # unset, a requirement applies when its rule governs the turn, a prohibition whenever its rule matched (#47)
    applies = {c.kind: c.applies for c in rule.checks if c.when is None}
    assert applies == {
        "contains": When.ENFORCED, "not_contains": When.MATCHED, "regex": When.ENFORCED, "not_regex": When.MATCHED,
        "max_chars": When.MATCHED, "max_words": When.MATCHED, "min_words": When.ENFORCED, "json": When.ENFORCED,
        "judge": When.ENFORCED,
    }  # fmt: skip
    assert NoPiiCheck(id="x", kind="no_pii").kinds == ("card", "iban", "email", "phone")
    assert ContainsCheck(id="x", kind="contains", terms=("a",)).mode == "any"
    judge = JudgeCheck(id="x", kind="judge")
    assert (judge.criterion, judge.votes) == (None, 1)
    assert JsonCheck(id="x", kind="json").json_schema is None


def test_checks_round_trip_through_to_dict_and_a_rulebook() -> None:
    rule = _rule(ONE_OF_EACH)
    data = rule.to_dict()
    assert data["checks"][7] == {
        "id": "is-json",
        "kind": "json",
        "severity": "error",
        "weight": 1.0,
        "when": None,
        "schema": {"type": "object", "required": ["status"]},
    }
    assert Rule.from_mapping(data) == rule
    for fmt in ("yaml", "json"):
        book = load_rulebook_text(dump_rulebook([rule], fmt=fmt), fmt)  # type: ignore[arg-type]
        assert list(book) == [rule], fmt


def load_rulebook_text(text: str, fmt: str) -> list[Rule]:
    from norma._safety import load_json, load_yaml

    return list(load_rulebook(load_json(text) if fmt == "json" else load_yaml(text)).rules)


def test_a_rule_without_checks_dumps_as_before() -> None:
    rule = Rule(id="plain", condition_text="customer says hello")
    assert "checks" not in dump_rulebook([rule])
    assert rule.to_dict()["checks"] == []


def _refused(check: dict[str, Any], *, action_text: str = "explain the refund policy") -> InvalidInputError:
    with pytest.raises(InvalidInputError) as caught:
        _rule([{"id": "fine", "kind": "max_chars", "limit": 10}, check], action_text=action_text)
    return caught.value


@pytest.mark.parametrize(
    ("check", "location", "message"),
    [
        (
            {"id": "bad", "kind": "regex", "pattern": "(unclosed"},
            "checks[1].pattern",
            "regular expression '(unclosed' is not accepted: missing ): (unclosed (norma runs patterns with RE2 "
            "(linear time): back-references and look-arounds are not supported)",
        ),
        (
            {"id": "bad", "kind": "not_regex", "pattern": r"(a)\1"},
            "checks[1].pattern",
            r"regular expression '(a)\\1' is not accepted: invalid escape sequence: \1 (norma runs patterns with RE2 "
            "(linear time): back-references and look-arounds are not supported)",
        ),
        (
            {"id": "bad", "kind": "json", "schema": {"type": "objekt"}},
            "checks[1].schema",
            "is not a valid JSON Schema: at schema.type: 'objekt' is not valid under any of the given schemas",
        ),
        (
            {"id": "bad", "kind": "json", "schema": {"properties": {"a": {"$ref": "https://example.com/s.json"}}}},
            "checks[1].schema",
            "$ref 'https://example.com/s.json' is not local: only references inside the schema ('#/...') work",
        ),
        (
            {"id": "bad", "kind": "spellcheck"},
            "checks[1].kind",
            "unknown kind 'spellcheck'; a check's kind is one of: contains, not_contains, regex, not_regex, "
            "max_chars, max_words, min_words, json, no_pii, judge",
        ),
        (
            {"id": "bad", "terms": ["x"]},
            "checks[1].kind",
            "no kind; a check's kind is one of: contains, not_contains, regex, not_regex, max_chars, max_words, "
            "min_words, json, no_pii, judge",
        ),
        ({"id": "fine", "kind": "max_words", "limit": 3}, "checks[1].id", "duplicate of checks[0].id ('fine')"),
        (
            {"id": "bad", "kind": "max_chars", "limit": 3, "weight": -1},
            "checks[1].weight",
            "Input should be greater than 0",
        ),
        (
            {"id": "bad", "kind": "max_chars", "limit": 3, "weight": 0},
            "checks[1].weight",
            "Input should be greater than 0",
        ),
        (
            {"id": "bad", "kind": "max_chars", "limit": 3, "weight": float("inf")},
            "checks[1].weight",
            "Input should be a finite number",
        ),
        (
            {"id": "bad", "kind": "max_chars", "limit": -1},
            "checks[1].limit",
            "Input should be greater than or equal to 0",
        ),
        (
            {"id": "bad", "kind": "min_words", "limit": 0},
            "checks[1].limit",
            "must be at least 1 for min_words (0 would always pass)",
        ),
        (
            {"id": "bad", "kind": "contains", "terms": []},
            "checks[1].terms",
            "Tuple should have at least 1 item after validation, not 0",
        ),
        (
            {"id": "bad", "kind": "contains", "terms": "password"},
            "checks[1].terms",
            "must be a list of terms, not one string",
        ),
        (
            {"id": "bad", "kind": "contains", "terms": ["ok", " pin"]},
            "checks[1].terms",
            "term 1 has leading or trailing spaces",
        ),
        ({"id": "bad", "kind": "contains", "terms": ["--"]}, "checks[1].terms", "term 0 ('--') has no letter or digit"),
        (
            {"id": "bad", "kind": "contains", "terms": ["x"], "mode": "most"},
            "checks[1].mode",
            "Input should be 'any' or 'all'",
        ),
        ({"id": "bad", "kind": "no_pii", "kinds": ["card", "card"]}, "checks[1].kinds", "lists a kind twice"),
        (
            {"id": "bad", "kind": "no_pii", "kinds": ["card", "ssn"]},
            "checks[1].kinds[1]",
            "Input should be 'card', 'iban', 'email' or 'phone'",
        ),
        ({"id": "bad", "kind": "judge", "votes": 2}, "checks[1].votes", "must be odd, so that a majority decides"),
        (
            {"id": "bad", "kind": "judge", "criterion": "  "},
            "checks[1].criterion",
            "must not be blank (leave it out to judge by the rule's action_text)",
        ),
        (
            {"id": "bad", "kind": "max_chars", "limit": 3, "severity": "fatal"},
            "checks[1].severity",
            "Input should be 'error', 'warning' or 'info'",
        ),
        (
            {"id": "bad", "kind": "max_chars", "limit": 3, "when": "never"},
            "checks[1].when",
            "Input should be 'enforced', 'matched' or 'always'",
        ),
        (
            {"id": "bad", "kind": "max_chars", "limit": 3, "pattern": "x"},
            "checks[1].pattern",
            "Extra inputs are not permitted",
        ),
        ({"id": " bad", "kind": "max_chars", "limit": 3}, "checks[1].id", "must have no leading or trailing spaces"),
    ],
)
def test_a_bad_check_is_refused_naming_rule_index_and_field(check: dict[str, Any], location: str, message: str) -> None:
    error = _refused(check)
    assert error.location == location
    assert error.message == f"invalid rule 'refund': {location}: {message}"


def test_a_judge_needs_a_criterion_when_the_rule_has_no_action() -> None:
    error = _refused({"id": "judged", "kind": "judge"}, action_text="")
    assert error.location == "checks[1].criterion"
    assert error.message == (
        "invalid rule 'refund': checks[1].criterion: a judge check needs a criterion when the rule has no action_text"
    )
    assert _rule([{"id": "judged", "kind": "judge", "criterion": "is polite"}], action_text="").checks


def test_a_rulebook_reports_bad_checks_with_rule_index_and_field_path() -> None:
    data = {
        "rules": [
            {"id": "ok", "condition_text": "hello", "checks": [{"id": "c", "kind": "max_words", "limit": 5}]},
            {"id": "greet", "condition_text": "hello"},
            {"id": "refund", "condition_text": "refund", "checks": [{"id": "a", "kind": "max_chars", "limit": 9}]},
            {
                "id": "cards",
                "condition_text": "card",
                "checks": [
                    {"id": "a", "kind": "no_pii"},
                    {"id": "b", "kind": "regex", "pattern": "(?<=x)y"},
                    {"id": "c", "kind": "json", "schema": {"minLength": "two"}},
                ],
            },
        ]
    }
    with pytest.raises(RulebookError) as caught:
        load_rulebook(data)
    assert [str(p) for p in caught.value.problems] == [
        "rules[3] (cards).checks[1].pattern: regular expression '(?<=x)y' is not accepted: invalid perl operator: "
        "(?<= (norma runs patterns with RE2 (linear time): back-references and look-arounds are not supported)",
        "rules[3] (cards).checks[2].schema: is not a valid JSON Schema: at schema.minLength: 'two' is not of type "
        "'integer'",
    ]
    assert [(p.index, p.rule_id, p.field) for p in caught.value.problems] == [
        (3, "cards", "checks[1].pattern"),
        (3, "cards", "checks[2].schema"),
    ]
