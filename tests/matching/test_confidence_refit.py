"""A tenant's confidence refitted on labelled traffic (issue #56, ``norma rules calibrate``): the fit recovers a known
curve, the prior holds it on a few labels, a matcher given the calibrated gate reads the refitted confidence on every
match, and calibrating again on the same messages gives the same refit (the old one is undone, not stacked)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from norma.errors import InvalidInputError
from norma.matching import CalibratedGate, MatchConfig, RuleMatcher, calibrate_gate
from norma.matching._confidence import GOVERNS, Refit, fit_refit
from norma.matching._gate import gate_from_dict
from norma.rules import Rule


def _labels(scale: float, shift: float, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Shipped confidences and labels drawn from a known curve: P(right) = sigmoid(scale * logit + shift)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0.0, 3.0, n)
    right = rng.random(n) < 1.0 / (1.0 + np.exp(-(scale * z + shift)))
    return 1.0 / (1.0 + np.exp(-z)), right


@pytest.mark.parametrize(("scale", "shift"), [(0.5, -1.0), (1.6, 0.8), (1.0, 0.0)])
def test_the_fit_recovers_a_known_curve(scale: float, shift: float) -> None:
    confidence, right = _labels(scale, shift, 20_000, seed=1)
    refit = fit_refit(confidence, right, prior=1.0)
    assert refit.scale == pytest.approx(scale, abs=0.06)
    assert refit.shift == pytest.approx(shift, abs=0.08)
    assert refit.candidates == 20_000
    assert refit.ece_after is not None
    assert refit.ece_before is not None
    assert refit.ece_after < 0.02
    if (scale, shift) != (1.0, 0.0):
        assert refit.ece_before > 0.05  # the shipped confidence was off on these labels, and the refit fixes it


def test_the_prior_holds_a_few_labels_near_the_shipped_confidence() -> None:
    confidence, right = _labels(0.5, -1.0, 20_000, seed=2)
    few = fit_refit(confidence[:6], right[:6])
    many = fit_refit(confidence, right)
    assert abs(few.scale - 1.0) + abs(few.shift) < abs(many.scale - 1.0) + abs(many.shift)
    firm = fit_refit(confidence, right, prior=1e9)  # an overwhelming prior: the identity
    assert (firm.scale, firm.shift) == pytest.approx((1.0, 0.0), abs=1e-4)


def test_apply_and_undo_are_the_curve_and_its_inverse() -> None:
    refit = Refit(0.5, -1.0)
    shipped = np.array([0.05, 0.5, 0.9])
    by_hand = [1.0 / (1.0 + math.exp(-(0.5 * math.log(p / (1 - p)) - 1.0))) for p in shipped]
    assert refit.apply(shipped).tolist() == pytest.approx(by_hand, abs=1e-12)
    assert refit.undo(refit.apply(shipped)).tolist() == pytest.approx(shipped.tolist(), abs=1e-12)


def test_bad_input_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="both kinds"):
        fit_refit(np.array([0.2, 0.9]), np.array([True, True]))
    with pytest.raises(InvalidInputError, match="prior"):
        fit_refit(np.array([0.2, 0.9]), np.array([True, False]), prior=0)
    with pytest.raises(InvalidInputError, match="2 confidences but 1 labels"):
        fit_refit(np.array([0.2, 0.9]), np.array([True]))
    with pytest.raises(InvalidInputError, match="scale"):
        Refit(0.0, 1.0)
    with pytest.raises(InvalidInputError, match="not a confidence refit"):
        Refit.from_dict({"shift": 1.0})


def test_a_calibrated_gate_keeps_its_refit_when_stored() -> None:
    gate = CalibratedGate(0.42, "best_f1", 12, refit=Refit(0.8, -0.3, 40, 0.11, 0.04))
    data = gate.to_dict()
    assert data["terms"]["confidence"] == {
        "scale": 0.8, "shift": -0.3, "candidates": 40, "ece_before": 0.11, "ece_after": 0.04,
    }  # fmt: skip
    assert "logit x 0.800 - 0.300, fitted on 40 labelled candidates; ECE on them 0.110 -> 0.040" in data["description"]
    assert gate_from_dict(data) == gate
    assert gate_from_dict(CalibratedGate(0.42, "best_f1", 12).to_dict()).refit is None  # stored before refits


RULES = [
    Rule(id="refund", condition_text="customer asks for a refund",
         examples=["I want my money back", "refund my purchase", "how do I get a refund", "please refund my order"]),
    Rule(id="track-parcel", condition_text="customer asks where their parcel is",
         examples=["where is my parcel", "my order has not arrived", "track my delivery", "where is my package"]),
    Rule(id="opening-hours", condition_text="customer asks when the shop is open",
         examples=["when do you open", "what are your hours", "are you open on sunday", "what time do you close"]),
]  # fmt: skip
LABELLED = [
    ("I would like a refund for this", ["refund"]),
    ("can you send my money back please", ["refund"]),
    ("my parcel never came", ["track-parcel"]),
    ("where's the package I ordered", ["track-parcel"]),
    ("are you open tomorrow morning", ["opening-hours"]),
    ("what time does the shop shut", ["opening-hours"]),
    ("what is the capital of australia", []),
    ("tell me a joke about cats", []),
    ("how tall is mount everest", []),
    ("do you like jazz", []),
]


@pytest.mark.model
def test_every_match_of_a_calibrated_matcher_reads_the_refit_and_a_second_calibration_does_not_stack() -> None:
    shipped = RuleMatcher(RULES)
    gate = calibrate_gate(shipped, LABELLED, best_f1=True)
    assert gate.refit is not None
    assert gate.refit.candidates >= len(LABELLED)
    refitted = RuleMatcher(RULES)
    refitted.set_gate(gate)
    assert refitted.refit == gate.refit
    loose = MatchConfig(threshold=None, max_matched=3)
    for message in ("refund me now", "where is my order", "what's the weather", "are you open at 9"):
        before = {m.rule.id: m.confidence for m in shipped.match(message, config=loose)}
        after = refitted.match(message, config=loose)  # any threshold: the refit is the tenant's confidence
        assert {m.rule.id for m in after} == set(before)
        for match in after:
            z = math.log(before[match.rule.id] / (1 - before[match.rule.id]))
            expected = 1.0 / (1.0 + math.exp(-(gate.refit.scale * max(-30.0, min(30.0, z)) + gate.refit.shift)))
            assert match.confidence == pytest.approx(expected, abs=1e-9)
        for match in refitted.match(message):  # the automatic gate: governs from GOVERNS of the refitted confidence
            assert match.enforced == (match.confidence >= GOVERNS)
    again = calibrate_gate(refitted, LABELLED, best_f1=True)
    assert (again.refit.scale, again.refit.shift) == pytest.approx((gate.refit.scale, gate.refit.shift), abs=1e-5)
