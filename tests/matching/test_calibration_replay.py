"""A balanced calibration replays the matcher's gate on messages matched once without one: what it reports for
its gate (acc@1, rejection, precision, recall) must be what the matcher then does with that gate, message by
message. Checked with the real embedding model on the shipped banking rulebook and its labelled messages."""

from __future__ import annotations

from norma.embeddings import get_embedder
from norma.matching import AppliedGate, RuleMatcher, SessionState, calibrate_gate, load_labelled, load_rules
from tests.conftest import EXAMPLES

RULEBOOK = EXAMPLES / "rulebooks" / "banking-support.yaml"
LABELLED = EXAMPLES / "rulebooks" / "banking-support.labelled.jsonl"


def _outcomes(matcher: RuleMatcher) -> tuple[float, float, float, float]:
    """(acc@1, rejection, precision, recall) of the matcher's own matches of the labelled messages."""
    items = list(load_labelled(LABELLED))
    hits = inside = refused = outside = tp = fp = fn = 0
    for item in items:
        session = SessionState(active_scenario_id=item.scenario, active_step_id=item.step)
        result = matcher.match(item.message, session)
        got = [m.rule.id for m in result]
        want = set(item.expected)
        if want:
            inside += 1
            hits += bool(got) and got[0] in want
        else:
            outside += 1
            refused += not got
        tp += len(set(got) & want)
        fp += len(set(got) - want)
        fn += len(want - set(got))
    return hits / inside, refused / outside, tp / (tp + fp), tp / (tp + fn)


def test_the_calibrated_gate_does_what_its_terms_say() -> None:
    matcher = RuleMatcher(load_rules(RULEBOOK), embedder=get_embedder())
    for options in ({}, {"prior": 0.0}):
        gate = calibrate_gate(matcher, load_labelled(LABELLED), **options)  # type: ignore[arg-type]
        assert "band_threshold" in gate.terms  # the rulebook's band, moved with the gate
        matcher.set_calibration(gate)
        acc, rejection, precision, recall = _outcomes(matcher)
        t = gate.terms
        assert (round(acc, 6), round(rejection, 6)) == (t["acc_at_1"], t["rejection"])
        assert round(precision, 6) == t["precision"]
        assert round(recall, 6) == t["recall"]
    # unshrunk, the gate is the best shift of the rulebook's gate (band with it) on a 0.001 grid: moving it further
    # along the grid does no better on these messages, matched for real
    best = min(gate.terms["acc_at_1"], gate.terms["rejection"])
    assert gate.terms["weight"] == 1.0
    assert gate.threshold is not None
    for shift in (-0.05, -0.02, -0.005, 0.005, 0.02, 0.05):
        terms = {**gate.terms, "band_threshold": round(gate.terms["band_threshold"] + shift, 4)}
        matcher.set_calibration(AppliedGate("calibrated", "similarity", round(gate.threshold + shift, 4), terms))
        acc, rejection, _, _ = _outcomes(matcher)
        assert min(acc, rejection) <= best + 1e-9
