"""What a rulebook change does (issue #60): recorded turns checked against OLD and NEW, and what changed.

One small rulebook (built here, checked with the real embedding model) and eleven recorded turns; each test applies
one kind of edit and asserts the exact changes, written by hand: which turns, their verdicts and rewards, which
rules newly govern or match, which checks newly fail. The matching facts the expectations rest on (which rule
governs which message) are those of the shipped model, and hold for OLD in ``test_the_recorded_turns_under_old``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from norma.errors import InvalidInputError, LimitExceededError
from norma.matching import MatchConfig
from norma.rules import Rule
from norma.store import open_store
from norma.turns import ChangeKind, Norma, RulebookDiff, TurnChange, diff_turns
from norma.turns import open as norma_open
from norma.turns import open as open_rules
from norma.turns._diff import check_both

pytestmark = pytest.mark.model


def _rule(**fields: Any) -> Rule:
    return Rule.model_validate({"tenant_id": "acme", **fields})


REFUND = _rule(
    id="refund",
    condition_text="customer asks for a refund of an order",
    action_text="explain the refund policy",
    examples=["I want my money back", "can I get a refund for my order"],
    checks=[{"id": "policy", "kind": "contains", "terms": ["refund policy"]}],
)
CARDS = _rule(
    id="cards",
    condition_text="customer reports a lost or stolen card",
    action_text="block the card",
    examples=["I lost my card", "my card was stolen"],
    checks=[{"id": "blocked", "kind": "contains", "terms": ["blocked"]}],
)
HOURS = _rule(
    id="hours",
    condition_text="customer asks about the opening hours of the branches",
    examples=["when are you open", "opening hours on saturday"],
    checks=[{"id": "no-always-open", "kind": "not_contains", "terms": ["24/7"]}],  # a prohibition: when matched
)
PASSWORDS = _rule(
    id="no-password",
    condition_text="customer asks to reset a password",
    checks=[{"id": "no-password", "kind": "not_contains", "terms": ["password"], "when": "always"}],
)
INVOICE = _rule(
    id="invoice",
    condition_text="customer asks for a copy of an invoice",
    checks=[{"id": "attached", "kind": "contains", "terms": ["invoice attached"]}],
)
OLD = [REFUND, CARDS, HOURS, PASSWORDS, INVOICE]

TURNS: list[dict[str, Any]] = [
    {"id": "refund-good", "message": "I want a refund for my order", "output": "Our refund policy: 30 days, the form."},
    {
        "id": "refund-short",
        "message": "can I get my money back for this order",
        "output": "Our refund policy: 30 days.",
    },
    {"id": "card-good", "message": "I lost my card yesterday", "output": "Your card is blocked now."},
    {"id": "card-bad", "message": "someone stole my card", "output": "Please call us."},
    {"id": "hours", "message": "what time do you open on sunday", "output": "We are open 24/7."},
    {"id": "weather", "message": "will it rain tomorrow", "output": "No idea."},
    {"id": "parcel", "message": "my parcel still has not arrived, where is it", "output": "It is on its way."},
    {"id": "bill", "message": "can you send me the bill for last month", "output": "Here you go."},
    {"id": "christmas", "message": "do you close at christmas", "output": "No, we are open 24/7."},
    {"id": "broken", "message": "my order arrived broken", "output": "Sorry, we will send a new one."},
    {"id": "leak", "message": "hello there", "output": "your password is hunter2"},
]


def _edited(rule: Rule, **fields: Any) -> Rule:
    return Rule.model_validate({**rule.model_dump(), **fields})


DELIVERY = _rule(
    id="delivery",
    condition_text="customer asks where the parcel is",
    examples=["where is my parcel", "my package has not arrived"],
    checks=[{"id": "tracking", "kind": "contains", "terms": ["tracking"]}],
)
EDITS: dict[str, list[Rule]] = {
    "added": [*OLD, DELIVERY],
    "removed": [REFUND, HOURS, PASSWORDS, INVOICE],
    "reworded": [
        REFUND,
        CARDS,
        HOURS,
        PASSWORDS,
        _edited(INVOICE, condition_text="customer asks for a bill or an invoice of a past month"),
    ],
    "examples": [
        REFUND,
        CARDS,
        _edited(HOURS, examples=[*HOURS.examples, "are you open on bank holidays", "is the branch open at lunchtime"]),
        PASSWORDS,
        INVOICE,
    ],
    "stricter": [
        _edited(
            REFUND, checks=[{"id": "policy", "kind": "contains", "terms": ["refund policy", "form"], "mode": "all"}]
        ),
        CARDS,
        HOURS,
        PASSWORDS,
        INVOICE,
    ],
    "priority": [REFUND, _edited(CARDS, priority=5), HOURS, PASSWORDS, INVOICE],
}


@pytest.fixture(scope="module")
def old() -> Norma:
    return norma_open(OLD, judge=None)


def _diff(old: Norma, edit: str) -> RulebookDiff:
    return diff_turns(old, norma_open(EDITS[edit], judge=None), TURNS)


def _seen(change: TurnChange) -> tuple[Any, ...]:
    return (
        change.id,
        change.kind.value,
        f"{change.old_verdict.value} -> {change.new_verdict.value}",
        (change.old_reward, change.new_reward),
        change.governs_added,
        change.governs_removed,
        change.matched_added,
        change.matched_removed,
        [f"{r.rule_id}/{r.check_id}" for r in change.failures_added],
        [f"{r.rule_id}/{r.check_id}" for r in change.failures_removed],
    )


def test_the_recorded_turns_under_old(old: Norma) -> None:
    """What the expectations below start from: each turn's verdict, reward and governing rules under OLD."""
    reports = old.check_many(TURNS)
    seen = {
        turn["id"]: (r.verdict.value, r.reward, [(m.rule_id, m.enforced) for m in r.matches])
        for turn, r in zip(TURNS, reports, strict=True)
    }
    assert seen == {
        "refund-good": ("pass", 1.0, [("refund", True)]),
        "refund-short": ("pass", 1.0, [("refund", True)]),
        "card-good": ("pass", 1.0, [("cards", True)]),
        "card-bad": ("fail", 0.5, [("cards", True)]),  # blocked missing; the always check passes
        "hours": ("fail", 0.5, [("hours", True)]),
        "weather": ("pass", 1.0, []),  # only the always check
        "parcel": ("pass", 1.0, []),
        "bill": ("pass", 1.0, []),
        "christmas": ("pass", 1.0, []),
        "broken": ("pass", 1.0, []),  # refund does not govern it: the default gate returns no rule
        "leak": ("fail", 0.0, []),
    }


