"""Which matches govern the turn (issue #47): the decision on hand-built cases with the real model, the ``skip`` of
a neighbour's requirements with its reason, the per-check override, and the decision's arithmetic by hand."""

from __future__ import annotations

import pytest

from norma.checks import CheckStatus
from norma.matching import EnforcementReason, RuleMatcher
from norma.matching._enforce import enforcements
from norma.rules import Rule
from norma.turns import TurnChecker, TurnVerdict

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


@pytest.fixture(scope="module")
def checker() -> TurnChecker:
    return TurnChecker(RuleMatcher(RULES))


def _decisions(checker: TurnChecker, message: str) -> dict[str, str]:
    return {m.rule.id: m.enforcement.reason.value for m in checker.matcher.match(message)}


def test_a_clear_single_intent_enforces_its_rule_and_leaves_the_neighbour(checker: TurnChecker) -> None:
    assert _decisions(checker, "please block my card") == {"block-card": "top", "replace-card": "neighbour"}
    report = checker.check("please block my card", "Done: blockword. Your card is frozen.")
    assert report.verdict is TurnVerdict.PASS
    neighbour = next(r for r in report.rules if r.rule_id == "replace-card")
    assert (neighbour.matched, neighbour.enforced, neighbour.verdict) == (True, False, CheckStatus.SKIP)
    (skipped,) = neighbour.checks
    assert (skipped.status, skipped.enforced) == (CheckStatus.SKIP, False)
    assert skipped.message.startswith("the rule matched only as a neighbour (similarity 0.")
    assert skipped.message.endswith("): a requirement applies when the rule governs the turn")
    assert (neighbour.weight, neighbour.required, neighbour.score) == (0.0, False, None)  # not in the reward
    assert report.reward == 1.0
    assert [(m.rule_id, m.enforced, m.enforcement["reason"]) for m in report.matches] == [
        ("block-card", True, "top"),
        ("replace-card", False, "neighbour"),
    ]
    bad = checker.check("please block my card", "Please visit a branch.")
    assert bad.verdict is TurnVerdict.FAIL
    assert [(f.rule_id, f.check_id) for f in bad.failures] == [("block-card", "says-token")]


def test_two_stated_intents_are_both_enforced(checker: TurnChecker) -> None:
    message = "freeze my card and send me a new one"
    assert _decisions(checker, message) == {"replace-card": "top", "block-card": "as_close_as_top"}
    assert checker.check(message, "blockword and replaceword: both done.").verdict is TurnVerdict.PASS
    one = checker.check(message, "replaceword: a new card is on its way.")
    assert one.verdict is TurnVerdict.FAIL
    assert [(f.rule_id, f.check_id) for f in one.failures] == [("block-card", "says-token")]


def test_a_near_neighbour_does_not_fail_a_good_answer(checker: TurnChecker) -> None:
    message = "I need a new card"
    assert _decisions(checker, message) == {"replace-card": "top", "block-card": "neighbour"}
    assert checker.check(message, "replaceword: ordered.").verdict is TurnVerdict.PASS


def test_an_off_topic_message_enforces_nothing_and_fails_nothing(checker: TurnChecker) -> None:
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
    checker = TurnChecker(RuleMatcher(rules))
    message = "please block my card, is there a fee for that"
    assert _decisions(checker, message) == {"block-card": "top", "no-fees": "neighbour", "replace-card": "neighbour"}
    report = checker.check(message, "blockword: frozen, and there is no fee.")
    # `when: matched` on a requirement: the neighbour's requirement applies, and fails the good answer
    assert [(f.rule_id, f.check_id) for f in report.failures] == [("replace-card", "says-token")]
    # `when: enforced` on a prohibition: as a neighbour's it is a skip, though the output holds the word
    (fees,) = [r for r in report.rules if r.rule_id == "no-fees"]
    assert [(c.status, c.enforced) for c in fees.checks] == [(CheckStatus.SKIP, False)]
    unmatched = TurnChecker(RuleMatcher(rules[2:])).check(message, "blockword")  # no-fees is the top match now
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
    checker = TurnChecker(RuleMatcher(rules))
    assert _decisions(checker, "please block my card") == {"block-card": "top", "replace-card": "neighbour"}
    report = checker.check("please block my card", "blockword. A new card has a fee of 5 pounds.")
    assert [(f.rule_id, f.check_id) for f in report.failures] == [("replace-card", "no-fee-talk")]


def test_the_decision_by_hand() -> None:
    # matcher order: [a, b, c, d]; the top is the highest hybrid score (a); b is 0.005 below a's similarity, c 0.1
    # below, d above it
    got = enforcements([0.70, 0.695, 0.60, 0.75], [0.9, 0.8, 0.7, 0.6])
    assert [(e.enforced, e.reason) for e in got] == [
        (True, EnforcementReason.TOP),
        (True, EnforcementReason.AS_CLOSE_AS_TOP),
        (False, EnforcementReason.NEIGHBOUR),
        (True, EnforcementReason.AS_CLOSE_AS_TOP),
    ]
    assert [e.detail for e in got] == [
        "the most relevant match",
        "similarity 0.695, within 0.01 of the top match's 0.700",
        "similarity 0.600, 0.100 below the top match's 0.700",
        "similarity 0.750, at or above the top match's 0.700",
    ]
    assert got[2].to_dict() == {
        "enforced": False,
        "reason": "neighbour",
        "detail": "similarity 0.600, 0.100 below the top match's 0.700",
    }
    # the top is the first of equal hybrid scores; exactly 0.01 below is enforced, 0.011 is not
    assert [e.reason.value for e in enforcements([0.5, 0.6, 0.59, 0.589], [0.3, 0.3, 0.2, 0.1])] == [
        "top", "as_close_as_top", "as_close_as_top", "as_close_as_top"
    ]  # fmt: skip
    assert [e.enforced for e in enforcements([0.6, 0.59, 0.589], [0.3, 0.2, 0.1])] == [True, True, False]
    assert enforcements([], []) == []


def test_the_decision_travels_in_json(checker: TurnChecker) -> None:
    result = checker.matcher.match("please block my card")
    assert [m.to_dict()["enforcement"]["reason"] for m in result] == ["top", "neighbour"]
    assert list(result[0].to_dict())[:5] == ["rule_id", "similarity_score", "bm25_score", "final_score", "enforcement"]
    data = checker.check("please block my card", "blockword").to_dict()
    assert [(m["rule_id"], m["enforced"], m["enforcement"]["reason"]) for m in data["matches"]] == [
        ("block-card", True, "top"),
        ("replace-card", False, "neighbour"),
    ]
    assert [c["enforced"] for rule in data["rules"] for c in rule["checks"]] == [True, False]
