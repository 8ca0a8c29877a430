"""What a rulebook covers on recorded messages (issue #60 part B): each rule's share, the rules that govern nothing,
the ungoverned messages clustered, the rules that compete.

A constructed case with the real embedding model: a rulebook whose ``mortgage`` rule no message is about, two twin
rules (``transfer-abroad`` and ``transfer-international``, near-identical texts), and recorded messages of which
five ask about the weather, which no rule covers. The expected values are written by hand from the messages.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

import numpy as np
import pytest

from norma.embeddings import Embedder, EmbedderWrapper
from norma.errors import InvalidInputError, LimitExceededError
from norma.matching import MatchConfig, RuleMatcher
from norma.rules import Rule
from norma.turns import Coverage, Norma, coverage
from norma.turns._clustering import cluster_rows, label_terms

pytestmark = pytest.mark.model

RULES = [
    Rule(
        id="card-lost",
        tenant_id="acme",
        condition_text="customer reports that their card was lost or stolen",
        action_text="block the card and offer a replacement",
        examples=("I lost my card", "my card was stolen", "I can't find my debit card anywhere"),
    ),
    Rule(
        id="refund",
        tenant_id="acme",
        condition_text="customer asks for a refund of an order",
        action_text="explain the refund policy and give the form reference",
        examples=("I want my money back", "can I get a refund for my order"),
    ),
    Rule(
        id="mortgage",
        tenant_id="acme",
        condition_text="customer asks about mortgage interest rates",
        action_text="give the current mortgage rates and suggest an advisor",
        examples=("what are your mortgage rates", "how much interest on a home loan"),
    ),
    Rule(
        id="transfer-abroad",
        tenant_id="acme",
        condition_text="customer asks how to send money to a bank account abroad",
        action_text="explain international transfers and their fees",
        examples=("how do I send money abroad", "transfer money to a foreign account"),
    ),
    Rule(
        id="transfer-international",
        tenant_id="acme",
        condition_text="customer asks how to send money to a bank account in another country",
        action_text="explain international transfers and their fees",
        examples=("how do I send money to another country", "transfer money to an account overseas"),
    ),
]
CARD = ["I lost my credit card yesterday", "someone stole my card", "my card is missing, I think I lost it",
        "my wallet with my bank card was stolen"]  # fmt: skip
REFUND = ["I'd like a refund for the order I returned", "please refund my purchase",
          "can I have my money back for this order", "refund my order please"]  # fmt: skip
TRANSFER = ["how can I send money to my sister in Spain", "I need to wire money to an account in Germany",
            "how do I transfer funds overseas", "send money to a bank in France"]  # fmt: skip
WEATHER = ["what's the weather like today", "will it rain tomorrow", "is it going to be sunny this weekend",
           "what is the weather forecast for Saturday", "how cold will it be tonight"]  # fmt: skip
OTHER = ["my app crashes when I log in", "do you sell gift vouchers"]
MESSAGES = [*CARD, *REFUND, *TRANSFER, *WEATHER, *OTHER]


class CountingEmbedder(EmbedderWrapper):
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += list(texts)
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def matcher() -> RuleMatcher:
    return RuleMatcher(RULES)


@pytest.fixture(scope="module")
def found(matcher: RuleMatcher) -> Coverage:
    return coverage(Norma(matcher), MESSAGES)


def test_each_rule_governs_its_own_messages(found: Coverage) -> None:
    by_id = {r.rule_id: r for r in found.rules}
    assert (by_id["card-lost"].governs, by_id["refund"].governs) == (4, 4)
    assert found.turns == len(MESSAGES) == 19
    assert found.governed + found.neighbour_only + found.unmatched == 19
    assert found.ungoverned == 19 - found.governed
    assert [r.governs for r in found.rules] == sorted((r.governs for r in found.rules), reverse=True)


def test_the_rule_no_message_is_about_never_governs_and_never_matches(found: Coverage) -> None:
    assert "mortgage" in found.never_governs
    # transfer-abroad splits the confidence with its near twin, which comes first on every transfer message: it never
    # passes the default gate either (the competing pair below says why)
    assert found.never_matched == ("mortgage", "transfer-abroad")
    assert not {"card-lost", "refund"} & set(found.never_governs)
    assert found.disabled == ()


def test_the_weather_messages_are_one_cluster_and_the_largest(found: Coverage) -> None:
    weather = found.clusters[0]
    assert weather.size == 5
    assert set(weather.indexes) == {MESSAGES.index(m) for m in WEATHER}
    assert {e.message for e in weather.examples} <= set(WEATHER)
    assert len(weather.examples) == 3
    assert "weather" in weather.terms
    assert all(set(c.indexes).isdisjoint(weather.indexes) for c in found.clusters[1:])
    assert weather.nearest_rule is not None
    assert weather.nearest_similarity is not None
    assert weather.nearest_similarity < 0.3  # nothing in the rulebook is close to the weather


def test_the_twin_rules_compete(found: Coverage) -> None:
    pair = found.competing[0]
    assert (pair.rule_a, pair.rule_b) == ("transfer-abroad", "transfer-international")
    assert pair.messages >= 2
    assert pair.messages >= max(pair.both_govern, pair.a_first + pair.b_first)
    assert pair.both_govern or (pair.a_first and pair.b_first)
    assert pair.example.message in TRANSFER
    assert MESSAGES[pair.example.index] == pair.example.message
    assert not any("mortgage" in (p.rule_a, p.rule_b) for p in found.competing)


def test_the_json_has_the_documented_keys(found: Coverage) -> None:
    data = json.loads(json.dumps(found.to_dict()))
    assert list(data) == [
        "tenant", "rules_version", "turns", "governed", "neighbour_only", "unmatched", "ungoverned", "rules",
        "never_governs", "never_matched", "disabled", "clusters", "other_ungoverned", "competing", "settings",
    ]  # fmt: skip
    assert (data["tenant"], data["rules_version"], data["turns"]) == ("acme", None, 19)
    assert set(data["rules"][0]) == {"rule_id", "enabled", "governs", "neighbour", "governs_share", "neighbour_share"}
    assert data["rules"][0]["governs_share"] == data["rules"][0]["governs"] / 19
    assert set(data["clusters"][0]) == {"size", "terms", "examples", "nearest_rule", "indexes"}
    assert set(data["clusters"][0]["nearest_rule"]) == {"rule_id", "similarity"}
    assert set(data["competing"][0]) == {"rule_a", "rule_b", "messages", "both_govern", "a_first", "b_first", "example"}
    assert data["settings"] == {
        "governs": 0.7, "cluster_similarity": 0.5, "contest_margin": 0.05, "contest_confidence": 0.5
    }  # fmt: skip
    clustered = sum(c["size"] for c in data["clusters"])
    assert clustered + data["other_ungoverned"] == data["ungoverned"]


def test_the_input_order_does_not_change_the_report(matcher: RuleMatcher, found: Coverage) -> None:
    order = list(range(len(MESSAGES)))
    random.Random(7).shuffle(order)
    messages = [MESSAGES[i] for i in order]
    shuffled = coverage(Norma(matcher), messages)

    def texts(report: Coverage, read: list[str]) -> list[tuple[int, frozenset[str], tuple[str, ...]]]:
        return [(c.size, frozenset(read[i] for i in c.indexes), c.terms) for c in report.clusters]

    assert texts(shuffled, messages) == texts(found, MESSAGES)
    assert shuffled.rules == found.rules
    assert [(p.rule_a, p.rule_b, p.messages) for p in shuffled.competing] == [
        (p.rule_a, p.rule_b, p.messages) for p in found.competing
    ]


def test_every_distinct_message_is_embedded_once(matcher: RuleMatcher) -> None:
    counting = CountingEmbedder(matcher.embedder)
    repeated = [*MESSAGES, *WEATHER, CARD[0]]
    report = coverage(Norma(matcher, embedder=counting), repeated)
    assert sorted(counting.texts) == sorted(set(MESSAGES))
    assert report.turns == 25
    assert report.clusters[0].size == 10  # the weather, each message twice
    assert len(report.clusters[0].examples) == 3


def test_turn_records_are_read_with_their_sessions(matcher: RuleMatcher, found: Coverage) -> None:
    records = [{"message": m, "output": "ok", "id": i, "session": {"turn": 1}} for i, m in enumerate(MESSAGES)]
    assert coverage(Norma(matcher), records).to_dict() == found.to_dict()
    messages_only = coverage(Norma(matcher), [{"message": m} for m in MESSAGES])
    assert messages_only.to_dict() == found.to_dict()


def test_progress_is_reported_up_to_every_message(matcher: RuleMatcher) -> None:
    seen: list[tuple[int, int]] = []
    coverage(Norma(matcher), MESSAGES, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (19, 19)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_no_message_covers_nothing(matcher: RuleMatcher) -> None:
    empty = coverage(Norma(matcher), [])
    assert (empty.turns, empty.governed, empty.clusters, empty.competing, empty.other_ungoverned) == (0, 0, (), (), 0)
    assert empty.never_matched == tuple(sorted(r.id for r in RULES))
    assert all(r["governs_share"] == 0.0 for r in empty.to_dict()["rules"])


def test_a_disabled_rule_is_listed_apart(matcher: RuleMatcher) -> None:
    rules = [*RULES[:2], RULES[2].model_copy(update={"enabled": False})]
    report = coverage(Norma(RuleMatcher(rules)), CARD)
    assert report.disabled == ("mortgage",)
    assert "mortgage" not in report.never_governs
    assert report.never_governs == ("refund",)


@pytest.mark.parametrize(
    ("messages", "location", "words"),
    [
        (["hi", "  "], "messages[1]", "the message is empty"),
        ([{"message": ""}], "messages[0].message", "the message is empty"),
        (["hi", 3], "messages[1]", "a message is text or a turn record, not int"),
        ([{"message": "hi", "reply": "x"}], "messages[0]", "unknown field 'reply'"),
        ([{"output": "x"}], "messages[0]", 'a turn record needs "message"'),
        ([{"message": "hi", "session": 3}], "messages[0].session", "a session must be a mapping"),
        ([{"message": "hi", "session": {"turn": -1}}], "messages[0].session", ""),
        ("hello", "messages", "takes a list of messages"),
    ],
)
def test_bad_messages_are_refused_before_anything_is_matched(
    matcher: RuleMatcher, messages: object, location: str, words: str
) -> None:
    counting = CountingEmbedder(matcher.embedder)
    with pytest.raises(InvalidInputError) as caught:
        coverage(Norma(matcher, embedder=counting), messages)  # type: ignore[arg-type]
    assert caught.value.location == location
    assert words in caught.value.message
    assert counting.texts == []


def test_a_message_over_the_limit_is_refused(matcher: RuleMatcher) -> None:
    small = Norma(RuleMatcher(RULES, MatchConfig(max_message_chars=10)))
    with pytest.raises(LimitExceededError) as caught:
        coverage(small, ["short", "far too long a message"])
    assert caught.value.location == "messages[1]"
    assert "22 characters, over the limit of 10" in caught.value.message


# -- the clustering itself, on vectors whose similarities are known -------------------------------------------------


def _unit(*degrees: float) -> np.ndarray:
    """Unit vectors in the plane at these angles (cosine of two: the cosine of their angle difference)."""
    radians = np.radians(degrees)
    return np.stack([np.cos(radians), np.sin(radians)], axis=1).astype(np.float32)


def test_average_linkage_does_not_chain() -> None:
    # 0 -> 1: 50 degrees (cosine 0.64), 1 -> 2: 53 degrees (0.60), 0 -> 2: 103 degrees (-0.22). Single linkage would
    # chain all three; 0 and 1 merge first, and the mean cosine of 2 to them is (0.60 - 0.22) / 2 = 0.19 < 0.5.
    vectors = _unit(0.0, 50.0, 103.0)
    assert cluster_rows(vectors, np.ones(3), 0.5) == [[0, 1], [2]]


def test_groups_far_apart_are_separate_and_a_lonely_row_is_alone() -> None:
    # two tight groups (rows 0, 1, 4 around 0 degrees; rows 2, 3 around 90) and one row at 220 degrees
    vectors = _unit(0.0, 10.0, 90.0, 100.0, 5.0, 220.0)
    assert cluster_rows(vectors, np.ones(6), 0.5) == [[0, 1, 4], [2, 3], [5]]


def test_weights_count_each_message() -> None:
    # 0 -> 1: 30 degrees (cosine 0.87), 1 -> 2: 40 degrees (0.77), 0 -> 2: 70 degrees (0.34); 0 and 1 merge first.
    vectors = _unit(0.0, 30.0, 70.0)
    # one message each: the mean cosine of 2 to {0, 1} is (0.34 + 0.77) / 2 = 0.55 >= 0.5
    assert cluster_rows(vectors, np.ones(3), 0.5) == [[0, 1, 2]]
    # row 0 stands for five messages: (5 x 0.34 + 0.77) / 6 = 0.41 < 0.5
    assert cluster_rows(vectors, np.asarray([5.0, 1.0, 1.0]), 0.5) == [[0, 1], [2]]


def test_the_premerge_of_a_large_input_keeps_clear_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    from norma.turns import _clustering

    vectors = _unit(0.0, 2.0, 4.0, 6.0, 120.0, 122.0, 124.0, 240.0)
    expected = [[0, 1, 2, 3], [4, 5, 6], [7]]
    assert cluster_rows(vectors, np.ones(8), 0.5) == expected
    monkeypatch.setattr(_clustering, "MAX_GROUPS", 2)  # the pre-merge by leader clustering runs first
    assert cluster_rows(vectors, np.ones(8), 0.5) == expected


def test_a_label_is_the_words_most_of_the_cluster_shares() -> None:
    texts = ["what is the weather today", "the weather tomorrow", "rain or sun tomorrow", "weather in Paris"]
    idf = {"weather": 2.0, "tomorrow": 2.0, "today": 3.0, "rain": 3.0, "sun": 3.0, "paris": 3.0}
    # weather: in 3 of 4 (share 0.75 x 2 = 1.5), tomorrow: 2 of 4 (0.5 x 2 = 1.0); the others in one message only
    assert label_terms(texts, [1, 1, 1, 1], idf, 3) == ("weather", "tomorrow")
    assert label_terms(texts, [1, 1, 1, 1], idf, 1) == ("weather",)


def test_a_long_message_is_matched_on_its_windows_as_the_matcher_does(matcher: RuleMatcher) -> None:
    # past the model's 256 word pieces: a truncated vector sees only the day at work, the windows see the lost card
    long = "It was a long and tiring day at work. " * 40 + "I lost my card, someone stole my card. " * 40
    report = coverage(Norma(matcher), [long, "will it rain tomorrow"])
    governs = {r.rule_id: r.governs for r in report.rules}
    assert governs["card-lost"] == 1
    assert {m.rule.id for m in matcher.match(long) if m.enforced} == {"card-lost"}


def test_the_nearest_rule_is_the_same_whatever_the_block_size(
    matcher: RuleMatcher, found: Coverage, monkeypatch: pytest.MonkeyPatch
) -> None:
    from norma.turns import _coverage

    repeated = [*MESSAGES, *WEATHER, *WEATHER]  # the weather cluster: 5 distinct rows, more than a block of 2
    expected = coverage(Norma(matcher), repeated)
    monkeypatch.setattr(_coverage, "_BLOCK", 2)  # clusters taken in batches of two rows, larger ones in pieces
    small = coverage(Norma(matcher), repeated)
    assert [(c.indexes, c.nearest_rule) for c in small.clusters] == [
        (c.indexes, c.nearest_rule) for c in expected.clusters
    ]
    assert [c.nearest_similarity for c in small.clusters] == pytest.approx(
        [c.nearest_similarity for c in expected.clusters]
    )
    assert expected.clusters[0].nearest_similarity == pytest.approx(found.clusters[0].nearest_similarity)


def test_a_message_is_matched_once_per_session_and_a_long_one_on_its_windows_in_every_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from norma.turns import _coverage

    matcher = RuleMatcher(RULES)
    original = matcher.match_many
    asked: list[str] = []

    def spy(messages: Sequence[str], *args: object, **kwargs: object) -> object:
        asked.extend(messages)
        return original(messages, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(matcher, "match_many", spy)
    monkeypatch.setattr(_coverage, "_CHUNK", 2)  # embedded and matched two messages at a time
    long = "It was a long and tiring day at work. " * 40 + "I lost my card, someone stole my card. " * 40
    scenario = {"message": "hi there", "session": {"active_scenario_id": "onboarding"}}
    messages = [long, "hi there", "hi there", "will it rain tomorrow", long, scenario, "hi there"]
    report = coverage(Norma(matcher), messages)  # type: ignore[arg-type]
    once = [long, "hi there", "will it rain tomorrow", "hi there"]
    assert sorted(asked) == sorted(once * 2)  # gated, then the first two candidates without a gate
    assert {r.rule_id: r.governs for r in report.rules}["card-lost"] == 2  # the long message both times
