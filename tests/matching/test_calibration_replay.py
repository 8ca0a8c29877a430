"""A balanced calibration replays the matcher's gate on messages matched once without one: what it reports for
its gate (acc@1, rejection, precision, recall) must be what the matcher then does with that gate, message by
message. Checked with the real embedding model on the shipped banking rulebook and its labelled messages."""

from __future__ import annotations

from norma.embeddings import CachedEmbedder, Embedder, get_embedder
from norma.matching import RuleMatcher, SessionState, calibrate_gate, load_labelled, load_rules
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
    for options in ({}, {"best_f1": True}):
        gate = calibrate_gate(matcher, load_labelled(LABELLED), **options)  # type: ignore[arg-type]
        assert gate.refit is not None  # the labelled messages hold both kinds of candidates
        matcher.set_gate(gate)
        acc, rejection, precision, recall = _outcomes(matcher, replay)
        assert (round(acc, 6), round(rejection, 6)) == (gate.acc_at_1, gate.rejection)
        assert round(precision, 6) == gate.precision
        assert round(recall, 6) == gate.recall
    balanced = calibrate_gate(matcher, load_labelled(LABELLED))
    assert (balanced.score, balanced.threshold) == ("confidence", 0.7)  # the default gate, on the refitted confidence
