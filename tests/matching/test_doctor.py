"""diagnose_rulebook on a rulebook whose problems are known by construction (tests/matching/data/known_rulebook.yaml):
refund-request repeats refund's text, card-blocked's two examples are about passwords (password-reset's topic) and its
condition about a card, mortgage-rates has examples about a cat, opening-hours one example, refund-request none;
loyalty-shop and loyalty-app are the same rule in two scenarios (never candidates together), legacy-refund is disabled.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from norma.errors import InvalidInputError
from norma.matching import Diagnosis, Rule, RuleMatcher, diagnose_rulebook, load_rules

RULEBOOK = Path(__file__).parent / "data" / "known_rulebook.yaml"
pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def matcher() -> RuleMatcher:
    return RuleMatcher(load_rules(RULEBOOK))


def test_every_known_problem_is_found_in_order(matcher: RuleMatcher) -> None:
    diagnosis = diagnose_rulebook(matcher)
    assert [(f.severity, f.kind, f.rule_ids, f.example) for f in diagnosis.findings] == [
        ("error", "near_duplicate", ("refund", "refund-request"), None),
        ("error", "example_closer_to_other_rule", ("card-blocked", "password-reset"),
         "my login password doesn't work anymore"),
        ("error", "example_closer_to_other_rule", ("card-blocked", "password-reset"),
         "I need a new password for the app"),
        ("warning", "condition_unrelated", ("card-blocked",), None),
        ("warning", "condition_unrelated", ("mortgage-rates",), None),
        ("warning", "no_examples", ("refund-request",), None),
        ("warning", "one_example", ("opening-hours",), None),
    ]  # fmt: skip
    assert (diagnosis.rules, diagnosis.errors, diagnosis.warnings) == (9, 3, 4)  # legacy-refund is disabled
    assert diagnosis.counts() == {
        "near_duplicate": 1, "example_closer_to_other_rule": 2, "condition_unrelated": 2, "no_examples": 1,
        "one_example": 1, "encoder_stale": 0, "requirement_on_neighbours": 0,
    }  # fmt: skip


def test_the_numbers_behind_each_finding(matcher: RuleMatcher) -> None:
    found = diagnose_rulebook(matcher).findings
    duplicate, closer, _, cat, none, one = found[0], found[1], found[2], found[4], found[5], found[6]
    assert duplicate.numbers["text_cosine"] == pytest.approx(1.0, abs=1e-5)  # the same text
    assert duplicate.numbers["centroid_cosine"] < duplicate.numbers["text_cosine"]
    assert duplicate.message.startswith("refund and refund-request are near duplicates (text cosine 1.000")
    assert closer.numbers["other_cosine"] > closer.numbers["own_cosine"]
    assert (closer.numbers["example"], closer.numbers["examples_closer_to_other"]) == (0.0, 2.0)
    assert closer.message.startswith("example 0 of card-blocked is closer to password-reset (")
    assert cat.numbers["cosine"] < 0.15
    assert cat.numbers["shared_words"] == 0.0
    assert (none.numbers, one.numbers) == ({"examples": 0.0}, {"examples": 1.0})
    assert none.message == "refund-request has no example: add a few messages users write"


def test_rules_of_different_scenarios_are_never_compared(matcher: RuleMatcher) -> None:
    """At bound -1 every pair that can meet is a near duplicate: the 9 enabled rules make 36 pairs, less the two
    loyalty rules of different scenarios."""
    pairs = {f.rule_ids for f in diagnose_rulebook(matcher, near_duplicate=-1.0).findings if f.kind == "near_duplicate"}
    assert len(pairs) == 35
    assert ("loyalty-app", "loyalty-shop") not in pairs
    assert all("legacy-refund" not in pair for pair in pairs)


def test_one_misplaced_example_is_a_warning_and_a_clean_rulebook_has_no_error(matcher: RuleMatcher) -> None:
    rules = [
        Rule(id="refund", condition_text="customer asks for a refund",
             examples=["I want my money back", "please refund me", "where is my parcel"]),
        Rule(id="parcel", condition_text="the parcel has not arrived",
             examples=["my package is late", "the courier never came"]),
    ]  # fmt: skip
    diagnosis = diagnose_rulebook(RuleMatcher(rules, embedder=matcher.embedder))
    assert [(f.severity, f.kind, f.rule_ids, f.example) for f in diagnosis.findings] == [
        ("warning", "example_closer_to_other_rule", ("refund", "parcel"), "where is my parcel"),
    ]
    assert diagnosis.errors == 0


def test_deterministic_json_and_empty(matcher: RuleMatcher) -> None:
    first = diagnose_rulebook(matcher).to_dict()
    assert first == diagnose_rulebook(matcher).to_dict()
    assert sorted(first) == [
        "counts", "encoder", "errors", "findings", "near_duplicate", "rules", "vector_scan", "warnings"
    ]  # fmt: skip
    assert sorted(first["findings"][0]) == ["example", "kind", "message", "numbers", "rule_ids", "severity"]
    empty = Diagnosis(0, (), 0.95, "exact float32 scan: 0 vectors, below 2,048", matcher.embedder.encoder)
    assert diagnose_rulebook(RuleMatcher([], embedder=matcher.embedder)) == empty


def test_bad_arguments_are_typed_errors(matcher: RuleMatcher) -> None:
    with pytest.raises(InvalidInputError, match=r"near_duplicate must be a cosine in \[-1, 1\]"):
        diagnose_rulebook(matcher, near_duplicate=1.5)
    with pytest.raises(InvalidInputError, match="matcher must be a RuleMatcher"):
        diagnose_rulebook([])  # type: ignore[arg-type]


def test_a_requirement_with_when_matched_is_a_warning(matcher: RuleMatcher) -> None:
    # issue #47: a requirement that reaches neighbours fails good answers to other rules' messages; a store written
    # before it holds when: matched on every check
    rules = [
        Rule(
            id="fraud",
            condition_text="customer reports a payment they did not make",
            checks=[
                {"id": "offers-freeze", "kind": "contains", "terms": ["freeze"], "when": "matched"},
                {"id": "no-blame", "kind": "not_contains", "terms": ["your fault"], "when": "matched"},
                {"id": "team", "kind": "regex", "pattern": "fraud team"},
                {"id": "card", "kind": "no_pii", "when": "always"},
            ],
        )
    ]
    found = diagnose_rulebook(RuleMatcher(rules, embedder=matcher.embedder)).findings
    flagged = [f for f in found if f.kind == "requirement_on_neighbours"]
    assert [(f.severity, f.rule_ids) for f in flagged] == [("warning", ("fraud",))]
    assert flagged[0].message.startswith(
        "fraud: check 'offers-freeze' (contains) is a requirement with when: matched, so it also applies where the "
        "rule matched only as a neighbour"
    )
