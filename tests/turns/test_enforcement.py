"""Which matches govern the turn (issues #47, #56): the decision on hand-built cases with the real model, the ``skip``
of a neighbour's requirements with its reason, the per-check override, and the decision's arithmetic by hand.

The default gate returns the rules that govern the message, so a neighbour (matched, not governing) exists only
under a similarity threshold the user sets (``NEIGHBOURS``): most tests here set one to show what a neighbour does."""

from __future__ import annotations

import math

import pytest

from norma.checks import CheckStatus
from norma.matching import EnforcementReason, MatchConfig, RuleMatcher
from norma.matching._confidence import COEFFICIENTS, RulebookStats, confidences
from norma.matching._enforce import enforcement
from norma.rules import Rule
from norma.turns import Norma, TurnVerdict
from norma.turns import open as open_rules

pytestmark = pytest.mark.model


def _rule(rule_id: str, condition: str, examples: list[str], token: str, **check: object) -> Rule:
    return Rule(
        id=rule_id,
        condition_text=condition,
        examples=examples,
        checks=[{"id": "says-token", "kind": "contains", "terms": [token], **check}],
    )


RULES = [
    _rule("block-card", "customer wants their card frozen or blocked",
          ["please freeze my card", "block my debit card now", "can you put a hold on my card",
           "stop my card from working"], "blockword"),
    _rule("replace-card", "customer wants a new or replacement card",
          ["I need a new card", "send me a replacement card", "my card is damaged, can I get another one",
           "order a new debit card"], "replaceword"),
    _rule("unknown-payment", "customer reports a payment they did not make",
          ["there is a payment I don't recognise", "someone took money from my account",
           "I never made this transaction"], "paymentword"),
    _rule("opening-hours", "customer asks when branches are open",
          ["what time does the branch open", "are you open on sunday", "branch opening hours"], "hoursword"),
    _rule("hardship", "customer cannot afford to pay",
          ["I can't pay my loan this month", "I'm struggling with money", "I lost my job and can't pay"],
          "hardshipword"),
]  # fmt: skip


NEIGHBOURS = MatchConfig(threshold=0.5)
"""A similarity threshold: the gate alone, so rules under the confidence that governs pass it as neighbours."""


@pytest.fixture(scope="module")
def checker() -> Norma:
    return open_rules(RuleMatcher(RULES, NEIGHBOURS), judge=None)


def test_the_default_gate_returns_the_rules_that_govern() -> None:
    default = open_rules(RuleMatcher(RULES), judge=None)
    assert _decisions(default, "please block my card") == {"block-card": "governs"}
    # a second intent stated less strongly than the first is not returned at all (multi-label: the weak side)
    assert _decisions(default, "freeze my card and send me a new one") == {"replace-card": "governs"}
    report = default.check("please block my card", "Done: blockword. Your card is frozen.")
    assert (report.verdict, [r.rule_id for r in report.rules]) == (TurnVerdict.PASS, ["block-card"])


def _decisions(checker: Norma, message: str) -> dict[str, str]:
    return {m.rule.id: m.enforcement.reason.value for m in checker.match(message)}


def test_a_clear_single_intent_enforces_its_rule_and_leaves_the_neighbour(checker: Norma) -> None:
    assert _decisions(checker, "please block my card") == {"block-card": "governs", "replace-card": "neighbour"}
    report = checker.check("please block my card", "Done: blockword. Your card is frozen.")
    assert report.verdict is TurnVerdict.PASS
    neighbour = next(r for r in report.rules if r.rule_id == "replace-card")
    assert (neighbour.matched, neighbour.enforced, neighbour.verdict) == (True, False, CheckStatus.SKIP)
    (skipped,) = neighbour.checks
    assert (skipped.status, skipped.enforced) == (CheckStatus.SKIP, False)
    assert skipped.message.startswith("the rule matched only as a neighbour (confidence 0.")
    assert skipped.message.endswith(
        " < 0.7 that it governs the message): a requirement applies when the rule governs the turn"
    )
    assert (neighbour.weight, neighbour.required, neighbour.score) == (0.0, False, None)  # not in the reward
    assert report.reward == 1.0
    assert [(m.rule_id, m.enforced, m.enforcement["reason"]) for m in report.matches] == [
        ("block-card", True, "governs"),
        ("replace-card", False, "neighbour"),
    ]
    bad = checker.check("please block my card", "Please visit a branch.")
    assert bad.verdict is TurnVerdict.FAIL
    assert [(f.rule_id, f.check_id) for f in bad.failures] == [("block-card", "says-token")]


