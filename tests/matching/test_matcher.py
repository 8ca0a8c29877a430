from __future__ import annotations

import asyncio
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from norma.errors import InvalidInputError, NotFoundError
from norma.matching import MatchConfig, Rule, RuleMatcher, Scope, SessionState
from norma.matching._vectors import VectorIndex
from norma.rules import rule_texts
from tests.matching.conftest import AxisEmbedder

ADR_RULES = [
    Rule(id="a", condition_text="refund request", priority=10),
    Rule(id="b", condition_text="card stolen", priority=0),
    Rule(id="c", condition_text="refund card", priority=5, scope=Scope.SCENARIO, scenario_id="s1"),
]
IN_S1 = SessionState(active_scenario_id="s1")


def test_adr_formula_on_a_hand_computed_fixture(axis: AxisEmbedder) -> None:
    # similarity: a = 1, b = 0, c = 1/sqrt(2). BM25 over condition texts (N = 3, every dl = avgdl = 2, tf = 1):
    # a and c score 0.4 * ln(1.6), b 0; min-max -> a 1, b 0, c 1. priority min-max over 0..10 -> 1, 0, 0.5.
    # final a = 0.6 * (0.7 + 0.3) + 0.3 * 1 + 0.1 * 1.0 = 1.0
    # final c = 0.6 * (0.7 / sqrt(2) + 0.3) + 0.3 * 0.5 + 0.1 * 1.1 = 0.7369849...
    # final b = 0.1 (below the 0.5 threshold on the final score)
    matcher = RuleMatcher(ADR_RULES, MatchConfig.adr(), embedder=axis)
    result = matcher.match("refund please", IN_S1)
    assert [m.rule.id for m in result] == ["a", "c"]
    a, c = result
    assert a.final_score == pytest.approx(1.0, abs=1e-9)
    assert c.final_score == pytest.approx(0.6 * (0.7 / math.sqrt(2) + 0.3) + 0.15 + 0.11, abs=1e-7)
    assert c.similarity_score == pytest.approx(1 / math.sqrt(2), abs=1e-7)
    assert (a.bm25_score, c.bm25_score) == (1.0, 1.0)
    assert a.explanation.bm25_raw == pytest.approx(0.4 * math.log(1.6), abs=1e-12)
    assert c.explanation.priority_normalized == 0.5
    assert c.explanation.scope_weight == 1.1
    assert c.explanation.hybrid == pytest.approx(0.7 / math.sqrt(2) + 0.3, abs=1e-7)


def test_adr_over_fetch_gives_zero_vector_score_outside_the_top(axis: AxisEmbedder) -> None:
    # max_candidates=1: only a gets its similarity; c keeps BM25 only: 0.6 * 0.3 + 0.15 + 0.11 = 0.44 < 0.5
    matcher = RuleMatcher(ADR_RULES, MatchConfig.adr(max_candidates=1), embedder=axis)
    result = matcher.match("refund please", IN_S1, explain=True)
    assert [m.rule.id for m in result] == ["a"]
    dropped = {d.rule_id: d for d in result.dropped}
    assert dropped["c"].reason == "threshold"
    assert dropped["c"].final_score == pytest.approx(0.44, abs=1e-9)


def test_query_normalisation_and_hybrid_scores(axis: AxisEmbedder) -> None:
    # "query": raw / sum of the idf of the message's terms; an unknown term counts with df = 0 (idf ln 8 here)
    config = MatchConfig(bm25_text="condition", threshold=None)
    matcher = RuleMatcher(ADR_RULES, config, embedder=axis)
    result = matcher.match("refund", IN_S1)
    hybrid = {m.rule.id: m.explanation.hybrid for m in result}
    assert hybrid["a"] == pytest.approx(0.7 + 0.3 * 0.4, abs=1e-9)  # 0.82
    assert hybrid["c"] == pytest.approx(0.7 / math.sqrt(2) + 0.3 * 0.4, abs=1e-6)  # 0.615 (float32 vectors)
    assert result[0].rule.id == "a"
    assert result[0].bm25_score == pytest.approx(0.4, abs=1e-12)
    zebra = matcher.match("refund zebra", IN_S1)[0]
    assert zebra.rule.id == "a"
    assert zebra.bm25_score == pytest.approx(0.4 * math.log(1.6) / (math.log(1.6) + math.log(8)), abs=1e-12)


