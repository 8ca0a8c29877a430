"""The automatic gate (``threshold="auto"``): measured on the rulebook, calibrated from labelled messages, and
named with every term in each result. Expected values are computed by hand with the axis embedder."""

from __future__ import annotations

import dataclasses
import math
import random
import zlib

import numpy as np
import pytest

from norma.errors import InvalidInputError
from norma.matching import (
    AdaptedGate,
    CalibratedGate,
    FixedGate,
    HeldOut,
    MatchConfig,
    NoGate,
    Rule,
    RulebookGate,
    RuleMatcher,
    calibrate_gate,
)
from norma.matching._calibrate import Observed, fit_gate, observe
from norma.matching._gate import FALLBACK_SIMILARITY, Band, band_lowers, gate_from_dict
from norma.matching._labelled import LabelledMessage
from norma.matching._synthetic import NearMiss
from tests.matching.conftest import AxisEmbedder

# 18 examples whose nearest other text is identical in vector (similarity 1.0) and 6 two-keyword examples whose
# nearest other text is a one-keyword rule text (similarity 1/sqrt(2)); sorted, the default 0.20 quantile of the 24
# best leave-one-out similarities sits at position 23 * 0.20 = 4.6: 0.7071 + 0.6 * (1 - 0.7071) = 0.8828; the
# band's 0.10 quantile at position 2.3, among the five 0.7071 values.
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
EXPECTED = round(1 / math.sqrt(2) + 0.6 * (1 - 1 / math.sqrt(2)), 4)
BAND = round(1 / math.sqrt(2), 4)
SINGLE = 1.0  # the 0.22 quantile alone: position 5.06, among the nineteen 1.0 values


