"""evaluate_rulebook on a rulebook whose answers are known by construction (tests/matching/data/known_rulebook.yaml).

The gate is ``similarity >= 0.99`` (an explicit numeric threshold, so the default gate cannot move these values):
a message passes it only for a rule one of whose texts it repeats word for word. The labelled messages
(known_rulebook.labelled.jsonl) are built on that:

====  ==========================================  ========================  ==================  ==================
line  message                                     expected                  ranked first        at the gate
====  ==========================================  ========================  ==================  ==================
1     an example of refund, verbatim              refund                    refund              refund
2     an example of password-reset, verbatim      password-reset            password-reset      password-reset
3     an example of card-blocked, verbatim        password-reset            card-blocked        card-blocked
4     an example of delivery-late, verbatim       delivery-late             delivery-late       delivery-late
5     a paraphrase about a late parcel            delivery-late             delivery-late       nothing
6     a late parcel and opening hours             delivery-late, opening-h  one of the two      nothing
7     pizza                                       nothing                   (not counted)       nothing
8     an example of mortgage-rates, verbatim      nothing                   (not counted)       mortgage-rates
9     an example of loyalty-shop, in "shop"       loyalty-shop              loyalty-shop        loyalty-shop
====  ==========================================  ========================  ==================  ==================

Line 3 is card-blocked's example (similarity 1) labelled password-reset, which ranks second (its examples are about
passwords too): the one confusion, and MRR = (6 + 1/2) / 7.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from norma.errors import InvalidInputError
from norma.matching import (
    LabelledMessage,
    LabelledMessagesError,
    MatchConfig,
    RuleMatcher,
    evaluate_rulebook,
    load_labelled,
    load_rules,
)

DATA = Path(__file__).parent / "data"
RULEBOOK = DATA / "known_rulebook.yaml"
LABELLED = DATA / "known_rulebook.labelled.jsonl"
GATE = MatchConfig(threshold=0.99, threshold_on="similarity")
pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def matcher() -> RuleMatcher:
    return RuleMatcher(load_rules(RULEBOOK))


def test_the_ranking_figures(matcher: RuleMatcher) -> None:
    ev = evaluate_rulebook(matcher, load_labelled(LABELLED), config=GATE, k=(1, 2, 3))
    assert (ev.messages, ev.labelled, ev.expect_nothing) == (9, 7, 2)
    assert ev.k == (1, 2, 3)
    assert ev.accuracy_at_1 == pytest.approx(6 / 7)
    assert ev.recall_at_k == pytest.approx({1: 6 / 7, 2: 1.0, 3: 1.0})
    assert ev.mrr == pytest.approx((6 + 1 / 2) / 7)
    assert [c.to_dict() for c in ev.confusions] == [{"expected": "password-reset", "took": "card-blocked", "count": 1}]
    assert ev.outcomes[2].ranked[:2] == ("card-blocked", "password-reset")
    assert ev.outcomes[5].ranked[0] in {"delivery-late", "opening-hours"}


def test_the_figures_at_the_gate(matcher: RuleMatcher) -> None:
    ev = evaluate_rulebook(matcher, load_labelled(LABELLED), config=GATE)
    assert [o.matched for o in ev.outcomes] == [
        ("refund",), ("password-reset",), ("card-blocked",), ("delivery-late",), (), (), (), ("mortgage-rates",),
        ("loyalty-shop",),
    ]  # fmt: skip
    assert ev.gate == {
        "kind": "fixed",
        "score": "similarity",
        "threshold": 0.99,
        "terms": {"source": "config"},
        "description": "similarity >= 0.99 (threshold set in the config)",
    }
    assert ev.precision == pytest.approx(4 / 6)  # 6 messages got a match, 4 of them the right one first
    assert ev.recall == pytest.approx(4 / 7)
    assert ev.rejection == pytest.approx(1 / 2)  # pizza rejected, the cat example matched mortgage-rates
    ml = ev.multi_label
    assert (ml.true_positives, ml.false_positives, ml.false_negatives) == (4, 2, 4)
    assert (ml.precision, ml.recall, ml.f1) == pytest.approx((4 / 6, 4 / 8, 8 / 14))
    assert ev.never_matched == ("loyalty-app", "opening-hours", "refund-request")  # legacy-refund is disabled
    rules = {r.rule_id: (r.support, r.matched, r.correct, r.precision, r.recall) for r in ev.rules}
    assert rules == {
        "card-blocked": (0, 1, 0, 0.0, None),
        "delivery-late": (3, 1, 1, 1.0, pytest.approx(1 / 3)),
        "legacy-refund": (0, 0, 0, None, None),
        "loyalty-app": (0, 0, 0, None, None),
        "loyalty-shop": (1, 1, 1, 1.0, 1.0),
        "mortgage-rates": (0, 1, 0, 0.0, None),
        "opening-hours": (1, 0, 0, None, 0.0),
        "password-reset": (2, 1, 1, 1.0, 0.5),
        "refund": (1, 1, 1, 1.0, 1.0),
        "refund-request": (0, 0, 0, None, None),
    }
    assert [r.rule_id for r in ev.rules] == sorted(rules)


def test_the_default_gate_is_the_matchers_and_the_evaluation_is_deterministic() -> None:
    matcher = RuleMatcher(load_rules(RULEBOOK), GATE)
    labelled = load_labelled(LABELLED)
    first = evaluate_rulebook(matcher, labelled).to_dict()
    assert first == evaluate_rulebook(matcher, labelled).to_dict()
    assert first["gate"]["threshold"] == 0.99
    assert first["rejection"] == 0.5
    assert sorted(first) == [
        "accuracy_at_1", "confusions", "ece", "expect_nothing", "gate", "governs_precision", "governs_recall", "k",
        "labelled", "messages", "mrr", "multi_label", "never_matched", "outcomes", "precision", "recall",
        "recall_at_k", "rejection", "reliability", "rules",
    ]  # fmt: skip
    assert first["recall_at_k"] == {"1": pytest.approx(6 / 7), "3": 1.0, "5": 1.0}
    assert first["outcomes"][0] == {
        "line": 1, "message": "please refund my purchase", "expected": ["refund"],
        "ranked": ["refund", "refund-request", *first["outcomes"][0]["ranked"][2:]], "matched": ["refund"],
    }  # fmt: skip


def test_priorities_do_not_move_the_ranking(matcher: RuleMatcher) -> None:
    """Without a gate the priority term would put the top-priority rule first for every message: the ranking is by
    relevance, so a rule of priority 1000 takes nothing."""
    loud = [r.model_copy(update={"priority": 1000}) if r.id == "mortgage-rates" else r for r in matcher.rules]
    ev = evaluate_rulebook(RuleMatcher(loud, embedder=matcher.embedder), load_labelled(LABELLED), config=GATE)
    assert ev.accuracy_at_1 == pytest.approx(6 / 7)
    assert [c.took for c in ev.confusions] == ["card-blocked"]


def test_figures_without_a_denominator_are_none(matcher: RuleMatcher) -> None:
    nothing = [LabelledMessage(message="I love pizza with extra cheese", expected=())]
    ev = evaluate_rulebook(matcher, nothing, config=GATE)
    assert (ev.labelled, ev.accuracy_at_1, ev.mrr, ev.recall_at_k[1], ev.precision, ev.recall) == (
        0, None, None, None, None, None,
    )  # fmt: skip
    assert ev.rejection == 1.0
    assert (ev.multi_label.precision, ev.multi_label.recall, ev.multi_label.f1) == (None, None, None)
    assert ev.confusions == ()


def test_bad_arguments_are_typed_errors(matcher: RuleMatcher) -> None:
    labelled = load_labelled(LABELLED)
    for k in ((), (0, 1), (1.5,)):
        with pytest.raises(InvalidInputError, match="k must be one or more integers"):
            evaluate_rulebook(matcher, labelled, k=k)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="config must be a MatchConfig"):
        evaluate_rulebook(matcher, labelled, config={"threshold": 0.5})  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="matcher must be a RuleMatcher"):
        evaluate_rulebook(object(), labelled)  # type: ignore[arg-type]
    unknown = [LabelledMessage(message="hi", expected=("nope",), line=7)]
    with pytest.raises(LabelledMessagesError, match=r"^set.jsonl:7: unknown rule id\(s\) 'nope'"):
        evaluate_rulebook(matcher, unknown, source="set.jsonl")


def test_the_reliability_of_the_confidence_by_hand() -> None:
    from norma.matching._evaluate import _reliability

    table, ece = _reliability([(0.05, False), (0.95, True), (0.85, False), (0.15, True), (1.0, True)])
    assert [(b.low, b.high, b.candidates) for b in table][:2] == [(0.0, 0.1, 1), (0.1, 0.2, 1)]
    assert [b.candidates for b in table] == [1, 1, 0, 0, 0, 0, 0, 0, 1, 2]  # 1.0 falls in the last bin
    assert (table[9].confidence, table[9].right) == (pytest.approx(0.975), 1.0)
    assert (table[2].confidence, table[2].right) == (None, None)
    assert ece == pytest.approx((0.05 + 0.85 + 0.85 + 2 * 0.025) / 5)
    assert _reliability([]) == (table.__class__(b.__class__(b.low, b.high, 0, None, None) for b in table), None)


def test_the_evaluation_counts_every_candidate_and_the_rules_that_govern(matcher: RuleMatcher) -> None:
    from norma.matching._evaluate import _session

    labelled = load_labelled(LABELLED)
    ev = evaluate_rulebook(matcher, labelled)
    messages, sessions = [i.message for i in labelled], [_session(i) for i in labelled]
    found = matcher.match_many(messages, sessions, config=MatchConfig(threshold=None, max_matched=50))
    assert sum(b.candidates for b in ev.reliability) == sum(map(len, found))
    governing = [(m.rule.id in i.expected) for i, r in zip(labelled, matcher.match_many(messages, sessions),
                                                           strict=True) for m in r if m.enforced]  # fmt: skip
    assert ev.governs_precision == pytest.approx(sum(governing) / len(governing))
    assert ev.ece is not None
    assert 0 <= ev.ece <= 1