def test_scope_gating(axis: AxisEmbedder) -> None:
    rules = [
        *ADR_RULES,
        Rule(id="d", condition_text="refund step", scope=Scope.STEP, scenario_id="s1", step_id="pay"),
        Rule(id="e", condition_text="refund any", scope=Scope.STEP, step_id="pay"),
    ]
    matcher = RuleMatcher(rules, MatchConfig(threshold=None), embedder=axis)

    def ids(session: SessionState | None) -> set[str]:
        return {m.rule.id for m in matcher.match("refund", session)}

    assert ids(None) == {"a", "b"}
    assert ids(SessionState(active_scenario_id="s1")) == {"a", "b", "c"}
    assert ids(SessionState(active_scenario_id="s1", active_step_id="pay")) == {"a", "b", "c", "d", "e"}
    assert ids(SessionState(active_scenario_id="s2", active_step_id="pay")) == {"a", "b", "e"}
    assert ids(SessionState(active_scenario_id="s2")) == {"a", "b"}


def _ids(result: list) -> list[str]:  # type: ignore[type-arg]
    return [m.rule.id for m in result]


def test_business_filters(axis: AxisEmbedder) -> None:
    rules = [
        Rule(id="once", condition_text="refund", max_fires_per_session=1),
        Rule(id="cool", condition_text="refund now", cooldown_turns=2),
        Rule(id="off", condition_text="refund", enabled=False),
        Rule(id="tagged", condition_text="refund", tags=["billing"]),
    ]
    matcher = RuleMatcher(rules, MatchConfig(threshold=None), embedder=axis)
    assert set(_ids(matcher.match("refund"))) == {"once", "cool", "tagged"}
    fired = SessionState(turn=3).record_fired(["once", "cool"])
    assert set(_ids(matcher.match("refund", fired))) == {"tagged"}
    assert set(_ids(matcher.match("refund", fired.next_turn().next_turn()))) == {"tagged"}  # turn 5: 2 after 3
    assert set(_ids(matcher.match("refund", fired.next_turn().next_turn().next_turn()))) == {"cool", "tagged"}
    assert _ids(matcher.match("refund", tags=["billing"])) == ["tagged"]
    assert _ids(matcher.match("refund", tags=["nothing"])) == []
    result = matcher.match("refund", fired, explain=True)
    reasons = {d.rule_id: d.reason for d in result.dropped}
    assert reasons == {"once": "max_fires_per_session", "cool": "cooldown", "off": "disabled"}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(min_value=0, max_value=10_000))
def test_shuffled_input_gives_identical_output(seed: int) -> None:
    rules = [Rule(id=f"r{i:02d}", condition_text="refund", priority=i % 3) for i in range(12)]
    rules += [Rule(id=f"x{i}", condition_text="card refund", priority=1) for i in range(4)]
    reference = RuleMatcher(rules, MatchConfig(threshold=None, max_matched=16), embedder=AxisEmbedder())
    shuffled = list(rules)
    random.Random(seed).shuffle(shuffled)
    other = RuleMatcher(shuffled, MatchConfig(threshold=None, max_matched=16), embedder=AxisEmbedder())
    expected = [(m.rule.id, m.final_score) for m in reference.match("refund")]
    assert [(m.rule.id, m.final_score) for m in other.match("refund")] == expected
    # ties: same score and priority -> by id
    assert [i for i, _ in expected[:4]] == ["r02", "r05", "r08", "r11"]


def test_incremental_update_equals_full_rebuild(axis: AxisEmbedder) -> None:
    first = [Rule(id=f"r{i}", condition_text=t) for i, t in enumerate(["refund", "card", "hello", "weather x"])]
    matcher = RuleMatcher(first, MatchConfig(threshold=None), embedder=axis)
    version = matcher.version
    changed = Rule(id="r1", condition_text="card delivery", examples=["where is my card"], priority=4)
    added = Rule(id="r9", condition_text="refund card", tags=["t"])
    matcher.upsert([changed, added])
    matcher.remove(["r2"])
    assert matcher.version == version + 2
    final = [first[0], changed, first[3], added]
    fresh = RuleMatcher(final, MatchConfig(threshold=None), embedder=AxisEmbedder())
    assert [r.id for r in matcher.rules] == ["r0", "r1", "r3", "r9"]
    for message in ["refund", "card", "where is my card", "weather", "hello", "delivery refund"]:
        assert matcher.match(message) == fresh.match(message)
        for rule in final:
            np.testing.assert_array_equal(matcher.vectors_for(rule.id), fresh.vectors_for(rule.id))