def test_the_rulebook_gate_is_the_quantile_of_the_leave_one_out_similarities(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    gate = matcher.gate()
    assert (EXPECTED, BAND) == (0.8828, 0.7071)
    assert (gate.kind, gate.score, gate.threshold) == ("rulebook", "similarity", EXPECTED)
    assert gate == RulebookGate(EXPECTED, 0.2, probes=24, examples=24, rules=5, margin_band=Band(BAND, 0.09, 0.1))
    assert gate.band == Band(BAND, 0.09, 0.1)
    assert gate.to_dict()["terms"] == {
        "quantile": 0.2,
        "probes": 24,
        "examples": 24,
        "rules": 5,
        "band_quantile": 0.1,
        "band_threshold": BAND,
        "margin": 0.09,
    }
    assert gate.description == (
        "similarity >= 0.8828: the rulebook's own gate, the 0.2 quantile of the best leave-one-out similarity of "
        "24 of its 24 example texts; or >= 0.7071 (the 0.1 quantile) when the best rule is at least 0.09 above "
        "the next"
    )
    single = RuleMatcher(RULES, MatchConfig(gate_quantile=0.22), embedder=axis).gate()
    assert (single.threshold, single.band) == (SINGLE, Band(BAND, 0.09, 0.1))  # 0.1 < 0.22: banded too
    alone = RuleMatcher(RULES, MatchConfig(gate_quantile=0.22, gate_band_quantile=None), embedder=axis).gate()
    assert alone == RulebookGate(SINGLE, 0.22, probes=24, examples=24, rules=5, margin_band=None)
    assert "band_threshold" not in alone.to_dict()["terms"]
    low = RuleMatcher(RULES, MatchConfig(gate_quantile=0.08), embedder=axis).gate()
    assert low.band is None
    assert "band_threshold" not in low.to_dict()["terms"]


def test_the_rulebook_gate_decides_the_match_and_is_named_in_the_result(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    (match,) = matcher.match("refund please")  # similarity 1.0 >= 0.8828
    assert match.rule.id == "refund"
    assert match.explanation.threshold == EXPECTED
    assert match.explanation.threshold_on == "similarity"
    result = matcher.match("refund card", explain=True)  # similarity 1/sqrt(2) to both rules: gated out
    assert result == []
    assert {d.rule_id for d in result.dropped[:2]} == {"refund", "card"}
    assert all(d.reason == "threshold" for d in result.dropped)
    detail = next(d.detail for d in result.dropped if d.rule_id == "refund")
    # two rules tie: the band does not apply, and neither governs the message
    assert detail == f"similarity 0.7071 < threshold {EXPECTED}; confidence 0.10 < 0.7 that it governs the message"
    assert result.gate is not None
    assert result.to_dict()["gate"]["kind"] == "rulebook"
    assert result.to_dict()["gate"]["threshold"] == EXPECTED


def test_the_band_matches_one_rule_that_stands_out_below_the_gate(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    # "refund card hello": delivery's examples "card hello" and "hello refund" at 2/sqrt(6) = 0.8165 (below the
    # gate 0.8828, above the band 0.7071); refund, card and hello at 1/sqrt(3) = 0.5774: a margin of 0.239 >= 0.09
    result = matcher.match("refund card hello", explain=True)
    assert [(m.rule.id, round(m.similarity_score, 4)) for m in result] == [("delivery", 0.8165)]
    assert result[0].explanation.threshold == BAND  # the threshold in force for this message
    dropped = next(d for d in result.dropped if d.rule_id == "refund")
    assert dropped.detail == f"similarity 0.5774 < threshold {BAND}; confidence 0.01 < 0.7 that it governs the message"
    # without the band, or with a margin the best rule does not reach, the gate alone would drop it: it matches
    # because it governs the message (its confidence passes the automatic gate), under the gate's own threshold
    for config in (MatchConfig(gate_band_quantile=None), MatchConfig(gate_margin=0.3)):
        (match,) = matcher.match("refund card hello", config=config)
        assert (match.rule.id, match.enforced, match.explanation.threshold) == ("delivery", True, EXPECTED)


def test_the_band_rule_is_one_rule_for_one_message_and_for_many() -> None:
    """What the matcher applies to a message and a calibration to every labelled message at once: under the gate
    0.875, at or above the band 0.75, at least the margin 0.125 above the next rule (-inf: there is none). Binary
    fractions, so that the edges are exact."""
    cases = [
        (0.8125, 0.5, True),
        (0.75, 0.625, True),  # on the band and exactly the margin above the next
        (0.875, 0.125, False),  # reaches the gate itself: the gate is in force, not the band
        (0.6875, 0.125, False),  # under the band
        (0.8125, 0.75, False),  # not the margin above the next
        (0.8125, -math.inf, True),  # the only rule scored
        (-math.inf, -math.inf, False),  # no rule scored
    ]
    band = (0.75, 0.125)
    assert [band_lowers(best, second, 0.875, band) for best, second, _ in cases] == [c[2] for c in cases]
    best, second = np.array([c[0] for c in cases]), np.array([c[1] for c in cases])
    with np.errstate(invalid="ignore"):  # -inf - -inf
        assert band_lowers(best, second, 0.875, band).tolist() == [c[2] for c in cases]


def test_a_larger_quantile_raises_the_gate(axis: AxisEmbedder) -> None:
    # 0.1 quantile: position 2.3, inside the six 0.7071 values
    gate = RuleMatcher(RULES, MatchConfig(gate_quantile=0.1), embedder=axis).gate()
    assert gate.threshold == round(1 / math.sqrt(2), 4)


def test_the_rulebook_gate_does_not_depend_on_the_order_of_the_rules(
    axis: AxisEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    shuffled = list(RULES)
    random.Random(7).shuffle(shuffled)
    assert RuleMatcher(RULES, embedder=axis).gate() == RuleMatcher(shuffled, embedder=axis).gate()
    monkeypatch.setattr("norma.matching._gate.MAX_PROBES", 10)  # a sample: the same 10 texts whatever the order
    first = RuleMatcher(RULES, embedder=axis).gate()
    second = RuleMatcher(shuffled, embedder=axis).gate()
    assert first == second
    assert isinstance(first, RulebookGate)
    assert (first.probes, first.examples) == (10, 24)


def test_a_rulebook_with_too_few_examples_gets_the_fixed_fallback(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher([Rule(id="refund", condition_text="refund", examples=["refund now"])], embedder=axis)
    gate = matcher.gate()
    assert (gate.kind, gate.score, gate.threshold) == ("fixed", "similarity", FALLBACK_SIMILARITY)
    assert gate == FixedGate(FALLBACK_SIMILARITY, "similarity", examples=1)
    assert gate.to_dict()["terms"] == {"source": "fallback", "examples": 1, "needed": 20}
    assert gate.description == (
        "similarity >= 0.435 (fallback: 1 example texts, fewer than the 20 needed to measure the rulebook)"
    )


def test_the_gate_is_measured_again_after_an_update(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    assert matcher.gate().threshold == EXPECTED
    matcher.remove(["delivery"])  # 18 examples left: below 20, the fallback
    assert matcher.gate().kind == "fixed"


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
    assert (best.f1, best.target, best.goal) == (pytest.approx(0.8), "best_f1", None)
    assert best.band is None
    assert "band_threshold" not in best.to_dict()["terms"]
    # a match returns at most max_matched rules: with 1, "refund card" never gets both of its rules
    with pytest.raises(InvalidInputError, match=r"no threshold reaches recall 1 on these messages \(best recall 0\.75"):
        calibrate_gate(matcher, LABELLED, target_recall=1.0, config=MatchConfig(max_matched=1))


# The matcher's gate on PLAIN is the fixed fallback 0.435 (no examples, no band). Ungated: "refund" 1.0 to refund;
# "card hello weather" 0.5774 to card, hello and weather (all three expected); "refund card" 0.7071 to refund and
# card; "card delivery hello weather" 0.5 to four rules.
BALANCING = [
    ("refund", ["refund"]),
    ("card hello weather", ["card", "hello", "weather"]),
    ("refund card", []),
    ("card delivery hello weather", []),
]


def test_a_balanced_calibration_moves_the_gate_by_the_shrunk_best_shift(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(PLAIN, embedder=axis)
    # min(acc@1, rejection) by threshold t: t <= 0.5: min(1, 0) = 0; 0.5 < t <= 0.5774: min(1, 0.5); up to 0.7071:
    # min(0.5, 0.5); up to 1: min(0.5, 1): 0.5 from 0.5 up. The smallest shift of 0.435
    # on the 0.001 grid that passes 0.5 is +0.066 (t 0.501). Two messages expect none: weight 2 / (2 + 3) = 0.4.
    gate = calibrate_gate(matcher, BALANCING)
    assert gate.kind == "calibrated"
    assert isinstance(gate, CalibratedGate)
    assert (gate.fitted_shift, gate.weight, gate.expecting_none) == (0.066, 0.4, 2)
    assert gate.shift == round(0.066 * 0.4, 4) == 0.0264
    assert gate.threshold == 0.4614
    assert (gate.base_kind, gate.base_threshold) == ("fixed", FALLBACK_SIMILARITY)
    assert gate.to_dict()["terms"]["base"] == {"kind": "fixed", "threshold": FALLBACK_SIMILARITY}
    # at 0.4614 both in-scope messages reach a right rule, and both out-of-scope ones match something
    assert (gate.acc_at_1, gate.rejection) == (1.0, 0.0)
    # returned rules: refund (TP); card, hello, weather (3 TP); refund, card (2 FP); four rules (4 FP)
    assert (gate.precision, gate.recall) == (round(4 / 10, 6), 1.0)
    assert (gate.target, gate.messages, gate.near_misses, gate.goal) == ("balanced", 4, 0, None)
    assert (gate.rules, gate.rules_version, gate.model) == (5, 0, axis.model_id)
    unshrunk = calibrate_gate(matcher, BALANCING, prior=0)
    assert (unshrunk.threshold, unshrunk.weight) == (0.501, 1.0)
    assert (unshrunk.acc_at_1, unshrunk.rejection) == (1.0, 0.5)  # "refund card" still matches
    assert calibrate_gate(matcher, BALANCING, prior=1e9).threshold == FALLBACK_SIMILARITY
    assert gate.description == (
        "similarity >= 0.4614: calibrated on 4 labelled messages at tenant version 0: the fixed gate 0.4350 moved by "
        "+0.0264 (the best shift for min(acc@1, rejection) on them, +0.066, weighted 0.40 for 2 that expect no rule "
        "against a prior of 3; acc@1 1.000, rejection 0.000)"
        f"; confidence refitted: {gate.refit.words}"  # its words: tests/matching/test_confidence_refit.py
    )
    assert gate_from_dict(gate.to_dict()) == gate


def test_a_balanced_calibration_moves_the_margin_band_with_the_gate(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)  # gate 0.8828, band 0.7071, margin 0.09 (above)
    # "card weather hello" expects nothing: delivery's "card weather" and "card hello" at 2/sqrt(6) = 0.8165, every
    # other rule 0.5774 (margin 0.239): the band lets it match until the band passes 0.8165, 0.7071 + 0.110 = 0.8171
    # (+0.109 gives 0.8161). "refund" (1.0) stays matched: the gate 0.8828 + 0.110 = 0.9928.
    labelled = [("refund", ["refund"]), ("card weather hello", [])]
    # delivery governs "card weather hello" (confidence 0.99): it passes the automatic gate at any shift, so the
    # calibration does not move the gate for it
    governed = calibrate_gate(matcher, labelled, prior=0)
    assert (governed.fitted_shift, governed.threshold, governed.rejection) == (0.0, EXPECTED, 0.0)
    # the same messages without confidences (nothing governs): the gate alone decides, and the band moves with it
    items = [LabelledMessage(message=m, expected=tuple(e)) for m, e in labelled]
    bare = [Observed(o.candidates, o.expected, o.near_miss) for o in observe(matcher, items)]
    gate = fit_gate(bare, matcher.measured_gate(), prior=0)
    assert (gate.fitted_shift, gate.threshold) == (0.11, 0.9928)
    assert gate.band == Band(0.8171, 0.09)  # moved: no longer a rulebook quantile
    assert (gate.to_dict()["terms"]["band_threshold"], gate.to_dict()["terms"]["margin"]) == (0.8171, 0.09)
    assert "band_quantile" not in gate.to_dict()["terms"]
    assert (gate.base_kind, gate.base_threshold) == ("rulebook", EXPECTED)
    assert gate.to_dict()["terms"]["base"] == {"kind": "rulebook", "threshold": EXPECTED}
    assert gate.description.endswith("; or >= 0.8171 when the best rule is at least 0.09 above the next")
    # prior 3, one message expects none: 0.11 / 4 = 0.0275 -> gate 0.9103, band 0.7346
    shrunk = fit_gate(bare, matcher.measured_gate())
    assert shrunk.band is not None
    assert (shrunk.threshold, shrunk.band.threshold, shrunk.prior) == (0.9103, 0.7346, 3.0)
    # the matcher applies the calibrated band: "refund card hello" (delivery 0.8165, margin 0.239)
    matcher.set_gate(shrunk)
    (match,) = matcher.match("refund card hello")
    assert (match.rule.id, match.explanation.threshold) == ("delivery", 0.7346)
    matcher.set_gate(gate)
    (match,) = matcher.match("refund card hello")  # under the band of 0.8171: in because it governs the message
    assert (match.rule.id, match.enforced, match.explanation.threshold) == ("delivery", True, 0.9928)
    assert matcher.measured_gate().kind == "rulebook"  # what a calibration moves, whatever is set
    assert gate_from_dict(gate.to_dict()) == gate
    # a near miss of delivery says the same as the message that expects nothing
    near = [NearMiss("card weather hello", "delivery")]
    missed_bare = [Observed(o.candidates, o.expected, o.near_miss) for o in observe(matcher, items[:1], near)]
    missed = fit_gate(missed_bare, matcher.measured_gate(), prior=0)
    assert (missed.threshold, missed.near_misses, missed.expecting_none) == (0.9928, 1, 1)


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
    assert matcher.gate().kind == "fixed"  # 0 examples: back to the rulebook's (fallback) gate


def test_a_gate_calibrated_with_another_model_is_ignored(axis: AxisEmbedder, caplog: pytest.LogCaptureFixture) -> None:
    gate = calibrate_gate(RuleMatcher(PLAIN, embedder=axis), LABELLED, target_precision=0.9)
    assert gate.model == axis.model_id
    other = dataclasses.replace(gate, model="encoder@0123456789ab")
    matcher = RuleMatcher(PLAIN, embedder=axis)
    with caplog.at_level("WARNING", logger="norma.matching._matcher"):
        matcher.set_gate(other)
    assert matcher.given_gate is None
    assert matcher.gate() == FixedGate(FALLBACK_SIMILARITY, examples=0)  # the rulebook's own, not the other model's
    assert "calibrated with model encoder@0123456789ab" in caplog.text
    with caplog.at_level("WARNING", logger="norma.matching._matcher"):
        given = RuleMatcher(PLAIN, embedder=axis, gate=other)  # given at construction: ignored too
    assert given.gate().kind == "fixed"
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
    with pytest.raises(InvalidInputError, match="prior must be a finite number"):
        calibrate_gate(matcher, BALANCING, prior=-1)
    with pytest.raises(InvalidInputError, match="no labelled messages"):
        calibrate_gate(matcher, [])
    with pytest.raises(InvalidInputError, match="in \\(0, 1\\]"):
        calibrate_gate(matcher, LABELLED, target_precision=1.5)
    with pytest.raises(InvalidInputError, match="no threshold reaches precision"):
        calibrate_gate(matcher, [("hello weather", [])], target_precision=0.5)
    for wrong in (NoGate(), AdaptedGate(0.5, 0.22, 24), {"kind": "calibrated"}, 0.5):
        with pytest.raises(InvalidInputError, match="set_gate takes a calibrated, fixed or rulebook gate"):
            matcher.set_gate(wrong)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="stored gate is malformed"):
        gate_from_dict({"kind": "rulebook", "score": "similarity", "threshold": 0.5})  # no probes, no examples
    stored = {"kind": "calibrated", "score": "similarity", "threshold": 0.5}
    for band, margin in ((0.4, None), ("0.4", 0.09), (0.6, 0.09), (0.4, -0.1), (float("nan"), 0.09)):
        with pytest.raises(InvalidInputError, match="stored gate is malformed: band"):
            gate_from_dict({**stored, "terms": {"band_threshold": band, "margin": margin}})
    banded = gate_from_dict({**stored, "terms": {"band_threshold": 0.4, "margin": 0.09}})
    assert banded == CalibratedGate(0.5, "best_f1", messages=0, margin_band=Band(0.4, 0.09))
    assert banded.to_dict()["terms"] == {
        "target": "best_f1", "messages": 0, "near_misses": 0, "band_threshold": 0.4, "margin": 0.09
    }  # fmt: skip


def test_a_large_rulebook_is_measured_on_a_bounded_sample() -> None:

    from norma.matching._gate import _BUDGET

    rng = np.random.default_rng(3)
    rules = [
        Rule(id=f"r{i}", condition_text=f"rule {i}", examples=[f"e {i} {k}" for k in range(60)]) for i in range(300)
    ]
    vectors = {}
    for rule in rules:
        matrix = rng.standard_normal((61, 8)).astype(np.float32)
        vectors[rule.id] = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    gate = RuleMatcher(rules, vectors=vectors, embedder=AxisEmbedder()).gate()
    # 300 rules x 61 texts = 18,300 rule vectors: the budget allows 16,777,216 // 18,300 = 916 probes of 2,048
    assert _BUDGET // 18_300 == 916
    assert isinstance(gate, RulebookGate)
    assert (gate.kind, gate.probes, gate.examples, gate.rules) == ("rulebook", 916, 18_000, 300)


def test_a_given_rulebook_gate_is_used_until_the_rules_change(axis: AxisEmbedder) -> None:
    measured = RuleMatcher(RULES, embedder=axis).gate()
    kept = gate_from_dict(measured.to_dict())  # as a cache on disk gives it back
    assert kept == measured
    assert isinstance(kept, RulebookGate)
    forged = dataclasses.replace(kept, threshold=0.5)
    matcher = RuleMatcher(RULES, embedder=axis, gate=forged)
    assert matcher.given_gate is forged
    assert matcher.gate() is forged  # used as given: nothing measured
    assert matcher.measured_gate() is forged  # it is the measurement of these rules
    assert matcher.gate(MatchConfig(gate_quantile=0.3)).threshold != 0.5  # measured another way: measured again
    assert matcher.gate(MatchConfig(gate_band_quantile=None)).threshold == EXPECTED  # another band: measured
    assert matcher.gate() is forged
    matcher.remove(["weather"])  # the rules changed: measured again
    assert matcher.gate() == dataclasses.replace(measured, rules=4)
    matcher.upsert([Rule(id="weather", condition_text="weather")])  # the same rules again, but a new version
    assert matcher.gate() == measured
    late = RuleMatcher(RULES, embedder=axis)
    late.upsert([Rule(id="extra", condition_text="hello weather")])
    late.set_gate(forged)  # given now: a measurement of today's rules, as the caller says
    assert late.gate() is forged
    late.remove(["extra"])
    assert late.gate().threshold == EXPECTED


def test_the_gate_is_resolved_once_per_rules_version(axis: AxisEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    import norma.matching._gate as gate_module

    measured: list[int] = []
    real = gate_module.rulebook_gate

    def counting(index: object, cfg: MatchConfig) -> object:
        measured.append(1)
        return real(index, cfg)  # type: ignore[arg-type]

    monkeypatch.setattr(gate_module, "rulebook_gate", counting)
    matcher = RuleMatcher(RULES, embedder=axis)
    first = matcher.gate()
    assert matcher.gate() is first  # the same object: measured once
    assert matcher.match("refund please").gate is first
    assert [r.gate for r in matcher.match_many(["refund", "card", "nothing at all"])] == [first] * 3
    assert all(r.gate is first for r in matcher.match_many(["refund", "card"]))
    assert len(measured) == 1
    matcher.upsert([Rule(id="extra", condition_text="weather hello")])  # a new version: resolved again
    second = matcher.gate()
    assert second is not first
    assert matcher.gate() is second
    assert len(measured) == 2
    assert second == dataclasses.replace(first, rules=6)  # no examples added: the same measurement on 6 rules
    matcher.upsert([])  # nothing changed: the same version, the same gate
    assert matcher.gate() is second
    assert len(measured) == 2


def test_a_calibrated_gate_comes_before_a_configured_quantile(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(PLAIN, embedder=axis)
    calibrated = calibrate_gate(matcher, LABELLED, target_precision=0.9)
    matcher.set_gate(calibrated)
    assert matcher.gate(MatchConfig(gate_quantile=0.1)) is calibrated
    assert matcher.gate(MatchConfig(threshold=0.9)) == FixedGate(0.9)  # a numeric threshold is not automatic
    assert matcher.gate(MatchConfig(threshold=None)) == NoGate()


def test_a_given_fixed_gate_is_used_as_is(axis: AxisEmbedder) -> None:
    fixed = FixedGate(0.6)
    matcher = RuleMatcher(RULES, embedder=axis, gate=fixed)
    assert matcher.gate() is fixed
    assert matcher.measured_gate().kind == "rulebook"  # what a calibration would move
    result = matcher.match("refund card")  # similarity 0.7071 >= 0.6 for both rules
    assert {m.rule.id for m in result} == {"refund", "card"}
    assert result.gate is fixed
    matcher.remove(["delivery"])
    assert matcher.gate() is fixed


# -- an adapted encoder's held-out similarities ----------------------------------------------------------------------

STORED = tuple(round(0.80 + k / 100, 2) for k in range(20))  # 0.80, 0.81, ..., 0.99


def _held_out(trained: list[str] | None) -> HeldOut:
    if trained is None:
        return HeldOut(STORED, rules=2)
    sketch = frozenset(zlib.crc32(text.encode("utf-8")) for text in trained)
    return HeldOut(STORED, rules=2, trained_texts=len(sketch), sketch=sketch)


def test_the_adapted_gate_is_the_quantile_of_the_held_out_similarities(axis: AxisEmbedder) -> None:
    rules = [Rule(id="o", condition_text="refund", examples=["refund card", "refund hello"])]
    # no sketch: the stored similarities alone; the 0.18 quantile of 20 values sits at position 19 * 0.18 = 3.42,
    # between 0.83 and 0.84
    matcher = RuleMatcher(rules, embedder=axis, gate=_held_out(None))
    gate = matcher.gate()
    assert gate == AdaptedGate(0.8342, 0.18, probes=20, rules=2)
    assert gate.description == (
        "similarity >= 0.8342: the adapted encoder's gate, the 0.18 quantile of the best similarity of 20 examples "
        "held out while adapting it (cross-fitted on 2 rules)"
    )
    assert gate.to_dict()["terms"] == {"quantile": 0.18, "probes": 20, "rules": 2}
    assert matcher.gate(MatchConfig(gate_quantile=0.5)).threshold == 0.895  # position 9.5: (0.89 + 0.90) / 2
    assert matcher.measured_gate() == gate
    # every text trained on: the same threshold, and a share of 1
    everything = ["refund", "refund card", "refund hello"]
    trained = RuleMatcher(rules, embedder=axis, gate=_held_out(everything)).gate()
    assert trained == AdaptedGate(0.8342, 0.18, probes=20, rules=2, trained_share=1.0)
    assert "rule texts were in its training" not in trained.description


def test_the_examples_new_to_an_adapted_encoder_are_probed_like_the_rulebooks(axis: AxisEmbedder) -> None:
    """An old rule's new example, a new rule's examples (one of them also an old rule's trained example) are new;
    the old rule's trained example is seen. Each new one's best cosine to every other text, identical ones left out;
    the quantile over them (weight 1 each: 3 new examples, 3 probes) and the stored 20 (weight 1 / 20 each: they
    stand for the 1 example seen)."""
    old = Rule(id="o", condition_text="refund", examples=["refund card", "refund hello"])
    new = Rule(id="n", condition_text="weather", examples=["refund card", "weather"])
    held = _held_out(["refund", "refund card"])
    matcher = RuleMatcher([old], embedder=axis, gate=held)
    # "refund hello" is new (best other text "refund", 1/sqrt(2), weight 1), "refund card" seen: the stored 20 weigh
    # 1 / 20 each; the 0.18 quantile of a total weight of 2 (0.36) is reached by 0.7071 already
    assert matcher.gate() == AdaptedGate(round(1 / math.sqrt(2), 4), 0.18, 20, 2, unseen_probes=1, unseen_examples=1,
                                         seen_examples=1, trained_share=round(2 / 3, 3))  # fmt: skip
    matcher.upsert([new])
    # "refund hello": "refund" at 1/sqrt(2); "refund card" (n's): "refund" at 1/sqrt(2), both copies of itself left
    # out; "weather" (n's): its identical rule text left out, nothing else shares an axis: 0. Sorted with the
    # stored: 0 (1), 0.7071 (1), 0.7071 (1), 0.80 (0.05), ...; total 3 + 20 * 0.05 = 4; the 0.89 quantile needs a
    # cumulative weight of 3.56: 3 + 12 * 0.05 = 3.6, the 12th stored value, 0.91. The 0.5 quantile (2.0): 0.7071.
    gate = matcher.gate(MatchConfig(gate_quantile=0.89))
    # texts: refund, refund card (trained); refund hello, weather (new): half of them
    assert gate == AdaptedGate(0.91, 0.89, 20, 2, unseen_probes=3, unseen_examples=3, seen_examples=1,
                               trained_share=0.5)  # fmt: skip
    assert matcher.gate(MatchConfig(gate_quantile=0.5)).threshold == round(1 / math.sqrt(2), 4)
    assert gate.to_dict()["terms"] == {
        "quantile": 0.89, "probes": 20, "rules": 2, "unseen_probes": 3, "unseen_examples": 3, "seen_examples": 1,
        "trained_share": 0.5,
    }  # fmt: skip
    assert gate.description == (
        "similarity >= 0.9100: the adapted encoder's gate, the 0.89 quantile of the best similarity of 20 examples "
        "held out while adapting it (cross-fitted on 2 rules) and of 3 of the 3 examples added since (weighted by "
        "their share of the examples); 50% of the rule texts were in its training (adapting again may rank the new "
        "rules better)"
    )
    matcher.remove(["n"])
    assert matcher.gate(MatchConfig(gate_quantile=0.89)).unseen_probes == 1  # "refund hello" only


def test_a_calibrated_gate_comes_before_the_adapted_one(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis, gate=_held_out(None))
    assert matcher.gate().kind == "adapted"
    calibrated = CalibratedGate(0.5, "best_f1", messages=3, model=axis.model_id)
    matcher.set_gate(calibrated)
    assert matcher.gate() is calibrated
    matcher.set_gate(None)  # nothing given: the rulebook's own gate
    assert matcher.gate().kind == "rulebook"


# -- every kind read back --------------------------------------------------------------------------------------------

EVERY_KIND = [
    NoGate(),
    FixedGate(0.5),
    FixedGate(0.5, "final"),
    FixedGate(FALLBACK_SIMILARITY, "similarity", examples=7),
    RulebookGate(0.8594, 0.24, probes=24, examples=24, rules=5, margin_band=Band(0.7071, 0.09, 0.12)),
    RulebookGate(0.7071, 0.1, probes=10, examples=24, rules=5),
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
        0.8869,
        "balanced",
        messages=2,
        margin_band=Band(0.7346, 0.09),
        base_kind="rulebook",
        base_threshold=0.8594,
        shift=0.0275,
        fitted_shift=0.11,
        weight=0.25,
        prior=3.0,
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
    AdaptedGate(0.8418, 0.22, probes=20, rules=2),
    AdaptedGate(0.8418, 0.22, probes=20),
    AdaptedGate(0.91, 0.89, 20, 2, unseen_probes=3, unseen_examples=3, seen_examples=1, trained_share=0.5),
]


@pytest.mark.parametrize("gate", EVERY_KIND, ids=lambda g: g.kind)
def test_every_gate_kind_reads_back_equal(gate: object) -> None:
    import json

    assert isinstance(gate, (NoGate, FixedGate, RulebookGate, CalibratedGate, AdaptedGate))
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


GOOD = {"kind": "rulebook", "score": "similarity", "threshold": 0.8,
        "terms": {"quantile": 0.24, "probes": 24, "examples": 24, "rules": 5}}  # fmt: skip


@pytest.mark.parametrize(
    "data",
    [
        {**GOOD, "kind": "magic"},
        {**GOOD, "kind": None},
        {**GOOD, "threshold": float("nan")},
        {**GOOD, "threshold": float("inf")},
        {**GOOD, "threshold": "0.8"},
        {**GOOD, "threshold": True},
        {**GOOD, "threshold": None},
        {**GOOD, "terms": {**GOOD["terms"], "band_threshold": 0.9, "margin": 0.09}},  # band above the threshold
        {**GOOD, "terms": {**GOOD["terms"], "band_threshold": 0.7, "margin": float("nan")}},
        {**GOOD, "terms": {**GOOD["terms"], "quantile": 1.5}},
        {**GOOD, "terms": {"quantile": 0.24}},  # no probes
        {**GOOD, "score": "final"},  # a rulebook gate compares the similarity
        {"kind": "fixed", "score": "hybrid", "threshold": 0.5},
        {"kind": "fixed", "score": "similarity", "threshold": 0.5, "terms": {"source": "fallback", "examples": "7"}},
        {"kind": "calibrated", "score": "similarity", "threshold": 0.5, "terms": {"target": "magic"}},
        {"kind": "calibrated", "score": "similarity", "threshold": 0.5, "terms": {"precision": "high"}},
        {"kind": "calibrated", "score": "similarity", "threshold": 0.5, "terms": {"base": [1]}},
        {"kind": "adapted", "score": "similarity", "threshold": 0.5, "terms": {"quantile": 0.22}},
        {"score": "similarity", "threshold": 0.5},
        {"kind": "fixed", "threshold": 0.5},
        ["kind", "fixed"],
        None,
    ],
)
def test_a_malformed_gate_is_refused(data: object) -> None:
    with pytest.raises(InvalidInputError, match="stored gate is malformed"):
        gate_from_dict(data)  # type: ignore[arg-type]


def test_weighted_quantile_is_the_smallest_value_reaching_the_share() -> None:
    from norma.matching._gate import _weighted_quantile

    values = np.array([4.0, 1.0, 3.0, 2.0])
    assert _weighted_quantile(values, np.ones(4), 0.5) == 2.0  # cumulative 1, 2, 3, 4: 2 reaches half
    assert _weighted_quantile(values, np.ones(4), 0.22) == 1.0
    assert _weighted_quantile(values, np.array([1.0, 3.0, 1.0, 1.0]), 0.5) == 1.0  # value 1 weighs half
    assert _weighted_quantile(values, np.array([1.0, 0.0, 1.0, 1.0]), 0.2) == 2.0  # a zero weight never reaches
    assert _weighted_quantile(values, np.ones(4), 1.0) == 4.0


def _sketched(texts: list[str], k: int) -> HeldOut:
    keys = sorted({zlib.crc32(t.encode("utf-8")) for t in texts})
    return HeldOut(STORED, trained_texts=len(set(texts)), sketch=frozenset(keys[:k]))


def _share(axis: AxisEmbedder, held: HeldOut, texts: list[str]) -> float | None:
    rules = [Rule(id=f"r{i}", condition_text=text) for i, text in enumerate(texts)]
    gate = RuleMatcher(rules, embedder=axis, gate=held).gate()
    assert isinstance(gate, AdaptedGate)
    return gate.trained_share


def test_the_trained_share_is_exact_on_a_whole_sketch_and_sampled_on_a_partial_one(axis: AxisEmbedder) -> None:
    old = [f"old text {i}" for i in range(100)]
    new = [f"new text {i}" for i in range(100)]
    whole, partial = _sketched(old, 4096), _sketched(old, 10)
    assert _share(axis, whole, old[:50] + new[:50]) == 0.5
    rules = [Rule(id="a", condition_text=old[0], examples=old[1:10]), Rule(id="b", condition_text=old[0])]
    shared = RuleMatcher([*rules, Rule(id="c", condition_text=new[0])], embedder=axis, gate=whole).gate()
    assert shared.trained_share == round(10 / 11, 3)  # type: ignore[attr-defined]  # duplicates count once
    assert _share(axis, whole, new) == 0.0
    assert _share(axis, partial, old) == 1.0  # every text in the sketch's range is one of its keys
    assert _share(axis, partial, new) == 0.0
    assert _share(axis, whole, []) is None
    assert _share(axis, HeldOut(STORED, trained_texts=3), old) is None  # adapted before the sketch was kept
    lookup = whole.trained()
    assert lookup is not None
    assert [lookup(t) for t in (old[0], new[0])] == [True, False]
    sampled = partial.trained()
    assert sampled is not None
    kept = sorted(old, key=lambda t: zlib.crc32(t.encode("utf-8")))
    assert sampled(kept[0]) is True
    assert sampled(kept[-1]) is None  # beyond the sketch's range: undecided
    assert HeldOut(STORED, trained_texts=3).trained() is None
