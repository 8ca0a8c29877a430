"""One confidence per match (issue #56), with the real model: the rulebook statistics by hand, a rulebook of one
rule, the size sweep without a step, reliability on rulebooks it was not fitted on, the statistics surviving a
snapshot and an export / import, and a stranger's telehealth rulebook."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from norma.embeddings import get_embedder
from norma.matching import ConfidenceGate, MatchConfig, RuleMatcher
from norma.matching._confidence import PRIOR, SHRINK, RulebookStats
from norma.matching._snapshot import file_matcher
from norma.rules import Rule
from norma.turns import TurnVerdict
from norma.turns import open as open_rules

pytestmark = pytest.mark.model

REFUND = Rule(
    id="refund",
    condition_text="customer asks for a refund",
    examples=["I want my money back", "refund my purchase", "how do I get a refund", "please refund my order"],
)
PARCEL = Rule(
    id="track-parcel",
    condition_text="customer asks where their parcel is",
    examples=["where is my parcel", "my order has not arrived", "track my delivery"],
)
HOURS = [
    "when do you open", "are you open on sunday", "what are your hours", "what time do you close",
    "opening times please", "are you open late on friday", "is the shop open on bank holidays",
    "when does the store open tomorrow", "hours on saturday?", "do you close for lunch",
    "what time do you open on weekdays", "are you open at 8am", "is the branch open today",
    "closing time on sunday", "are you open over christmas",
]  # fmt: skip


def _shrunk(values: list[float], prior: float) -> float:
    return (len(values) * float(np.median(values)) + SHRINK * prior) / (len(values) + SHRINK)


def test_a_rulebook_of_one_rule_with_one_example() -> None:
    rule = Rule(id="refund", condition_text="customer asks for a refund", examples=["I want my money back"])
    matcher = RuleMatcher([rule])
    a, b = np.asarray(get_embedder().embed([rule.condition_text, "I want my money back"]), dtype=np.float64)
    own = float(a @ b)  # each of the two texts' best similarity to another text of its rule; no other rule
    stats = matcher.stats()
    assert stats.texts == 2
    assert stats.probe == pytest.approx(_shrunk([own, own], PRIOR["probe"]), abs=2e-5)
    assert stats.inside["refund"] == pytest.approx(_shrunk([own, own], _shrunk([own, own], PRIOR["inside"])), abs=2e-5)
    assert stats.outside["refund"] == PRIOR["outside"]  # nothing to measure: the prior
    (match,) = matcher.match("can I have a refund please")
    assert (match.rule.id, match.enforced) == ("refund", True)
    assert matcher.match("what's the weather tomorrow") == []


def test_the_decision_has_no_step_at_any_rulebook_size() -> None:
    # a third rule grows one example at a time from 0 to 15 (the example texts cross 20, where the similarity gate of
    # an earlier norma fell back to a fixed number): the gate stays one kind, the confidence of fixed messages of the
    # two other rules does not jump, and which rules match and govern them does not change
    messages = ["can I have a refund please", "refund me", "money back for my broken phone", "where is my package"]
    expected = [{"refund"}, {"refund"}, {"refund"}, {"track-parcel"}]
    kinds, series = set(), []
    for k in range(len(HOURS) + 1):
        hours = Rule(id="open-hours", condition_text="customer asks about opening hours", examples=HOURS[:k])
        matcher = RuleMatcher([REFUND, PARCEL, hours])
        kinds.add(type(matcher.gate()))
        found = matcher.match_many(messages)
        assert [{m.rule.id for m in r if m.enforced} for r in found] == expected
        assert [{m.rule.id for m in r} for r in found] == expected  # relevant: the rules that govern
        open_ = matcher.match_many(messages, config=MatchConfig(threshold=None))
        series.append(
            [next(m.confidence for m in r if m.rule.id in want) for r, want in zip(open_, expected, strict=True)]
        )
    assert kinds == {ConfidenceGate}  # one gate at every size
    jumps = np.abs(np.diff(np.asarray(series), axis=0))
    assert jumps.max() < 0.05


LABELLED = [
    ("can I have a refund please", {"refund"}), ("I want my money back for the shoes", {"refund"}),
    ("refund the order I cancelled", {"refund"}), ("where is my package", {"track-parcel"}),
    ("my delivery is late, where is it", {"track-parcel"}), ("has my order shipped yet", {"track-parcel"}),
    ("are you open on saturday", {"open-hours"}), ("what time do you close today", {"open-hours"}),
    ("when does the shop open", {"open-hours"}), ("what's the weather tomorrow", set()),
    ("tell me a joke", set()), ("who won the football last night", set()), ("I love your logo", set()),
    ("can I pay with a voucher", set()), ("do you sell gift cards", set()), ("how do I reset my password", set()),
]  # fmt: skip


def test_the_confidence_is_calibrated_on_a_rulebook_it_was_not_fitted_on() -> None:
    # a rulebook of its own (the coefficients were fitted on BANKING77 and NLU++ draws): over every candidate of
    # every labelled message, the mean confidence of each half (below / from 0.5) is within 0.2 of how often the
    # candidate is a rule the message states; the decision is right on every message
    hours = Rule(id="open-hours", condition_text="customer asks about opening hours", examples=HOURS[:6])
    matcher = RuleMatcher([REFUND, PARCEL, hours])
    found = matcher.match_many([m for m, _ in LABELLED], config=MatchConfig(threshold=None))
    pairs = [(m.confidence, m.rule.id in want) for r, (_, want) in zip(found, LABELLED, strict=True) for m in r]
    p, y = np.array([c for c, _ in pairs]), np.array([float(right) for _, right in pairs])
    for half in (p < 0.5, p >= 0.5):
        assert half.any()
        assert abs(p[half].mean() - y[half].mean()) < 0.2
    governed = [{m.rule.id for m in r if m.enforced} for r in matcher.match_many([m for m, _ in LABELLED])]
    assert governed == [want for _, want in LABELLED]


def test_the_statistics_are_kept_in_the_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMA_CACHE_DIR", str(tmp_path / "cache"))
    book = tmp_path / "rules.json"
    book.write_text(json.dumps({"rules": [REFUND.to_dict(), PARCEL.to_dict()]}), encoding="utf-8")
    first = file_matcher(book)
    measured = first.stats()
    (kept,) = list(tmp_path.rglob("confidence.json"))
    assert RulebookStats.from_dict(json.loads(kept.read_bytes())) == measured
    assert file_matcher(book).stats() == measured
    # the next matcher takes the kept statistics instead of measuring them: a forged figure shows through
    kept.write_text(json.dumps({**measured.to_dict(), "probe": 0.5}), encoding="utf-8")
    assert file_matcher(book).stats().probe == 0.5
    kept.write_text("not json", encoding="utf-8")  # kept statistics that do not read back: measured again
    assert file_matcher(book).stats() == measured
    assert RulebookStats.from_dict(json.loads(kept.read_bytes())) == measured


def test_the_confidence_survives_an_export_and_an_import(tmp_path: Path) -> None:
    from norma.matching import tenant_matcher
    from norma.store import export_rulebook, import_rulebook, open_store

    store, other = open_store(f"sqlite:///{tmp_path}/rules.db"), open_store(f"sqlite:///{tmp_path}/other.db")
    try:
        book = tmp_path / "rules.json"
        book.write_text(json.dumps({"rules": [REFUND.to_dict(), PARCEL.to_dict()]}), encoding="utf-8")
        import_rulebook(store, book, tenant_id="shop")
        exported = tmp_path / "exported.yaml"
        exported.write_text(export_rulebook(store, "shop"), encoding="utf-8")
        import_rulebook(other, exported, tenant_id="shop")
        shop, copy = tenant_matcher(store, "shop"), tenant_matcher(other, "shop")
        assert shop.stats() == copy.stats() == RuleMatcher([REFUND, PARCEL]).stats()
        message = "I returned the jacket, when will I get my money"
        assert [(m.rule.id, m.confidence) for m in shop.match(message)] == [
            (m.rule.id, m.confidence) for m in copy.match(message)
        ]
    finally:
        store.close()
        other.close()


def _telehealth(extra: int = 0) -> list[Rule]:
    def rule(rule_id: str, condition: str, examples: list[str], **check: object) -> Rule:
        return Rule(id=rule_id, condition_text=condition, examples=examples, checks=[check] if check else [])

    more = ["book a telehealth call", "I need a video appointment", "is there a slot on friday",
            "can my daughter see the nurse", "set up a check-up"][:extra]  # fmt: skip
    return [
        rule("appointment-book", "patient wants to book an appointment",
             ["I'd like to book an appointment", "can I see a doctor next week", "schedule a visit with my GP", *more]),
        rule("appointment-cancel", "patient wants to cancel an appointment",
             ["cancel my appointment", "I can't make it on Tuesday, please cancel", "remove my booking for tomorrow"],
             id="confirms", kind="contains", terms=["cancelled"]),
        rule("refund-request", "patient asks for a refund of a fee",
             ["I want my money back for the consultation", "refund the cancellation fee", "can I get a refund"],
             id="refund-policy", kind="contains", terms=["refund policy"]),
        rule("no-diagnosis", "patient describes symptoms and asks what illness they have",
             ["I have a rash, what is it", "do I have the flu", "what's wrong with me, my chest hurts"],
             id="no-diagnosis", kind="not_contains", terms=["you have"], when="enforced"),
        rule("prescription-refill", "patient asks to refill a prescription",
             ["I need more of my blood pressure pills", "refill my prescription", "my inhaler is running out"]),
        rule("emergency", "patient describes an emergency",
             ["I can't breathe", "severe chest pain right now", "my child swallowed bleach"]),
    ]  # fmt: skip


@pytest.mark.parametrize("extra", [0, 5])  # 18 and 23 example texts: either side of the gate's fallback
def test_a_strangers_telehealth_rulebook(extra: int) -> None:
    norma = open_rules(RuleMatcher(_telehealth(extra)), judge=None)
    symptoms = "I've had a headache and fever for three days, what do I have?"
    assert norma.check(symptoms, "You have the flu, rest and drink water.").verdict is TurnVerdict.FAIL
    assert norma.check(symptoms, "I can't diagnose this; please see a doctor.").verdict is not TurnVerdict.FAIL
    weather = "what's the weather tomorrow"
    assert norma.check(weather, "Sorry, I can only help with your appointments.").verdict is not TurnVerdict.FAIL
    # what `norma match` returns is what governs, on either side of 20 example texts
    assert norma.match(weather) == []
    assert [m.rule.id for m in norma.match(symptoms)] == ["no-diagnosis"]
    booking = "I'd like to book an appointment for next Monday"
    assert norma.check(booking, "Booked for Monday at 10.").verdict is not TurnVerdict.FAIL


@pytest.mark.xfail(strict=True, reason="issue #56: a second intent rarely governs (design/040, multi-label)")
def test_a_strangers_second_intent_governs() -> None:
    norma = open_rules(RuleMatcher(_telehealth()), judge=None)
    message = "I need to cancel my appointment and get a refund"
    assert norma.check(message, "Your appointment is cancelled.").verdict is TurnVerdict.FAIL