def test_upsert_embeds_only_changed_texts(axis: AxisEmbedder) -> None:
    rule = Rule(id="r", condition_text="refund", examples=["money back"])
    matcher = RuleMatcher([rule], embedder=axis)
    assert axis.calls == [rule_texts(rule)]
    matcher.upsert([rule.model_copy(update={"priority": 3})])
    assert len(axis.calls) == 1
    matcher.upsert([rule.model_copy(update={"examples": ("refund me",)})])
    assert axis.calls[-1] == ["refund", "refund me"]


def test_precomputed_vectors_are_used_and_checked(axis: AxisEmbedder) -> None:
    rule = Rule(id="r", condition_text="refund", examples=["x"])
    vectors = axis.embed(rule_texts(rule))
    calls = len(axis.calls)
    matcher = RuleMatcher([rule], embedder=axis, vectors={"r": vectors, "unknown": vectors})
    assert len(axis.calls) == calls
    np.testing.assert_allclose(matcher.vectors_for("r"), vectors)
    with pytest.raises(InvalidInputError, match=r"'r'.*shape"):
        RuleMatcher([rule], embedder=axis, vectors={"r": vectors[:1]})
    with pytest.raises(InvalidInputError, match=r"'r'.*finite"):
        RuleMatcher([rule], embedder=axis, vectors={"r": vectors * np.nan})
    with pytest.raises(NotFoundError):
        matcher.vectors_for("nope")