def test_a_rule_added_governs_the_turns_it_is_about(old: Norma) -> None:
    diff = _diff(old, "added")
    assert [_seen(c) for c in diff.changes] == [
        ("parcel", "newly_failing", "pass -> fail", (1.0, 0.5), ("delivery",), (), ("delivery",), (),
         ["delivery/tracking"], []),
    ]  # fmt: skip
    assert [e.to_dict() for e in diff.edits] == [{"rule_id": "delivery", "edit": "added", "fields": [], "turns": 1}]
    assert [r.to_dict() for r in diff.rules] == [
        {"rule_id": "delivery", "edit": "added", "governs_gained": 1, "governs_lost": 0, "matched_gained": 1,
         "matched_lost": 0, "failing_gained": 1, "failing_lost": 0},
    ]  # fmt: skip
    assert diff.rules[0].describe() == (
        "rule `delivery` (added) now governs 1 more turn; is matched in 1 more turn; fails 1 more turn"
    )
    assert diff.summary() == ("1 of 11 turns change verdict: 1 newly fail, 0 newly pass; 10 unchanged.")


def test_a_rule_removed_no_longer_governs_nor_fails(old: Norma) -> None:
    diff = _diff(old, "removed")
    assert [_seen(c) for c in diff.changes] == [
        ("card-good", "same_verdict", "pass -> pass", (1.0, 1.0), (), ("cards",), (), ("cards",), [], []),
        ("card-bad", "newly_passing", "fail -> pass", (0.5, 1.0), (), ("cards",), (), ("cards",), [],
         ["cards/blocked"]),
    ]  # fmt: skip
    assert [(e.rule_id, e.edit.value, e.turns) for e in diff.edits] == [("cards", "removed", 2)]
    assert diff.rules[0].describe() == (
        "rule `cards` (removed) now governs 2 fewer turns; is matched in 2 fewer turns; fails 1 fewer turn"
    )
    assert diff.counts == {
        "turns": 11, "changed": 2, "verdict_changed": 1, "newly_failing": 0, "newly_passing": 1,
        "newly_skipped": 0, "same_verdict": 1, "unchanged": 9,
    }  # fmt: skip


def test_a_reworded_condition_catches_a_message_it_missed(old: Norma) -> None:
    diff = _diff(old, "reworded")
    assert [_seen(c) for c in diff.changes] == [
        ("bill", "newly_failing", "pass -> fail", (1.0, 0.5), ("invoice",), (), ("invoice",), (),
         ["invoice/attached"], []),
    ]  # fmt: skip
    assert [e.to_dict() for e in diff.edits] == [
        {"rule_id": "invoice", "edit": "changed", "fields": ["condition_text"], "turns": 1}
    ]
    [failure] = diff.changes[0].failures_added
    assert failure.message == "mentions none of 'invoice attached'"


