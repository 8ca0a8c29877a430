"""The automatic gate (``threshold="auto"``): measured on the rulebook, calibrated from labelled messages, and
named with every term in each result. Expected values are computed by hand with the axis embedder."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from norma.errors import InvalidInputError
from norma.matching import (
    FALLBACK_SIMILARITY,
    AppliedGate,
    MatchConfig,
    Rule,
    RuleMatcher,
    calibrate_gate,
    gate_from_dict,
)
from norma.matching._gate import unseen_probes
from tests.matching.conftest import AxisEmbedder

# 18 examples whose nearest other text is identical in vector (similarity 1.0) and 6 two-keyword examples whose
# nearest other text is a one-keyword rule text (similarity 1/sqrt(2)); sorted, the default 0.24 quantile of the 24
# best leave-one-out similarities sits at position 23 * 0.24 = 5.52: 0.7071 + 0.52 * (1 - 0.7071) = 0.8594; the
# band's 0.12 quantile at position 2.76, among the six 0.7071 values.
TWO_KEYWORDS = [
    "delivery hello",
    "delivery weather",
    "refund weather",
    "card weather",
    "hello refund",
    "card hello",
]
RULES = [
    Rule(id="refund", condition_text="refund", examples=[f"refund {i}" for i in range(1, 10)]),
    Rule(id="card", condition_text="card", examples=[f"card {i}" for i in range(1, 10)]),
    Rule(id="hello", condition_text="hello"),
    Rule(id="weather", condition_text="weather"),
    Rule(id="delivery", condition_text="delivery", examples=TWO_KEYWORDS),
]
EXPECTED = round(1 / math.sqrt(2) + 0.52 * (1 - 1 / math.sqrt(2)), 4)
BAND = round(1 / math.sqrt(2), 4)
SINGLE = round(1 / math.sqrt(2) + 0.06 * (1 - 1 / math.sqrt(2)), 4)  # the 0.22 quantile alone: position 5.06


def test_the_rulebook_gate_is_the_quantile_of_the_leave_one_out_similarities(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    gate = matcher.gate()
    assert (EXPECTED, BAND) == (0.8594, 0.7071)
    assert (gate.kind, gate.score, gate.threshold) == ("rulebook", "similarity", EXPECTED)
    assert gate.terms == {
        "quantile": 0.24,
        "probes": 24,
        "max_probes": 2048,
        "examples": 24,
        "rules": 5,
        "median_probe_similarity": 1.0,
        "band_quantile": 0.12,
        "band_threshold": BAND,
        "margin": 0.09,
    }
    assert gate.description == (
        "similarity >= 0.8594: the rulebook's own gate, the 0.24 quantile of the best leave-one-out similarity of "
        "24 of its 24 example texts; or >= 0.7071 (the 0.12 quantile) when the best rule is at least 0.09 above "
        "the next"
    )
    single = RuleMatcher(RULES, MatchConfig(gate_quantile=0.22), embedder=axis).gate()
    assert (single.threshold, "band_threshold" in single.terms) == (SINGLE, True)  # 0.12 < 0.22: banded too
    alone = RuleMatcher(RULES, MatchConfig(gate_quantile=0.22, gate_band_quantile=None), embedder=axis).gate()
    assert (alone.threshold, "band_threshold" in alone.terms, alone.terms["quantile"]) == (SINGLE, False, 0.22)
    assert "band_threshold" not in RuleMatcher(RULES, MatchConfig(gate_quantile=0.1), embedder=axis).gate().terms


def test_the_rulebook_gate_decides_the_match_and_is_named_in_the_result(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    (match,) = matcher.match("refund please")  # similarity 1.0 >= 0.7247
    assert match.rule.id == "refund"
    assert match.explanation.threshold == EXPECTED
    assert match.explanation.threshold_on == "similarity"
    result = matcher.match("refund card", explain=True)  # similarity 1/sqrt(2) to both rules: gated out
    assert result == []
    assert {d.rule_id for d in result.dropped[:2]} == {"refund", "card"}
    assert all(d.reason == "threshold" for d in result.dropped)
    detail = next(d.detail for d in result.dropped if d.rule_id == "refund")
    assert detail == f"similarity 0.7071 < threshold {EXPECTED}"  # two rules tie: the band does not apply
    assert result.gate is not None
    assert result.to_dict()["gate"]["kind"] == "rulebook"
    assert result.to_dict()["gate"]["threshold"] == EXPECTED


def test_the_band_matches_one_rule_that_stands_out_below_the_gate(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    # "refund card hello": delivery's examples "card hello" and "hello refund" at 2/sqrt(6) = 0.8165 (below the
    # gate 0.8594, above the band 0.7071); refund, card and hello at 1/sqrt(3) = 0.5774: a margin of 0.239 >= 0.09
    result = matcher.match("refund card hello", explain=True)
    assert [(m.rule.id, round(m.similarity_score, 4)) for m in result] == [("delivery", 0.8165)]
    assert result[0].explanation.threshold == BAND  # the threshold in force for this message
    dropped = next(d for d in result.dropped if d.rule_id == "refund")
    assert dropped.detail == f"similarity 0.5774 < threshold {BAND}"
    # without the band the same message matches nothing
    assert matcher.match("refund card hello", config=MatchConfig(gate_band_quantile=None)) == []
    # a margin the best rule does not reach: no band
    assert matcher.match("refund card hello", config=MatchConfig(gate_margin=0.3)) == []


def test_a_larger_quantile_raises_the_gate(axis: AxisEmbedder) -> None:
    # 0.1 quantile: position 2.3, inside the six 0.7071 values
    gate = RuleMatcher(RULES, MatchConfig(gate_quantile=0.1), embedder=axis).gate()
    assert gate.threshold == round(1 / math.sqrt(2), 4)


def test_the_rulebook_gate_does_not_depend_on_the_order_of_the_rules(axis: AxisEmbedder) -> None:
    shuffled = list(RULES)
    random.Random(7).shuffle(shuffled)
    config = MatchConfig(gate_probes=10)  # a sample: the same 10 texts whatever the order
    first = RuleMatcher(RULES, config, embedder=axis).gate()
    second = RuleMatcher(shuffled, config, embedder=axis).gate()
    assert first == second
    assert first.terms["probes"] == 10


def test_a_rulebook_with_too_few_examples_gets_the_fixed_fallback(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher([Rule(id="refund", condition_text="refund", examples=["refund now"])], embedder=axis)
    gate = matcher.gate()
    assert (gate.kind, gate.score, gate.threshold) == ("fixed", "similarity", FALLBACK_SIMILARITY)
    assert gate.terms["examples"] == 1
    assert gate.terms["needed"] == 20


def test_the_gate_is_measured_again_after_an_update(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    assert matcher.gate().threshold == EXPECTED
    matcher.remove(["delivery"])  # 18 examples left: below 20, the fallback
    assert matcher.gate().kind == "fixed"


def test_a_numeric_threshold_and_none_are_named_too(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    assert matcher.gate(MatchConfig(threshold=None)).to_dict() == {
        "kind": "none",
        "score": "hybrid_or_similarity",
        "threshold": None,
        "terms": {},
        "description": "no gate: every scored rule can match (threshold=None)",
    }
    fixed = matcher.gate(MatchConfig(threshold=0.5))
    assert fixed.description == "max(hybrid, similarity - slack 0.15) >= 0.5 (threshold set in the config)"
    assert matcher.gate(MatchConfig(threshold=0.5, threshold_on="final")).description == (
        "final >= 0.5 (threshold set in the config)"
    )


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
    assert (precise.terms["precision"], precise.terms["recall"]) == (1.0, 0.5)
    assert precise.terms["target"] == "precision >= 0.9"
    assert precise.terms["messages"] == 4
    recalled = calibrate_gate(matcher, LABELLED, target_recall=1.0)
    assert recalled.threshold == pytest.approx(1 / math.sqrt(2), abs=1e-6)
    assert recalled.terms["precision"] == pytest.approx(4 / 6, abs=1e-6)
    # F1: 2/3 at 1.0 (p 1, r .5) against 0.8 at 0.7071 (p .667, r 1): the lower threshold
    best = calibrate_gate(matcher, LABELLED, best_f1=True)
    assert best.threshold == pytest.approx(1 / math.sqrt(2), abs=1e-6)
    assert (best.terms["f1"], best.terms["target"]) == (pytest.approx(0.8), "best F1")
    assert "band_threshold" not in best.terms
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
    assert (gate.terms["fitted_shift"], gate.terms["weight"], gate.terms["expecting_none"]) == (0.066, 0.4, 2)
    assert gate.terms["shift"] == round(0.066 * 0.4, 4) == 0.0264
    assert gate.threshold == 0.4614
    assert gate.terms["base"] == {"kind": "fixed", "threshold": FALLBACK_SIMILARITY}
    # at 0.4614 both in-scope messages reach a right rule, and both out-of-scope ones match something
    assert (gate.terms["acc_at_1"], gate.terms["rejection"]) == (1.0, 0.0)
    # returned rules: refund (TP); card, hello, weather (3 TP); refund, card (2 FP); four rules (4 FP)
    assert (gate.terms["precision"], gate.terms["recall"]) == (round(4 / 10, 6), 1.0)
    assert (gate.terms["target"], gate.terms["messages"], gate.terms["near_misses"]) == ("balanced", 4, 0)
    unshrunk = calibrate_gate(matcher, BALANCING, prior=0)
    assert (unshrunk.threshold, unshrunk.terms["weight"]) == (0.501, 1.0)
    assert (unshrunk.terms["acc_at_1"], unshrunk.terms["rejection"]) == (1.0, 0.5)  # "refund card" still matches
    assert calibrate_gate(matcher, BALANCING, prior=1e9).threshold == FALLBACK_SIMILARITY
    assert gate.description == (
        "similarity >= 0.4614: calibrated on 4 labelled messages at tenant version 0: the fixed gate 0.4350 moved by "
        "+0.0264 (the best shift for min(acc@1, rejection) on them, +0.066, weighted 0.40 for 2 that expect no rule "
        "against a prior of 3; acc@1 1.000, rejection 0.000)"
    )
    assert gate_from_dict(gate.to_dict()) == gate


def test_a_balanced_calibration_moves_the_margin_band_with_the_gate(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)  # gate 0.8594, band 0.7071, margin 0.09 (above)
    # "card weather hello" expects nothing: delivery's "card weather" and "card hello" at 2/sqrt(6) = 0.8165, every
    # other rule 0.5774 (margin 0.239): the band lets it match until the band passes 0.8165, 0.7071 + 0.110 = 0.8171
    # (+0.109 gives 0.8161). "refund" (1.0) stays matched: the gate 0.8594 + 0.110 = 0.9694.
    labelled = [("refund", ["refund"]), ("card weather hello", [])]
    gate = calibrate_gate(matcher, labelled, prior=0)
    assert (gate.terms["fitted_shift"], gate.threshold) == (0.11, 0.9694)
    assert (gate.terms["band_threshold"], gate.terms["margin"]) == (0.8171, 0.09)
    assert gate.terms["base"] == {
        "kind": "rulebook", "threshold": EXPECTED, "quantile": 0.24, "band_threshold": BAND, "margin": 0.09
    }  # fmt: skip
    assert gate.description.endswith("; or >= 0.8171 when the best rule is at least 0.09 above the next")
    # prior 3, one message expects none: 0.11 / 4 = 0.0275 -> gate 0.8869, band 0.7346
    shrunk = calibrate_gate(matcher, labelled)
    assert (shrunk.threshold, shrunk.terms["band_threshold"], shrunk.terms["prior"]) == (0.8869, 0.7346, 3.0)
    # the matcher applies the calibrated band: "refund card hello" (delivery 0.8165, margin 0.239)
    matcher.set_calibration(shrunk)
    (match,) = matcher.match("refund card hello")
    assert (match.rule.id, match.explanation.threshold) == ("delivery", 0.7346)
    matcher.set_calibration(gate)
    assert matcher.match("refund card hello") == []  # under the band of 0.8171
    assert matcher.measured_gate().kind == "rulebook"  # what a calibration moves, whatever is set
    # a near miss of delivery says the same as the message that expects nothing
    from norma.matching import NearMiss

    missed = calibrate_gate(matcher, labelled[:1], prior=0, near_misses=[NearMiss("card weather hello", "delivery")])
    assert (missed.threshold, missed.terms["near_misses"], missed.terms["expecting_none"]) == (0.9694, 1, 1)


def test_calibration_is_deterministic_and_becomes_the_automatic_gate(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(PLAIN, embedder=axis)
    gate = calibrate_gate(matcher, LABELLED, target_precision=0.9)
    assert gate == calibrate_gate(RuleMatcher(list(reversed(PLAIN)), embedder=axis), LABELLED, target_precision=0.9)
    matcher.set_calibration(gate)
    assert matcher.gate() is gate
    result = matcher.match("refund card")
    assert result == []
    assert result.gate is gate
    assert gate_from_dict(gate.to_dict()) == gate  # what the store keeps reads back the same
    matcher.set_calibration(None)
    assert matcher.gate().kind == "fixed"  # 0 examples: back to the rulebook's (fallback) gate


def test_a_gate_calibrated_with_another_model_is_ignored(axis: AxisEmbedder, caplog: pytest.LogCaptureFixture) -> None:
    gate = calibrate_gate(RuleMatcher(PLAIN, embedder=axis), LABELLED, target_precision=0.9)
    assert gate.terms["model"] == axis.model_id
    other = AppliedGate(gate.kind, gate.score, gate.threshold, {**gate.terms, "model": "encoder@0123456789ab"})
    matcher = RuleMatcher(PLAIN, embedder=axis)
    with caplog.at_level("WARNING", logger="norma.matching._matcher"):
        matcher.set_calibration(other)
    assert matcher.gate().kind == "fixed"  # the rulebook's own gate, not the other model's threshold
    assert "calibrated with model encoder@0123456789ab" in caplog.text
    matcher.set_calibration(gate)
    assert matcher.gate() is gate


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
    with pytest.raises(InvalidInputError, match="calibrated similarity gate"):
        matcher.set_calibration(AppliedGate("fixed", "similarity", 0.5))
    with pytest.raises(InvalidInputError, match="not a calibrated"):
        gate_from_dict({"kind": "rulebook", "score": "similarity", "threshold": 0.5})
    stored = {"kind": "calibrated", "score": "similarity", "threshold": 0.5}
    for band, margin in ((0.4, None), ("0.4", 0.09), (0.6, 0.09), (0.4, -0.1), (float("nan"), 0.09)):
        with pytest.raises(InvalidInputError, match="stored gate band is malformed"):
            gate_from_dict({**stored, "terms": {"band_threshold": band, "margin": margin}})
    banded = gate_from_dict({**stored, "terms": {"band_threshold": 0.4, "margin": 0.09}})
    assert banded.terms == {"band_threshold": 0.4, "margin": 0.09}


def test_a_large_rulebook_is_measured_on_a_bounded_sample() -> None:
    import numpy as np

    from norma.matching._gate import GATE_BUDGET

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
    assert GATE_BUDGET // 18_300 == 916
    assert (gate.kind, gate.terms["probes"], gate.terms["examples"]) == ("rulebook", 916, 18_000)


def test_a_remembered_rulebook_gate_is_used_until_the_rules_change(axis: AxisEmbedder) -> None:
    measured = RuleMatcher(RULES, embedder=axis).gate()
    kept = gate_from_dict(measured.to_dict(), kind="rulebook")  # as a cache on disk gives it back
    forged = AppliedGate("rulebook", "similarity", 0.5, {**kept.terms})
    matcher = RuleMatcher(RULES, embedder=axis)
    assert matcher.remember_gate(forged) is True
    assert matcher.gate().threshold == 0.5  # used as given: nothing measured
    assert matcher.remember_gate(forged, MatchConfig(gate_quantile=0.3)) is False  # measured another way
    matcher.remove(["weather"])  # the rules changed: measured again
    assert matcher.gate().threshold == EXPECTED
    with pytest.raises(InvalidInputError, match="rulebook gate"):
        matcher.remember_gate(AppliedGate("fixed", "similarity", 0.5))


def test_probe_similarities_split_each_probe_into_its_own_rule_and_its_best_rival(axis: AxisEmbedder) -> None:
    own, rival = RuleMatcher(RULES, embedder=axis).probe_similarities()
    half = round(1 / math.sqrt(2), 6)
    # refund 1-9 and card 1-9: their rule's condition is the same axis (1.0); the best other rule is a two-keyword
    # example of `delivery` that shares their keyword (1/sqrt(2))
    # delivery's examples: own = the best of "delivery" (1/sqrt(2) when the example names it, else 0) and the
    # other two-keyword examples (0.5 when they share one keyword); rival = the one-keyword rule of a keyword
    # they carry (1/sqrt(2))
    pairs = sorted(zip(np.round(own, 6).tolist(), np.round(rival, 6).tolist(), strict=True))
    assert pairs == sorted([(1.0, half)] * 18 + [(half, half)] * 2 + [(0.5, half)] * 4)
    best = np.maximum(own, rival)
    assert round(float(np.quantile(best, 0.24)), 4) == EXPECTED  # the rulebook gate is a quantile of their max


def test_probe_similarities_of_a_rulebook_without_examples_are_empty(axis: AxisEmbedder) -> None:
    own, rival = RuleMatcher([Rule(id="a", condition_text="refund")], embedder=axis).probe_similarities()
    assert own.shape == rival.shape == (0,)


# -- a quantile set for the matcher (a tenant's stored setting) -------------------------------------------------------


def test_a_quantile_setting_moves_the_rulebook_gate_and_is_named(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    matcher.set_gate_quantile(0.1)  # position 2.3 of the 24 sorted similarities: inside the six 0.7071 values
    assert matcher.gate_quantile == 0.1
    gate = matcher.gate()
    assert (gate.kind, gate.threshold) == ("rulebook", round(1 / math.sqrt(2), 4))
    assert (gate.terms["quantile"], gate.terms["quantile_source"]) == (0.1, "tenant")
    assert gate.description == (
        "similarity >= 0.7071: the rulebook's own gate, the 0.1 quantile (the tenant's setting) of the best "
        "leave-one-out similarity of 24 of its 24 example texts"
    )
    result = matcher.match("refund card")  # 0.7071 now reaches the gate
    assert {m.rule.id for m in result} == {"refund", "card"}
    assert result.gate == gate
    matcher.set_gate_quantile(None)
    assert matcher.gate().threshold == EXPECTED
    assert "quantile_source" not in matcher.gate().terms


def test_a_config_that_sets_its_own_quantile_overrides_the_setting(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    matcher.set_gate_quantile(0.1)
    assert matcher.gate(MatchConfig(gate_quantile=0.24)).threshold == EXPECTED  # set, even to the default's value
    assert matcher.gate(MatchConfig(gate_quantile=0.24).with_(max_matched=3)).threshold == EXPECTED
    unset = MatchConfig(max_matched=3).with_(max_candidates=20)  # gate_quantile never set: the setting applies
    assert "gate_quantile" not in unset.model_fields_set
    assert unset.gate_quantile is None
    assert matcher.gate(unset).threshold == round(1 / math.sqrt(2), 4)
    assert matcher.gate(MatchConfig(threshold=0.9)).kind == "fixed"  # a numeric threshold is not automatic


def test_a_calibrated_gate_comes_before_the_quantile_setting(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(PLAIN, embedder=axis)
    calibrated = calibrate_gate(matcher, LABELLED, target_precision=0.9)
    matcher.set_calibration(calibrated)
    matcher.set_gate_quantile(0.1)
    assert matcher.gate() is calibrated


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, True, "0.1", float("nan")])
def test_a_bad_quantile_setting_is_refused(axis: AxisEmbedder, bad: object) -> None:
    from norma.matching import gate_quantile_setting, quantile_setting

    matcher = RuleMatcher(RULES, embedder=axis)
    with pytest.raises(InvalidInputError, match="strictly between 0 and 1"):
        matcher.set_gate_quantile(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="strictly between 0 and 1"):
        quantile_setting(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="stored gate setting is malformed"):
        gate_quantile_setting({"kind": "quantile", "gate_quantile": bad})
    assert matcher.gate_quantile is None


def test_the_examples_new_to_an_adapted_encoder_are_probed_like_the_rulebooks(axis: AxisEmbedder) -> None:
    """An old rule's new example, a new rule's examples (one of them also an old rule's trained example) are new;
    the old rule's trained example is seen. Each new one's best cosine to every other text, identical ones left out."""
    old = Rule(id="o", condition_text="refund", examples=["refund card", "refund hello"])
    new = Rule(id="n", condition_text="weather", examples=["refund card", "weather"])
    matcher = RuleMatcher([old, new], embedder=axis)
    trained = {"refund", "refund card"}
    probes = unseen_probes(matcher._index, MatchConfig(), lambda text: text in trained)
    assert (probes.seen, probes.unseen) == (1, 3)
    # "refund hello": "refund" at 1/sqrt(2); "refund card" (n's): "refund" at 1/sqrt(2), both copies of itself left
    # out; "weather" (n's): its identical rule text left out, nothing else shares an axis: 0
    assert sorted(probes.similarities.tolist()) == pytest.approx([0.0, 1 / math.sqrt(2), 1 / math.sqrt(2)], abs=1e-6)
    undecided = unseen_probes(matcher._index, MatchConfig(), lambda text: None)
    assert (undecided.seen, undecided.unseen, len(undecided.similarities)) == (0, 0, 0)