def test_match_many_equals_match_with_one_embedding_call(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(ADR_RULES, MatchConfig(threshold=None), embedder=axis)
    messages = ["refund please", "card", "", "weather today", "refund card"]
    sessions = [IN_S1, None, None, IN_S1, IN_S1]
    before = len(axis.calls)
    many = matcher.match_many(messages, sessions)
    assert len(axis.calls) == before + 1
    assert many == [matcher.match(m, s) for m, s in zip(messages, sessions, strict=True)]
    assert asyncio.run(matcher.amatch("refund please", IN_S1)) == many[0]


def test_explanations_are_present(axis: AxisEmbedder) -> None:
    rule = Rule(id="r", condition_text="card lost", examples=["hello", "my refund"], priority=2)
    matcher = RuleMatcher([rule], MatchConfig(threshold=None), embedder=axis)
    (match,) = matcher.match("refund now")
    e = match.explanation
    assert (e.matched_example, e.matched_text) == (1, "my refund")
    assert e.matched_terms == ("refund",)
    assert e.weights == {"vector": 0.7, "bm25": 0.3, "hybrid": 0.6, "priority": 0.3, "scope": 0.1}
    data = match.to_dict()
    assert data["rule_id"] == "r"
    assert data["explanation"]["matched_example"] == 1


def test_empty_message_matches_nothing(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(ADR_RULES, MatchConfig(threshold=None), embedder=axis)
    assert matcher.match("") == []
    assert matcher.match("  \n\t") == []


def test_bad_input(axis: AxisEmbedder) -> None:
    with pytest.raises(InvalidInputError, match="duplicate rule id 'a'"):
        RuleMatcher([ADR_RULES[0], ADR_RULES[0]], embedder=axis)
    with pytest.raises(InvalidInputError, match=r"'x'.*tenant"):
        RuleMatcher([ADR_RULES[0], Rule(id="x", tenant_id="other", condition_text="y")], embedder=axis)
    with pytest.raises(InvalidInputError, match="condition_text"):
        Rule(id="empty", condition_text="   ")
    matcher = RuleMatcher(ADR_RULES, embedder=axis)
    with pytest.raises(InvalidInputError, match="message 0"):
        matcher.match(42)  # type: ignore[arg-type]
    with pytest.raises(NotFoundError, match="nope"):
        matcher.remove(["nope"])
    with pytest.raises(InvalidInputError, match="config"):
        matcher.match("x", config={"threshold": 1})  # type: ignore[arg-type]


def test_hnsw_path_agrees_with_exact(axis: AxisEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = [Rule(id=f"r{i}", condition_text=t) for i, t in enumerate(["refund", "card", "hello", "weather"] * 5)]
    exact = RuleMatcher(rules, MatchConfig(threshold=None), embedder=axis)
    monkeypatch.setattr("norma.matching._pipeline.HNSW_BACKGROUND", False)  # the first match builds it
    config = MatchConfig(threshold=None, hnsw_min_rows=1)
    approx = RuleMatcher(rules, config, embedder=axis)
    for message in ["refund", "card hello", "weather"]:
        assert approx.match(message) == exact.match(message)
    approx.upsert([Rule(id="new", condition_text="delivery")])
    assert approx.match("delivery")[0].rule.id == "new"


def test_background_hnsw_build_scans_exactly_meanwhile(axis: AxisEmbedder) -> None:
    rules = [Rule(id=f"r{i}", condition_text=t) for i, t in enumerate(["refund", "card", "hello"] * 4)]
    exact = RuleMatcher(rules, MatchConfig(threshold=None), embedder=axis)
    matcher = RuleMatcher(rules, MatchConfig(threshold=None, hnsw_min_rows=1), embedder=axis)
    assert matcher.match("refund") == exact.match("refund")  # starts the build, answers from the exact scan
    assert matcher.wait_for_index(30)
    assert matcher.match("card") == exact.match("card")
    assert matcher._index.vectors is not None
    assert matcher._index.vectors.has_hnsw


def test_updates_during_a_background_build_are_replayed() -> None:
    index = VectorIndex(3)
    for slot in range(6):
        index.set(slot, np.eye(3, dtype=np.float32)[[slot % 3]])
    assert index.hnsw_candidates(np.array([1, 0, 0], dtype=np.float32), 10, background=True) is None
    index.set(6, np.array([[0, 0, 1]], dtype=np.float32))  # added while the build runs
    index.remove(0)  # removed while the build runs
    assert index.wait_for_build(30)
    found = index.hnsw_candidates(np.array([0, 0, 1], dtype=np.float32), 10, background=True)
    assert found is not None
    assert index.has_hnsw
    assert 6 in found.tolist()
    assert 0 not in found.tolist()


def test_explain_lists_every_reason(axis: AxisEmbedder) -> None:
    rules = [
        Rule(id="in-scope", condition_text="refund"),
        Rule(id="other-scenario", condition_text="refund", scope=Scope.SCENARIO, scenario_id="s9"),
        Rule(id="weak", condition_text="weather"),
        Rule(id="second", condition_text="refund card"),
    ]
    matcher = RuleMatcher(rules, MatchConfig(threshold=0.3, max_matched=1), embedder=axis)
    result = matcher.match("refund", explain=True)
    assert _ids(result) == ["in-scope"]
    reasons = {d.rule_id: d.reason for d in result.dropped}
    assert reasons == {"other-scenario": "scope", "weak": "threshold", "second": "max_matched"}
    assert result.to_dict()["dropped"][0]["rule_id"] == "other-scenario"
    assert matcher.match("refund").dropped == []
    tagged = matcher.match("refund", tags=["x"], explain=True)
    assert {d.reason for d in tagged.dropped} >= {"tags"}


@pytest.mark.parametrize("tags", [True, 3, [["billing"]], [None], ["ok", 1], b"billing", {"a": 1}])
def test_tags_that_are_not_strings_are_invalid_input(axis: AxisEmbedder, tags: object) -> None:
    """Found by tests/fuzz/test_fuzz_service.py: a tag filter of a non-iterable or of non-strings was a TypeError."""
    matcher = RuleMatcher(ADR_RULES, embedder=axis)
    with pytest.raises(InvalidInputError, match="tags"):
        matcher.match("refund", tags=tags)  # type: ignore[arg-type]
    assert _ids(matcher.match("refund", tags=("nope",))) == []
    assert matcher.match("refund", tags="nope") == []


def test_a_rule_repeating_a_tag_can_be_replaced_and_removed(axis: AxisEmbedder) -> None:
    """Found by tests/fuzz/test_fuzz_service.py: replacing a rule whose tags repeat one was a KeyError (and the
    service answered 500 to every match of that tenant from then on)."""
    matcher = RuleMatcher([Rule(id="a", condition_text="refund", tags=("x", "x"))], embedder=axis)
    matcher.upsert([Rule(id="a", condition_text="refund card", tags=("x", "x", "y"))])
    assert _ids(matcher.match("refund card", tags=["x"])) == ["a"]
    matcher.remove(["a"])
    assert matcher.match("refund card", tags=["x"]) == []
