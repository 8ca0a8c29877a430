"""The gate: by default the rules that govern the message (confidence >= 0.7), calibrated from labelled messages,
or a number; named with every term in each result. Similarities are computed by hand with the axis embedder."""

from __future__ import annotations

import dataclasses
import json
import math
import zlib

import pytest

from norma.errors import InvalidInputError
from norma.matching import (
    GOVERNS,
    CalibratedGate,
    ConfidenceGate,
    FixedGate,
    HeldOut,
    MatchConfig,
    NoGate,
    Rule,
    RuleMatcher,
    calibrate_gate,
)
from norma.matching._calibrate import Observed, fit_gate, observe
from norma.matching._gate import gate_from_dict
from norma.matching._labelled import LabelledMessage
from norma.matching._synthetic import NearMiss
from tests.matching.conftest import AxisEmbedder

TWO_KEYWORDS = [
    "delivery hello",
    "refund weather",
    "card weather",
    "hello refund",
    "card hello",
]
RULES = [
    Rule(id="refund", condition_text="refund", examples=[f"refund {i}" for i in range(1, 11)]),
    Rule(id="card", condition_text="card", examples=[f"card {i}" for i in range(1, 10)]),
    Rule(id="hello", condition_text="hello"),
    Rule(id="weather", condition_text="weather"),
    Rule(id="delivery", condition_text="delivery", examples=TWO_KEYWORDS),
]
MESSAGES = ["refund please", "refund card", "refund card hello", "card weather hello", "hello", "delivery now",
            "weather card", "nothing shared"]  # fmt: skip


