"""``match(..., embedder=...)``: the message embedded by another embedder of the same model (the service passes a
BatchingEmbedder around the matcher's), with the same checks and results as a plain ``match``."""

from __future__ import annotations

import asyncio

import pytest

from norma.embeddings import BatchingEmbedder
from norma.errors import InvalidInputError, LimitExceededError
from norma.matching import MatchConfig, Rule, RuleMatcher
from tests.matching.conftest import AxisEmbedder

RULES = [Rule(id="a", condition_text="refund request"), Rule(id="b", condition_text="card stolen")]


def test_the_given_embedder_embeds_the_message_and_the_result_is_the_same() -> None:
    own, other = AxisEmbedder(), AxisEmbedder()
    matcher = RuleMatcher(RULES, MatchConfig(threshold=None), embedder=own)
    calls = len(own.calls)
    got = matcher.match("my card was stolen", explain=True, embedder=other)
    assert other.calls == [["my card was stolen"]]
    assert len(own.calls) == calls  # the matcher's embedder was not asked
    expected = matcher.match("my card was stolen", explain=True)
    assert got == expected
    assert got.dropped == expected.dropped
    assert asyncio.run(matcher.amatch("my card was stolen", embedder=other)) == expected


def test_a_batching_embedder_around_the_matchers_gives_the_same_matches() -> None:
    matcher = RuleMatcher(RULES, MatchConfig(threshold=None), embedder=AxisEmbedder())
    batching = BatchingEmbedder(matcher.embedder)
    assert matcher.match("refund please", embedder=batching) == matcher.match("refund please")
    assert batching.batches == 1


def test_the_size_check_comes_before_embedding_and_a_query_vector_excludes_an_embedder() -> None:
    other = AxisEmbedder()
    matcher = RuleMatcher(RULES, MatchConfig(max_message_chars=10), embedder=AxisEmbedder())
    with pytest.raises(LimitExceededError, match="the message is 11 characters"):
        matcher.match("x" * 11, embedder=other)
    assert other.calls == []
    with pytest.raises(InvalidInputError, match="not both"):
        matcher.match("refund", query_vector=[1, 0, 0, 0, 0, 0], embedder=other)  # type: ignore[arg-type]


def test_empty_messages_and_empty_matchers_embed_nothing() -> None:
    other = AxisEmbedder()
    assert RuleMatcher([], embedder=AxisEmbedder()).match("refund", embedder=other) == []
    assert RuleMatcher(RULES, embedder=AxisEmbedder()).match("   ", embedder=other) == []
    assert other.calls == []