def test_examples_added_bring_a_message_under_the_rule(old: Norma) -> None:
    diff = _diff(old, "examples")
    assert [_seen(c) for c in diff.changes] == [
        ("christmas", "newly_failing", "pass -> fail", (1.0, 0.5), ("hours",), (), ("hours",), (),
         ["hours/no-always-open"], []),
    ]  # fmt: skip
    assert [(e.rule_id, e.edit.value, e.fields) for e in diff.edits] == [("hours", "changed", ("examples",))]
    [move] = diff.changes[0].moves
    assert (move.rule_id, move.old.value, move.new.value, move.old_confidence) == (
        "hours",
        "not_matched",
        "governs",
        None,
    )
    assert move.new_confidence is not None
    assert move.new_confidence >= 0.7  # GOVERNS


def test_a_stricter_check_fails_an_answer_it_passed(old: Norma) -> None:
    diff = _diff(old, "stricter")
    assert [_seen(c) for c in diff.changes] == [
        ("refund-short", "newly_failing", "pass -> fail", (1.0, 0.5), (), (), (), (), ["refund/policy"], []),
    ]
    assert [(e.rule_id, e.fields) for e in diff.edits] == [("refund", ("checks",))]
    assert diff.rules[0].describe() == "rule `refund` (changed) now fails 1 more turn"


def test_a_priority_change_that_reorders_nothing_changes_no_turn(old: Norma) -> None:
    diff = _diff(old, "priority")
    assert diff.changes == ()
    assert [(e.rule_id, e.edit.value, e.fields, e.turns) for e in diff.edits] == [
        ("cards", "changed", ("priority",), 0)
    ]
    assert diff.summary() == "0 of 11 turns change verdict: 0 newly fail, 0 newly pass; 11 unchanged."
    assert not diff.failing("newly-failing")
    assert not diff.failing("verdict-change")


def test_turns_are_listed_worst_first(old: Norma) -> None:
    """Rules removed and added at once: the newly failing turn first, then by how much the reward fell."""
    new = norma_open([REFUND, HOURS, PASSWORDS, INVOICE, DELIVERY], judge=None)
    diff = diff_turns(old, new, TURNS)
    assert [(c.id, c.kind.value, c.reward_drop) for c in diff.changes] == [
        ("parcel", "newly_failing", 0.5),
        ("card-good", "same_verdict", 0.0),
        ("card-bad", "newly_passing", -0.5),
    ]
    assert diff.summary() == (
        "2 of 11 turns change verdict: 1 newly fail, 1 newly pass; 1 more turn changes otherwise (governing or "
        "matched rules, failing checks, reward); 8 unchanged."
    )
    assert diff.failing("newly-failing")
    assert diff.failing("verdict-change")
    assert not diff.failing("never")
    with pytest.raises(InvalidInputError, match=r"fail on 'sometimes'\? One of newly-failing, verdict-change, never"):
        diff.failing("sometimes")


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_reusing_unchanged_rules_gives_what_checking_twice_gives(old: Norma, edit: str) -> None:
    """Every turn's two reports are those of checking the turns against each version on its own."""
    new = norma_open(EDITS[edit], judge=None)
    pairs = sorted(check_both(old, new, TURNS), key=lambda pair: pair.index)  # checked by message length
    assert [p.index for p in pairs] == list(range(len(TURNS)))
    assert [p.id for p in pairs] == [turn["id"] for turn in TURNS]
    assert [p.old for p in pairs] == old.check_many(TURNS)
    assert [p.new for p in pairs] == new.check_many(TURNS)
    assert [p.new.to_dict() for p in pairs] == [r.to_dict() for r in new.check_many(TURNS)]


def test_how_much_is_reused(old: Norma) -> None:
    """After the priority edit, NEW reuses OLD's evaluation of every unchanged rule with the same status: the always
    rule on all 11 turns, refund on its two turns, hours on its turn; cards changed (its two turns are checked
    again)."""
    assert _diff(old, "priority").reused == 11 + 2 + 1
    # under a similarity threshold (the gate alone) refund is a neighbour of "broken" under both, at other
    # confidences: reused, and its skipped requirement quotes NEW's
    low = MatchConfig(threshold=0.5)  # refund 0.514; cards 0.372 and the others are left out
    old, new = norma_open(OLD, judge=None, config=low), norma_open(EDITS["examples"], judge=None, config=low)
    [broken] = [p for p in check_both(old, new, TURNS) if p.id == "broken"]
    assert broken.reused == 2  # refund (a neighbour both times) and the always rule
    assert [c.message for c in broken.old.checks if not c.enforced] == [
        "the rule matched only as a neighbour (confidence 0.36 < 0.7 that it governs the message): a requirement "
        "applies when the rule governs the turn"
    ]
    assert [c.message for c in broken.new.checks if not c.enforced] == [
        "the rule matched only as a neighbour (confidence 0.42 < 0.7 that it governs the message): a requirement "
        "applies when the rule governs the turn"
    ]