def test_the_default_gate_is_the_confidence_and_is_named_in_the_result(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    gate = matcher.gate()
    assert gate == ConfidenceGate() == ConfidenceGate(0.7)
    assert GOVERNS == 0.7
    assert gate.to_dict() == {
        "kind": "confidence",
        "score": "confidence",
        "threshold": 0.7,
        "terms": {},
        "description": "confidence >= 0.7: the rules that govern the message (the default gate)",
    }
    (match,) = matcher.match("refund please")  # similarity 1.0 to refund, 0 to every other rule
    assert (match.rule.id, match.enforced) == ("refund", True)
    assert (match.explanation.threshold, match.explanation.threshold_on) == (0.7, "confidence")
    assert match.explanation.threshold_score is None  # the confidence is the match's: match.confidence
    result = matcher.match("refund card", explain=True)  # 1/sqrt(2) to both rules: neither governs
    assert result == []
    detail = next(d.detail for d in result.dropped if d.rule_id == "refund")
    assert detail == "confidence 0.10 < 0.7 that it governs the message (similarity 0.7071)"
    assert result.gate == gate
    assert result.to_dict()["gate"]["kind"] == "confidence"


def test_a_rule_is_returned_exactly_when_it_governs(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    gated = matcher.match_many(MESSAGES)
    every = matcher.match_many(MESSAGES, config=MatchConfig(threshold=None))
    for message, kept, scored in zip(MESSAGES, gated, every, strict=True):
        assert all(m.enforced for m in kept), message  # no neighbours under the default gate
        assert [m.rule.id for m in kept] == [m.rule.id for m in scored if m.confidence >= GOVERNS], message
    assert sum(map(len, gated)) >= 3  # the property is not vacuous: refund, delivery, hello govern messages


def test_the_gate_is_one_kind_at_every_rulebook_size(axis: AxisEmbedder) -> None:
    # no fallback below 20 example texts and nothing measured per rulebook: one rule without examples gets the
    # same gate as a rulebook of 33 example texts
    for rules in ([Rule(id="refund", condition_text="refund")], RULES[:2], RULES):
        assert RuleMatcher(rules, embedder=axis).gate() == ConfidenceGate()
    (match,) = RuleMatcher([Rule(id="refund", condition_text="refund")], embedder=axis).match("refund")
    assert (match.rule.id, match.enforced) == ("refund", True)


def test_a_numeric_threshold_and_none_are_named_too(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    assert matcher.gate(MatchConfig(threshold=None)).to_dict() == {
        "kind": "none",
        "score": "similarity",
        "threshold": None,
        "terms": {},
        "description": "no gate: every scored rule can match (threshold=None)",
    }
    assert matcher.gate(MatchConfig(threshold=None)) == NoGate()
    fixed = matcher.gate(MatchConfig(threshold=0.5))
    assert fixed == FixedGate(0.5, "similarity")
    assert fixed.description == "similarity >= 0.5 (threshold set in the config)"
    assert fixed.to_dict()["terms"] == {"source": "config"}
    final = matcher.gate(MatchConfig(threshold=0.5, threshold_on="final"))
    assert (final, final.score) == (FixedGate(0.5, "final"), "final")
    assert final.description == "final >= 0.5 (threshold set in the config)"
    assert matcher.gate(MatchConfig.adr()) == FixedGate(0.5, "final")


# -- calibration from labelled messages ------------------------------------------------------------------------------

# Ungated, with these rules (no examples): "refund" -> refund 1.0; "refund card" -> refund and card at 0.7071 each;
# "hello weather" -> hello and weather at 0.7071; "delivery" -> delivery 1.0.
PLAIN = [Rule(id=name, condition_text=name) for name in ("refund", "card", "hello", "weather", "delivery")]
LABELLED = [
    ("refund", ["refund"]),  # TP at 1.0
    ("refund card", ["refund", "card"]),  # 2 TP at 0.7071
    ("hello weather", []),  # 2 FP at 0.7071
    ("delivery", ["delivery"]),  # TP at 1.0
]


def test_calibration_picks_the_threshold_by_the_target(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(PLAIN, embedder=axis)
    # at 1.0: TP 2, FP 0 -> precision 1, recall 2/4; at 0.7071: TP 4, FP 2 -> precision 4/6, recall 1
    precise = calibrate_gate(matcher, LABELLED, target_precision=0.9)
    assert precise.threshold == pytest.approx(1.0, abs=1e-6)
    assert (precise.precision, precise.recall) == (1.0, 0.5)
    assert (precise.target, precise.goal) == ("precision", 0.9)
    assert precise.messages == 4
    assert (precise.to_dict()["terms"]["target"], precise.to_dict()["terms"]["goal"]) == ("precision", 0.9)
    assert "(precision >= 0.9; precision 1.000, recall 0.500)" in precise.description
    recalled = calibrate_gate(matcher, LABELLED, target_recall=1.0)
    assert recalled.threshold == pytest.approx(1 / math.sqrt(2), abs=1e-6)
    assert recalled.precision == pytest.approx(4 / 6, abs=1e-6)
    assert (recalled.target, recalled.goal) == ("recall", 1.0)
    # F1: 2/3 at 1.0 (p 1, r .5) against 0.8 at 0.7071 (p .667, r 1): the lower threshold
    best = calibrate_gate(matcher, LABELLED, best_f1=True)
    assert best.threshold == pytest.approx(1 / math.sqrt(2), abs=1e-6)
    assert (best.f1, best.target, best.goal, best.score) == (pytest.approx(0.8), "best_f1", None, "similarity")
    # a match returns at most max_matched rules: with 1, "refund card" never gets both of its rules
    with pytest.raises(InvalidInputError, match=r"no threshold reaches recall 1 on these messages \(best recall 0\.75"):
        calibrate_gate(matcher, LABELLED, target_recall=1.0, config=MatchConfig(max_matched=1))


BALANCING = [
    ("refund", ["refund"]),
    ("card hello weather", ["card", "hello", "weather"]),
    ("refund card", []),
    ("card delivery hello weather", []),
]


def test_a_balanced_calibration_is_the_default_gate_on_the_refitted_confidence(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(PLAIN, embedder=axis)
    gate = calibrate_gate(matcher, BALANCING)
    assert isinstance(gate, CalibratedGate)
    assert (gate.kind, gate.score, gate.threshold, gate.target) == ("calibrated", "confidence", 0.7, "balanced")
    assert (gate.messages, gate.near_misses, gate.expecting_none, gate.goal) == (4, 0, 2, None)
    assert (gate.rules, gate.rules_version, gate.model) == (5, 0, axis.model_id)
    assert gate.refit is not None  # the candidates hold both kinds
    assert matcher.refit is None  # calibrating does not set it
    # the figures are what the matcher then returns for these messages, matched for real
    matcher.set_gate(gate)
    assert matcher.refit == gate.refit
    found = matcher.match_many([m for m, _ in BALANCING])
    inside = [bool(r) and r[0].rule.id in want for r, (_, want) in zip(found, BALANCING, strict=True) if want]
    outside = [not r for r, (_, want) in zip(found, BALANCING, strict=True) if not want]
    assert (gate.acc_at_1, gate.rejection) == (sum(inside) / len(inside), sum(outside) / len(outside))
    returned = [(m.rule.id, set(want)) for r, (_, want) in zip(found, BALANCING, strict=True) for m in r]
    tp = sum(rule in want for rule, want in returned)
    assert gate.precision == (round(tp / len(returned), 6) if returned else 1.0)
    assert gate.recall == round(tp / 4, 6)  # refund; card, hello and weather
    assert all(m.enforced for r in found for m in r)
    assert gate.description == (
        f"confidence >= 0.7, calibrated on 4 labelled messages at tenant version 0: the confidence refitted: "
        f"{gate.refit.words}; acc@1 {gate.acc_at_1:.3f}, rejection {gate.rejection:.3f} on them"
    )
    assert gate_from_dict(gate.to_dict()) == gate
    # a near miss of a rule says what a message that expects nothing says, for that rule
    items = [LabelledMessage(message=m, expected=tuple(e)) for m, e in BALANCING[:2]]
    missed = fit_gate(observe(matcher, items, [NearMiss("refund card", "refund")]))
    assert (missed.near_misses, missed.expecting_none, missed.score) == (1, 1, "confidence")


def test_without_confidences_a_balanced_calibration_returns_nothing(axis: AxisEmbedder) -> None:
    # observations without confidences (as a caller may build them): nothing governs, so the confidence gate returns
    # no rule: acc@1 0, rejection 1, and no refit
    items = [LabelledMessage(message=m, expected=tuple(e)) for m, e in BALANCING]
    bare = [Observed(o.candidates, o.expected, o.near_miss) for o in observe(RuleMatcher(PLAIN, embedder=axis), items)]
    gate = fit_gate(bare)
    assert (gate.refit, gate.acc_at_1, gate.rejection, gate.precision, gate.recall) == (None, 0.0, 1.0, 1.0, 0.0)


def test_calibration_is_deterministic_and_becomes_the_automatic_gate(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(PLAIN, embedder=axis)
    gate = calibrate_gate(matcher, LABELLED, target_precision=0.9)
    assert gate == calibrate_gate(RuleMatcher(list(reversed(PLAIN)), embedder=axis), LABELLED, target_precision=0.9)
    matcher.set_gate(gate)
    assert matcher.given_gate is gate
    assert matcher.gate() is gate
    result = matcher.match("refund card")
    assert result == []
    assert result.gate is gate
    assert gate_from_dict(gate.to_dict()) == gate  # what the store keeps reads back the same
    matcher.upsert([Rule(id="extra", condition_text="weather delivery")])
    assert matcher.gate() is gate  # a calibrated gate is used as is, whatever the rules become
    matcher.set_gate(None)
    assert matcher.given_gate is None
    assert matcher.gate() == ConfidenceGate()  # back to the default


def test_a_gate_calibrated_with_another_model_is_ignored(axis: AxisEmbedder, caplog: pytest.LogCaptureFixture) -> None:
    gate = calibrate_gate(RuleMatcher(PLAIN, embedder=axis), LABELLED, target_precision=0.9)
    assert gate.model == axis.model_id
    other = dataclasses.replace(gate, model="encoder@0123456789ab")
    matcher = RuleMatcher(PLAIN, embedder=axis)
    with caplog.at_level("WARNING", logger="norma.matching._matcher"):
        matcher.set_gate(other)
    assert matcher.given_gate is None
    assert matcher.gate() == ConfidenceGate()  # the default, not the other model's
    assert "calibrated with model encoder@0123456789ab" in caplog.text
    with caplog.at_level("WARNING", logger="norma.matching._matcher"):
        given = RuleMatcher(PLAIN, embedder=axis, gate=other)  # given at construction: ignored too
    assert given.gate().kind == "confidence"
    assert caplog.text.count("calibrated with model encoder@0123456789ab") == 2
    matcher.set_gate(gate)
    assert matcher.gate() is gate
    unknown = dataclasses.replace(gate, model=None)  # a gate that names no model is used as given
    matcher.set_gate(unknown)
    assert matcher.gate() is unknown


def test_calibration_refuses_bad_input(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(PLAIN, embedder=axis)
    with pytest.raises(InvalidInputError, match="unknown rule id\\(s\\) 'ghost'"):
        calibrate_gate(matcher, [("refund", ["ghost"])])
    with pytest.raises(InvalidInputError, match="give one target"):
        calibrate_gate(matcher, LABELLED, target_precision=0.9, target_recall=0.9)
    with pytest.raises(InvalidInputError, match="give one target"):
        calibrate_gate(matcher, LABELLED, target_recall=0.9, best_f1=True)
    with pytest.raises(InvalidInputError, match="expect no rule \\(or near misses\\): 2 expect a rule, 0 none"):
        calibrate_gate(matcher, [("refund", ["refund"]), ("card", ["card"])])
    with pytest.raises(InvalidInputError, match="expect some rule: 0 expect a rule, 1 none"):
        calibrate_gate(matcher, [("hello weather", [])])
    with pytest.raises(InvalidInputError, match="no labelled messages"):
        calibrate_gate(matcher, [])
    with pytest.raises(InvalidInputError, match="in \\(0, 1\\]"):
        calibrate_gate(matcher, LABELLED, target_precision=1.5)
    with pytest.raises(InvalidInputError, match="no threshold reaches precision"):
        calibrate_gate(matcher, [("hello weather", [])], target_precision=0.5)
    for wrong in (NoGate(), ConfidenceGate(), {"kind": "calibrated"}, 0.5):
        with pytest.raises(InvalidInputError, match="set_gate takes a calibrated or fixed gate"):
            matcher.set_gate(wrong)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="a balanced calibration gates on the confidence"):
        CalibratedGate(0.5, "balanced", messages=3)
    with pytest.raises(InvalidInputError, match="a balanced calibration gates on the confidence"):
        CalibratedGate(0.5, "best_f1", messages=3, on="confidence")


def test_a_calibrated_target_compares_the_similarity_whatever_threshold_on_says(axis: AxisEmbedder) -> None:
    # "refund card": refund and card at similarity 0.7071; their final scores (0.6 * hybrid + 0.1 * scope) are far
    # lower, so a similarity gate of 0.7 returns both, a final-score gate of 0.7 neither
    matcher = RuleMatcher(PLAIN, MatchConfig(threshold_on="final"), embedder=axis)
    matcher.set_gate(CalibratedGate(0.7, "best_f1", messages=4))
    result = matcher.match("refund card")
    assert {m.rule.id for m in result} == {"refund", "card"}
    assert all(m.final_score < 0.7 for m in result)
    assert result[0].explanation.threshold_on == "similarity"


def test_a_calibrated_gate_comes_before_the_default_and_a_number_before_both(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(PLAIN, embedder=axis)
    calibrated = calibrate_gate(matcher, LABELLED, target_precision=0.9)
    matcher.set_gate(calibrated)
    assert matcher.gate() is calibrated
    assert matcher.gate(MatchConfig(threshold=0.9)) == FixedGate(0.9)  # a numeric threshold is not automatic
    assert matcher.gate(MatchConfig(threshold=None)) == NoGate()


def test_a_given_fixed_gate_is_used_as_is(axis: AxisEmbedder) -> None:
    fixed = FixedGate(0.6)
    matcher = RuleMatcher(RULES, embedder=axis, gate=fixed)
    assert matcher.gate() is fixed
    result = matcher.match("refund card")  # similarity 0.7071 >= 0.6 for both rules
    assert {m.rule.id for m in result} == {"refund", "card"}
    assert result.gate is fixed
    matcher.remove(["delivery"])
    assert matcher.gate() is fixed


# -- an adapted encoder's held-out examples ---------------------------------------------------------------------------

STORED = tuple(round(0.80 + k / 100, 2) for k in range(20))  # 0.80, 0.81, ..., 0.99


def test_an_adapted_encoders_held_out_examples_are_not_a_gate(axis: AxisEmbedder) -> None:
    held = HeldOut(STORED, rules=2, owners=((zlib.crc32(b"refund"), 0.9, 0.4),))
    matcher = RuleMatcher(RULES, embedder=axis, gate=held)
    assert matcher.held_out is held
    assert matcher.given_gate is None
    assert matcher.gate() == ConfidenceGate()  # the same decision for the adapted encoder
    calibrated = CalibratedGate(0.5, "best_f1", messages=3, model=axis.model_id)
    matcher.set_gate(calibrated)
    assert (matcher.gate(), matcher.held_out) == (calibrated, held)  # the held-out examples stay
    matcher.set_gate(None)
    assert (matcher.gate(), matcher.held_out) == (ConfidenceGate(), held)


# -- every kind read back --------------------------------------------------------------------------------------------

EVERY_KIND = [
    NoGate(),
    FixedGate(0.5),
    FixedGate(0.5, "final"),
    ConfidenceGate(),
    CalibratedGate(
        0.72,
        "precision",
        messages=40,
        near_misses=3,
        goal=0.9,
        precision=0.95,
        recall=0.6,
        f1=0.7355,
        rules=5,
        rules_version=3,
        model="test/axis",
    ),
    CalibratedGate(0.72, "recall", messages=4, goal=1.0),
    CalibratedGate(0.72, "best_f1", messages=4, f1=0.8),
    CalibratedGate(
        0.7,
        "balanced",
        messages=2,
        on="confidence",
        expecting_none=1,
        precision=0.5,
        recall=1.0,
        f1=0.6667,
        acc_at_1=1.0,
        rejection=0.0,
        rules=5,
        rules_version=0,
        model="test/axis",
    ),
]


@pytest.mark.parametrize("gate", EVERY_KIND, ids=lambda g: g.kind)
def test_every_gate_kind_reads_back_equal(gate: object) -> None:
    assert isinstance(gate, (NoGate, FixedGate, ConfidenceGate, CalibratedGate))
    data = gate.to_dict()
    assert set(data) == {"kind", "score", "threshold", "terms", "description"}
    assert (data["kind"], data["score"], data["threshold"]) == (gate.kind, gate.score, gate.threshold)
    assert data["description"] == gate.description
    again = gate_from_dict(json.loads(json.dumps(data)))  # through JSON, as a store keeps it
    assert again == gate
    assert type(again) is type(gate)
    assert again.to_dict() == data


def test_a_calibrated_gate_written_before_typed_gates_reads_back() -> None:
    old = {"kind": "calibrated", "score": "similarity", "threshold": 0.7,
           "terms": {"target": "precision >= 0.9", "messages": 12, "model": "test/axis"}}  # fmt: skip
    assert gate_from_dict(old) == CalibratedGate(0.7, "precision", messages=12, goal=0.9, model="test/axis")
    best = gate_from_dict({**old, "terms": {"target": "best F1", "messages": 12}})
    assert best == CalibratedGate(0.7, "best_f1", messages=12)


def test_the_gates_of_an_earlier_norma_read_as_todays() -> None:
    # its automatic gates (a rulebook quantile, an adapted encoder's) are today's default
    rulebook = {"kind": "rulebook", "score": "similarity", "threshold": 0.8,
                "terms": {"quantile": 0.24, "probes": 24, "examples": 24, "rules": 5}}  # fmt: skip
    assert gate_from_dict(rulebook) == ConfidenceGate()
    assert gate_from_dict({**rulebook, "kind": "adapted"}) == ConfidenceGate()
    # its balanced calibration (the rulebook's gate moved, a band, the refit): the refit stays, the moved similarity
    # gate and the figures measured at it go
    refit = {"scale": 1.2, "shift": -0.3, "candidates": 40, "prior": 200.0}
    balanced = {"kind": "calibrated", "score": "similarity", "threshold": 0.8869,
                "terms": {"target": "balanced", "messages": 2, "near_misses": 1, "band_threshold": 0.7346,
                          "margin": 0.09, "base": {"kind": "rulebook", "threshold": 0.8594}, "shift": 0.0275,
                          "acc_at_1": 1.0, "rejection": 0.0, "rules_version": 4, "model": "test/axis",
                          "confidence": refit}}  # fmt: skip
    gate = gate_from_dict(balanced)
    assert isinstance(gate, CalibratedGate)
    assert (gate.score, gate.threshold, gate.target, gate.messages, gate.near_misses) == (
        "confidence", 0.7, "balanced", 2, 1,
    )  # fmt: skip
    assert (gate.acc_at_1, gate.rejection, gate.rules_version, gate.model) == (None, None, 4, "test/axis")
    assert gate.refit is not None
    assert gate.refit.to_dict() == gate_from_dict(gate.to_dict()).refit.to_dict()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "magic", "score": "similarity", "threshold": 0.8},
        {"kind": None, "score": "similarity", "threshold": 0.8},
        {"kind": "fixed", "score": "similarity", "threshold": float("nan")},
        {"kind": "fixed", "score": "similarity", "threshold": float("inf")},
        {"kind": "fixed", "score": "similarity", "threshold": "0.8"},
        {"kind": "fixed", "score": "similarity", "threshold": True},
        {"kind": "fixed", "score": "similarity", "threshold": None},
        {"kind": "fixed", "score": "hybrid", "threshold": 0.5},
        {"kind": "fixed", "score": "confidence", "threshold": 0.5},
        {"kind": "calibrated", "score": "similarity", "threshold": 0.5, "terms": {"target": "magic"}},
        {"kind": "calibrated", "score": "similarity", "threshold": 0.5, "terms": {"precision": "high"}},
        {"kind": "calibrated", "score": "confidence", "threshold": 0.5, "terms": {"target": "best_f1"}},
        {"kind": "calibrated", "score": "similarity", "threshold": 0.5, "terms": {"target": "recall"}},  # no goal
        {"score": "similarity", "threshold": 0.5},
        {"kind": "fixed", "threshold": 0.5},
        ["kind", "fixed"],
        None,
    ],
)
def test_a_malformed_gate_is_refused(data: object) -> None:
    with pytest.raises(InvalidInputError, match="stored gate is malformed"):
        gate_from_dict(data)  # type: ignore[arg-type]


def _sketched(texts: list[str], k: int) -> HeldOut:
    keys = sorted({zlib.crc32(t.encode("utf-8")) for t in texts})
    return HeldOut(STORED, trained_texts=len(set(texts)), sketch=frozenset(keys[:k]))


def test_the_trained_share_is_exact_on_a_whole_sketch_and_sampled_on_a_partial_one() -> None:
    old = [f"old text {i}" for i in range(100)]
    new = [f"new text {i}" for i in range(100)]
    whole, partial = _sketched(old, 4096), _sketched(old, 10)
    assert whole.trained_share(old[:50] + new[:50]) == 0.5
    assert whole.trained_share(old[:10] + old[:10] + new[:1]) == round(10 / 11, 3)  # duplicates count once
    assert whole.trained_share(new) == 0.0
    assert partial.trained_share(old) == 1.0  # every text in the sketch's range is one of its keys
    assert partial.trained_share(new) == 0.0
    assert whole.trained_share([]) is None
    assert HeldOut(STORED, trained_texts=3).trained_share(old) is None  # adapted before the sketch was kept
    lookup = whole.trained()
    assert lookup is not None
    assert [lookup(t) for t in (old[0], new[0])] == [True, False]
    sampled = partial.trained()
    assert sampled is not None
    kept = sorted(old, key=lambda t: zlib.crc32(t.encode("utf-8")))
    assert sampled(kept[0]) is True
    assert sampled(kept[-1]) is None  # beyond the sketch's range: undecided
    assert HeldOut(STORED, trained_texts=3).trained() is None