def test_two_rules_can_both_govern_a_message() -> None:
    # the confidence is per rule, not a share of one: two rules the message states as much both govern it
    twin = {"condition_text": "customer reports a stolen card", "examples": ["my card was stolen"]}
    rules = [
        Rule(id="card-stolen", **twin, checks=[{"id": "says-token", "kind": "contains", "terms": ["blockword"]}]),
        Rule(id="twin", **twin, checks=[{"id": "says-token", "kind": "contains", "terms": ["reportword"]}]),
    ]
    checker = open_rules(RuleMatcher(rules), judge=None)
    message = "my card was stolen"
    assert _decisions(checker, message) == {"twin": "governs", "card-stolen": "governs"}
    assert sum(m.confidence for m in checker.match(message)) > 1
    assert checker.check(message, "blockword and reportword: both done.").verdict is TurnVerdict.PASS
    one = checker.check(message, "reportword: filed.")
    assert [(f.rule_id, f.check_id) for f in one.failures] == [("card-stolen", "says-token")]


def test_a_second_intent_stated_less_strongly_is_a_neighbour(checker: Norma) -> None:
    # the shipped confidence lets a second intent govern only when the message states it as strongly as the first
    # (docs/design/040-matching.md: multi-label messages are its weak side)
    message = "freeze my card and send me a new one"
    assert _decisions(checker, message) == {"replace-card": "governs", "block-card": "neighbour"}
    assert checker.check(message, "replaceword: a new card is on its way.").verdict is TurnVerdict.PASS


def test_a_near_neighbour_does_not_fail_a_good_answer(checker: Norma) -> None:
    message = "I need a new card"
    assert _decisions(checker, message) == {"replace-card": "governs", "block-card": "neighbour"}
    assert checker.check(message, "replaceword: ordered.").verdict is TurnVerdict.PASS


def test_an_off_topic_message_enforces_nothing_and_fails_nothing(checker: Norma) -> None:
    message = "what is the weather like today"
    assert _decisions(checker, message) == {}
    report = checker.check(message, "Sunny, I think.")
    assert (report.verdict, report.rules, report.reward) == (TurnVerdict.SKIP, (), None)


def test_the_author_overrides_per_check_with_when() -> None:
    rules = [
        _rule("block-card", RULES[0].condition_text, list(RULES[0].examples), "blockword"),
        _rule("replace-card", RULES[1].condition_text, list(RULES[1].examples), "replaceword", when="matched"),
        Rule(
            id="no-fees",
            condition_text="customer asks about card fees",
            examples=["how much does a new card cost", "is there a fee for a replacement card"],
            checks=[{"id": "no-promise", "kind": "not_contains", "terms": ["blockword"], "when": "enforced"}],
        ),
    ]
    checker = open_rules(RuleMatcher(rules, NEIGHBOURS), judge=None)
    message = "please block my card, is there a fee for that"
    assert _decisions(checker, message) == {
        "block-card": "governs",
        "no-fees": "neighbour",
        "replace-card": "neighbour",
    }
    report = checker.check(message, "blockword: frozen, and there is no fee.")
    # `when: matched` on a requirement: the neighbour's requirement applies, and fails the good answer
    assert [(f.rule_id, f.check_id) for f in report.failures] == [("replace-card", "says-token")]
    # `when: enforced` on a prohibition: as a neighbour's it is a skip, though the output holds the word
    (fees,) = [r for r in report.rules if r.rule_id == "no-fees"]
    assert [(c.status, c.enforced) for c in fees.checks] == [(CheckStatus.SKIP, False)]
    unmatched = open_rules(RuleMatcher(rules[2:]), judge=None).check(message, "blockword")  # no-fees governs alone
    assert [(f.rule_id, f.check_id) for f in unmatched.failures] == [("no-fees", "no-promise")]