def test_the_json_of_a_change(old: Norma) -> None:
    data = _diff(old, "removed").to_dict()
    assert set(data) == {"old", "new", "summary", "counts", "edits", "rules", "changes", "reused"}
    assert data["old"] == {"source": None, "tenant": "acme", "version": None, "rules": 5}
    assert data["new"] == {"source": None, "tenant": "acme", "version": None, "rules": 4}
    change = data["changes"][1]
    confidence = change["moves"][0]["old_confidence"]
    assert change == {
        "index": 3,
        "id": "card-bad",
        "message": "someone stole my card",
        "change": "newly_passing",
        "verdict": {"old": "fail", "new": "pass"},
        "reward": {"old": 0.5, "new": 1.0},
        "governs": {"added": [], "removed": ["cards"]},
        "matched": {"added": [], "removed": ["cards"]},
        "moves": [
            {"rule_id": "cards", "old": "governs", "new": "not_matched", "old_confidence": confidence,
             "new_confidence": None},
        ],
        "failures": {
            "added": [],
            "removed": [
                {"rule_id": "cards", "check_id": "blocked", "kind": "contains", "severity": "error", "weight": 1.0,
                 "status": "fail", "message": "mentions none of 'blocked'", "evidence": [], "enforced": True},
            ],
        },
    }  # fmt: skip
    assert confidence >= 0.7


def test_a_stored_tenant_at_two_versions(tmp_path: Path, old: Norma) -> None:
    url = f"sqlite:///{tmp_path}/norma.db"
    with open_store(url) as store:
        assert store.upsert_rules("acme", OLD) == 1
        assert store.upsert_rules("acme", EDITS["examples"]) == 2
    first = open_rules(tenant="acme", version=1, store=url, judge=None)
    latest = open_rules(tenant="acme", store=url, judge=None)
    assert (first.rules_version, latest.rules_version) == (1, 2)
    assert first.rules == tuple(sorted(OLD, key=lambda r: r.id))
    diff = diff_turns(first, latest, TURNS)
    assert [(c.id, c.kind, c.governs_added) for c in diff.changes] == [
        ("christmas", ChangeKind.NEWLY_FAILING, ("hours",))
    ]
    assert diff.to_dict()["old"] == {"source": None, "tenant": "acme", "version": 1, "rules": 5}
    assert diff.old.label == "acme@1"


def test_bad_turns_are_refused_before_anything_is_checked(old: Norma) -> None:
    new = norma_open(EDITS["added"], judge=None)
    with pytest.raises(InvalidInputError) as caught:
        diff_turns(old, new, [TURNS[0], {"message": "hi", "output": 3}])
    assert (caught.value.location, caught.value.message) == (
        "turns[1].output",
        "the output to check must be text, not int",
    )
    with pytest.raises(LimitExceededError) as too_long:
        diff_turns(old, new, [("x" * 100_001, "y")])
    assert too_long.value.location == "turns[0].message"
    with pytest.raises(InvalidInputError, match="old must be a Norma"):
        diff_turns(OLD, new, TURNS)  # type: ignore[arg-type]
    assert diff_turns(old, new, []).summary() == "0 of 0 turns change verdict: 0 newly fail, 0 newly pass; 0 unchanged."


def test_progress_is_reported_per_chunk(old: Norma) -> None:
    seen: list[tuple[int, int]] = []
    diff_turns(old, old, TURNS, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(11, 11)]


def test_two_rulebooks_embedded_by_different_models_are_not_compared(old: Norma) -> None:
    from norma.embeddings import get_embedder
    from norma.matching import RuleMatcher

    int8 = Norma(RuleMatcher(list(OLD), embedder=get_embedder(quantize=True)))
    assert "#int8" in int8.matcher.embedder.model_id
    with pytest.raises(InvalidInputError, match="embed with different models") as caught:
        old.diff(int8, TURNS)
    assert caught.value.location == "new"
    same = old.diff(norma_open(OLD, judge=None), TURNS)  # the method is diff_turns: the same rules change nothing
    assert (same.counts["changed"], same.counts["turns"]) == (0, len(TURNS))
