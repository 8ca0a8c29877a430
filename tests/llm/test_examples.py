"""LLM-written rule examples: parsing replies, ``generate_examples`` and ``fill_examples`` into a real store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.embeddings import get_embedder
from norma.errors import BackendError, ConfigError, InvalidInputError, NotFoundError
from norma.llm import OllamaClient, OpenAIClient
from norma.matching import Rule
from norma.matching._examples import examples_prompt, fill_examples, generate_examples, parse_examples
from norma.store import RuleStore, open_store
from tests._llm_server import FakeLLMServer
from tests.llm.conftest import FAST

REFUND = Rule(id="refund", condition_text="customer asks for a refund", action_text="explain the refund policy")
GREETING = Rule(id="greet", condition_text="user says hello")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('["I want my money back", "Can I get a refund?"]', ["I want my money back", "Can I get a refund?"]),
        ('```json\n["a", "b"]\n```', ["a", "b"]),
        ('Sure! Here you go: ["one", "two"] Hope it helps.', ["one", "two"]),
        ('{"examples": ["x", "y"]}', ["x", "y"]),
        ('[{"message": "m1"}, {"text": "m2"}, 3, null]', ["m1", "m2"]),
        ("Here are some examples:\n1. First one\n2) Second one\n3: Third", ["First one", "Second one", "Third"]),
        ('- "quoted"\n* starred\n• dotted\n+ plus', ["quoted", "starred", "dotted", "plus"]),
        ("plain line\n\n  another   line  \n", ["plain line", "another line"]),
        ('<think>maybe [1, 2]</think>\n["after thinking"]', ["after thinking"]),
        ('["dup", "DUP", " dup ", "", "   ", "other"]', ["dup", "other"]),
        ('1. "Refund please",\n2. "Refund please"', ["Refund please"]),
        ("", []),
    ],
)
def test_parse_examples(reply: str, expected: list[str]) -> None:
    assert parse_examples(reply) == expected


def test_long_examples_are_cut_at_a_word_boundary() -> None:
    text = "please " * 60
    (cut,) = parse_examples(json.dumps([text]), max_chars=40)
    assert cut == "please please please please please"
    assert len(cut) <= 40


@given(st.lists(st.text(max_size=400), max_size=20), st.integers(min_value=10, max_value=300))
def test_parsed_examples_are_clean(items: list[str], max_chars: int) -> None:
    for reply in (json.dumps(items), "\n".join(f"- {item}" for item in items)):
        parsed = parse_examples(reply, max_chars=max_chars)
        assert all(text and text == text.strip() and len(text) <= max_chars for text in parsed)
        assert len({text.casefold() for text in parsed}) == len(parsed)
        assert all("\n" not in text for text in parsed)


@given(st.lists(st.from_regex(r"[A-Za-z][A-Za-z ,?']{0,40}[a-z?]", fullmatch=True), max_size=12, unique=True))
def test_clean_distinct_json_items_come_back_unchanged(items: list[str]) -> None:
    items = [" ".join(item.split()) for item in items]
    unique = list({item.casefold(): item for item in reversed(items)}.values())[::-1]
    assert parse_examples(json.dumps(items)) == [i for i in items if i in unique]


def test_prompt_names_condition_action_and_count() -> None:
    system, user = examples_prompt(REFUND, 7)
    assert system["role"] == "system"
    assert "JSON array" in system["content"]
    assert "customer asks for a refund" in user["content"]
    assert "explain the refund policy" in user["content"]
    assert "Write 7 different messages" in user["content"]
    assert "will:" not in examples_prompt(GREETING, 3)[1]["content"]


@pytest.mark.parametrize("n", [0, -1, 101, 2.5, True])
def test_bad_n_is_rejected(n: object) -> None:
    with pytest.raises(InvalidInputError, match="number of examples"):
        examples_prompt(REFUND, n)  # type: ignore[arg-type]


def test_generate_examples_over_http(llm_server: FakeLLMServer) -> None:
    reply = ["I want a refund", "customer asks for a refund", "Money back please", "i want a REFUND", "Refund now"]
    llm_server.reply(json.dumps(reply))
    llm = OpenAIClient(llm_server.openai_url, "gpt-test", retry=FAST)
    examples = generate_examples(REFUND, 3, llm=llm, seed=4)
    assert examples == ["I want a refund", "Money back please", "Refund now"]
    body = llm_server.requests[-1].body
    assert body["seed"] == 4
    assert body["temperature"] == 0.7
    assert "Write 3 different messages" in body["messages"][1]["content"]


def test_generate_examples_uses_the_configured_llm(llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMA_LLM_URL", llm_server.url + "/api")
    monkeypatch.setenv("NORMA_LLM_MODEL", "env-model")
    llm_server.reply("1. hello there\n2. hi")
    assert generate_examples(GREETING, 5) == ["hello there", "hi"]
    assert llm_server.requests[-1].model == "env-model"
    assert llm_server.requests[-1].path == "/api/chat"


def test_generate_examples_without_an_llm_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="NORMA_LLM_URL"):
        generate_examples(REFUND)


def test_generate_examples_lets_backend_errors_through(llm_server: FakeLLMServer) -> None:
    llm_server.error(503, times=10)
    with pytest.raises(BackendError, match="HTTP 503"):
        generate_examples(REFUND, llm=OllamaClient(llm_server.url, "m", retry=FAST))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RuleStore]:
    opened = open_store(f"sqlite:///{tmp_path}/norma.db")
    opened.upsert_rules("acme", [REFUND, GREETING, Rule(id="has", condition_text="x", examples=("kept",))])
    yield opened
    opened.close()


def test_fill_examples_writes_and_reembeds(store: RuleStore, llm_server: FakeLLMServer) -> None:
    before = store.version("acme")
    llm_server.reply('["hello!", "hi there"]').reply('["refund me", "I want my money back", "give it back"]')
    llm = OllamaClient(llm_server.url, "m", retry=FAST)
    result = fill_examples(store, "acme", llm=llm, n=3)
    # list_rules is sorted by id: "greet" is asked first, then "refund"; "has" already has examples.
    assert result.updated == {
        "greet": ("hello!", "hi there"),
        "refund": ("refund me", "I want my money back", "give it back"),
    }
    assert result.skipped == ("has",)
    assert result.failed == {}
    assert result.version == before + 1 == store.version("acme")
    assert store.get_rule("acme", "refund").examples == ("refund me", "I want my money back", "give it back")
    assert store.get_rule("acme", "has").examples == ("kept",)
    vectors = store.load_vectors("acme", get_embedder().model_id)
    assert vectors["refund"].shape == (4, get_embedder().dim)
    expected = get_embedder().embed(["I want my money back"])[0]
    assert float(np.dot(vectors["refund"][2], expected)) > 0.999
    assert result.to_dict()["updated"]["greet"] == ["hello!", "hi there"]


def test_fill_examples_for_chosen_rules_with_overwrite(store: RuleStore, llm_server: FakeLLMServer) -> None:
    llm_server.reply('["new one"]')
    llm = OllamaClient(llm_server.url, "m", retry=FAST)
    result = fill_examples(store, "acme", ["has", "has"], llm=llm, overwrite=True)
    assert result.updated == {"has": ("new one",)}
    assert store.get_rule("acme", "has").examples == ("new one",)
    assert len(llm_server.requests) == 1


def test_fill_examples_writes_nothing_when_the_llm_fails(store: RuleStore, llm_server: FakeLLMServer) -> None:
    before = store.version("acme")
    llm_server.reply('["hello"]').error(500, times=10)
    with pytest.raises(BackendError):
        fill_examples(store, "acme", llm=OllamaClient(llm_server.url, "m", retry=FAST))
    assert store.version("acme") == before
    assert store.get_rule("acme", "greet").examples == ()


def test_fill_examples_reports_rules_without_usable_examples(store: RuleStore, llm_server: FakeLLMServer) -> None:
    before = store.version("acme")
    llm_server.reply("   ")
    result = fill_examples(store, "acme", ["greet"], llm=OllamaClient(llm_server.url, "m", retry=FAST))
    assert result.updated == {}
    assert list(result.failed) == ["greet"]
    assert result.version == before == store.version("acme")


def test_fill_examples_checks_rule_ids_before_calling_the_llm(store: RuleStore, llm_server: FakeLLMServer) -> None:
    llm = OllamaClient(llm_server.url, "m", retry=FAST)
    with pytest.raises(NotFoundError):
        fill_examples(store, "acme", ["refund", "nope"], llm=llm)
    with pytest.raises(InvalidInputError, match="one string"):
        fill_examples(store, "acme", "refund", llm=llm)
    assert llm_server.requests == []