def test_a_prohibition_of_a_neighbour_applies_by_default() -> None:
    rules = [
        _rule("block-card", RULES[0].condition_text, list(RULES[0].examples), "blockword"),
        Rule(
            id="replace-card",
            condition_text=RULES[1].condition_text,
            examples=list(RULES[1].examples),
            checks=[{"id": "no-fee-talk", "kind": "not_contains", "terms": ["fee"]}],
        ),
    ]
    checker = open_rules(RuleMatcher(rules, NEIGHBOURS), judge=None)
    assert _decisions(checker, "please block my card") == {"block-card": "governs", "replace-card": "neighbour"}
    report = checker.check("please block my card", "blockword. A new card has a fee of 5 pounds.")
    assert [(f.rule_id, f.check_id) for f in report.failures] == [("replace-card", "no-fee-talk")]


def test_the_decision_by_hand() -> None:
    assert [(e.enforced, e.reason) for e in map(enforcement, [0.7, 0.6999, 1.0, 0.0])] == [
        (True, EnforcementReason.GOVERNS),
        (False, EnforcementReason.NEIGHBOUR),
        (True, EnforcementReason.GOVERNS),
        (False, EnforcementReason.NEIGHBOUR),
    ]
    assert enforcement(0.34).to_dict() == {
        "enforced": False,
        "reason": "neighbour",
        "confidence": 0.34,
        "detail": "confidence 0.34 < 0.7 that it governs the message",
    }
    assert enforcement(0.912).detail == "confidence 0.91 >= 0.7 that it governs the message"


def test_the_confidence_by_hand() -> None:
    # two scored rules; the features by hand: (sim - probe, vector - probe, bm25, gap to the other, top,
    # sim - inside, sim - outside, inside - outside), then the logistic of the shipped coefficients
    stats = RulebookStats(0.75, 30, {"a": 0.8, "b": 0.7}, {"a": 0.6, "b": 0.65})
    got = confidences(stats, ["a", "b"], [0.9, 0.7], [0.85, 0.72], [0.5, 0.0], top=1)
    rows = [
        (0.9 - 0.75, 0.85 - 0.75, 0.5, 0.9 - 0.7, 0.0, 0.9 - 0.8, 0.9 - 0.6, 0.8 - 0.6),
        (0.7 - 0.75, 0.72 - 0.75, 0.0, 0.7 - 0.9, 1.0, 0.7 - 0.7, 0.7 - 0.65, 0.7 - 0.65),
    ]
    for value, row in zip(got, rows, strict=True):
        logit = sum(w * x for w, x in zip(COEFFICIENTS, row, strict=False)) + COEFFICIENTS[-1]
        assert value == pytest.approx(1 / (1 + math.exp(-logit)), abs=1e-12)
    # one rule alone: its gap is its similarity; a rule the statistics do not know gets the prior
    (alone,) = confidences(RulebookStats(0.772, 0), ["x"], [0.6], [0.6], [0.0], top=0)
    row = (0.6 - 0.772, 0.6 - 0.772, 0.0, 0.6, 1.0, 0.6 - 0.762, 0.6 - 0.669, 0.762 - 0.669)
    logit = sum(w * x for w, x in zip(COEFFICIENTS, row, strict=False)) + COEFFICIENTS[-1]
    assert alone == pytest.approx(1 / (1 + math.exp(-logit)), abs=1e-12)
    assert len(confidences(stats, [], [], [], [], top=0)) == 0


def test_the_decision_travels_in_json(checker: Norma) -> None:
    result = checker.match("please block my card")
    assert [m.to_dict()["enforcement"]["reason"] for m in result] == ["governs", "neighbour"]
    assert [m.to_dict()["enforcement"]["confidence"] for m in result] == [m.confidence for m in result]
    assert result[0].confidence >= 0.7 > result[1].confidence
    assert list(result[0].to_dict())[:5] == ["rule_id", "similarity_score", "bm25_score", "final_score", "enforcement"]
    data = checker.check("please block my card", "blockword").to_dict()
    assert [(m["rule_id"], m["enforced"], m["enforcement"]["reason"]) for m in data["matches"]] == [
        ("block-card", True, "governs"),
        ("replace-card", False, "neighbour"),
    ]
    assert [c["enforced"] for rule in data["rules"] for c in rule["checks"]] == [True, False]
