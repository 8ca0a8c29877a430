"""``build_query(..., llm=...)``: the LLM phrases the names query; static check, hints and fallbacks."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from norma.llm import OllamaClient, OpenAIClient
from norma.names import build_query
from norma.names._query import query_phrasing_prompt
from tests._llm_server import FakeLLMServer
from tests.llm.conftest import FAST

LABELS: dict[str, Any] = {
    "variation_count": 8,
    "phonetic_similarity": {"Light": 0.2, "Medium": 0.6, "Far": 0.2},
    "orthographic_similarity": {"Medium": 1.0},
    "rule_based": {"rule_percentage": 30, "selected_rules": ["replace_double_letters_with_single_letter"]},
}
FIXED = (
    "The following name is the seed name to generate variations for: {name}. Generate 8 variations of the name "
    "{name}, ensuring phonetic similarity: 20% Light, 60% Medium, 20% Far, and orthographic similarity: "
    "100% Medium, and also include 30% of variations that follow: Additionally, generate variations that: "
    "Replace double letters with a single letter."
)
GOOD = (
    "Please produce 8 alternative spellings of {name}. Phonetic similarity should be 20% Light, 60% Medium and "
    "20% Far; orthographic similarity 100% Medium. About 30% of them should replace double letters with a "
    "single letter."
)


def client(server: FakeLLMServer) -> OllamaClient:
    return OllamaClient(server.url, "phraser", retry=FAST)


def test_llm_phrasing_that_states_everything_is_used_as_is(llm_server: FakeLLMServer) -> None:
    llm_server.reply(GOOD)
    query = build_query("Anna Bell", labels=LABELS, llm=client(llm_server))
    assert query.template == GOOD
    assert query.phrased_by == "phraser"
    assert query.text.startswith("Please produce 8 alternative spellings of Anna Bell.")
    assert query.labels == LABELS


def test_llm_phrasing_that_loses_requirements_gets_validation_hints(llm_server: FakeLLMServer) -> None:
    lossy = "Write some spellings of {name} that sound alike: 20% Light, 60% Medium, 20% Far; 100% Medium; 30% rules."
    llm_server.reply(lossy)
    query = build_query(labels=LABELS, llm=client(llm_server))
    assert query.template.startswith(lossy + "\n[VALIDATION HINTS]: ")
    hints = query.template.split("[VALIDATION HINTS]: ", 1)[1]
    assert "state the number of variations (8)" in hints
    assert "Replace double letters with a single letter" in hints
    assert query.phrased_by == "phraser"


def test_reply_without_name_placeholder_falls_back_to_the_fixed_template(llm_server: FakeLLMServer) -> None:
    llm_server.reply(GOOD.replace("{name}", "the name"))
    query = build_query("Anna", labels=LABELS, llm=client(llm_server))
    assert query.template == FIXED
    assert query.phrased_by is None
    assert len(llm_server.requests) == 1


def test_unreachable_llm_falls_back_to_the_fixed_template() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    down = OllamaClient(f"http://127.0.0.1:{port}", "m", retry=FAST)
    query = build_query("Anna", labels=LABELS, llm=down)
    assert (query.template, query.phrased_by) == (FIXED, None)


def test_failing_llm_falls_back_to_the_fixed_template(llm_server: FakeLLMServer) -> None:
    llm_server.error(500, times=10)
    query = build_query(labels=LABELS, llm=client(llm_server))
    assert (query.template, query.phrased_by) == (FIXED, None)
    assert len(llm_server.requests) == FAST.max_retries + 1


@pytest.mark.parametrize("wrapped", [f"```\n{GOOD}\n```", f'"{GOOD}"', f"```text\n{GOOD}```", f"  {GOOD}\n\n"])
def test_fences_and_quotes_around_the_reply_are_removed(llm_server: FakeLLMServer, wrapped: str) -> None:
    llm_server.reply(wrapped)
    assert build_query(labels=LABELS, llm=client(llm_server)).template == GOOD


def test_the_prompt_states_every_requirement_and_the_seed_is_passed(llm_server: FakeLLMServer) -> None:
    llm_server.reply(GOOD)
    build_query(seed=11, labels=LABELS, llm=OpenAIClient(llm_server.openai_url, "gpt-test", retry=FAST))
    body = llm_server.requests[-1].body
    assert body["seed"] == 11
    assert body["temperature"] == 0.0
    system, user = body["messages"]
    assert system["role"] == "system"
    assert user["role"] == "user"
    for needle in (
        "{name}",
        "exactly 8 variations",
        "20% Light, 60% Medium, 20% Far",
        "100% Medium",
        "30%",
        "Replace double letters with a single letter",
    ):
        assert needle in user["content"]


def test_random_labels_are_drawn_the_same_with_and_without_llm(llm_server: FakeLLMServer) -> None:
    llm_server.reply("no placeholder here")
    with_llm = build_query("Li", seed=5, llm=client(llm_server))
    without = build_query("Li", seed=5)
    assert with_llm == without


def test_phrasing_prompt_rejects_bad_labels() -> None:
    from norma.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="variation_count"):
        query_phrasing_prompt({"phonetic_similarity": {"Medium": 1.0}})
