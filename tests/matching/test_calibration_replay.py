"""A balanced calibration replays the matcher's gate on messages matched once without one: what it reports for
its gate (acc@1, rejection, precision, recall) must be what the matcher then does with that gate, message by
message. Checked with the real embedding model on the shipped banking rulebook and its labelled messages."""

from __future__ import annotations

import dataclasses

from norma.embeddings import CachedEmbedder, Embedder, get_embedder
from norma.matching import RuleMatcher, SessionState, calibrate_gate, load_labelled, load_rules
from norma.matching._gate import Band
from tests.conftest import EXAMPLES

RULEBOOK = EXAMPLES / "rulebooks" / "banking-support.yaml"
LABELLED = EXAMPLES / "rulebooks" / "banking-support.labelled.jsonl"


def _outcomes(matcher: RuleMatcher, embedder: Embedder) -> tuple[float, float, float, float]:
    """(acc@1, rejection, precision, recall) of the matcher's own matches of the labelled messages, each message
    embedded alone as ``match`` does (``embedder`` caches those vectors: each replay of a gate matches the same)."""
    items = list(load_labelled(LABELLED))
    hits = inside = refused = outside = tp = fp = fn = 0
    for item in items:
        session = SessionState(active_scenario_id=item.scenario, active_step_id=item.step)
        result = matcher.match(item.message, session, embedder=embedder)
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
    replay = CachedEmbedder(get_embedder())  # the calibration embeds with the matcher's own, uncached
    for options in ({}, {"prior": 0.0}):
        gate = calibrate_gate(matcher, load_labelled(LABELLED), **options)  # type: ignore[arg-type]
        assert gate.band is not None  # the rulebook's band, moved with the gate
        assert "band_threshold" in gate.to_dict()["terms"]
        matcher.set_gate(gate)
        acc, rejection, precision, recall = _outcomes(matcher, replay)
        assert (round(acc, 6), round(rejection, 6)) == (gate.acc_at_1, gate.rejection)
        assert round(precision, 6) == gate.precision
        assert round(recall, 6) == gate.recall
    # unshrunk, the gate is the best shift of the rulebook's gate (band with it) on a 0.001 grid: moving it further
    # along the grid does no better on these messages, matched for real
    assert gate.acc_at_1 is not None
    assert gate.rejection is not None
    assert gate.band is not None
    best = min(gate.acc_at_1, gate.rejection)
    assert gate.weight == 1.0
    for shift in (-0.05, -0.02, -0.005, 0.005, 0.02, 0.05):
        band = Band(round(gate.band.threshold + shift, 4), gate.band.margin)
        matcher.set_gate(dataclasses.replace(gate, threshold=round(gate.threshold + shift, 4), margin_band=band))
        acc, rejection, _, _ = _outcomes(matcher, replay)
        assert min(acc, rejection) <= best + 1e-9
