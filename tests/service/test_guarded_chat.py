"""``POST /v1/tenants/{tenant}/chat/completions``: the guarded endpoint, OpenAI-compatible, forwarding to a real
upstream on a loopback port (tests/service/_chat_upstream.py) whose answers are scripted.

The tenant's rules are those of tests/guard/test_guard.py, so each outcome is worked out by hand: an answer without
"refund policy" fails the ``policy`` check of the refund rule (:data:`BAD`), :data:`GOOD` passes.

The client side is httpx, except in :func:`test_an_openai_client_changes_only_its_base_url`, which runs the
``openai`` package itself (installed with the test dependencies, through ``openai-agents``) against ``norma serve``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from norma.guard import DEFAULT_FALLBACK
from norma.rules import Rule, load_rulebook
from norma.service import create_app
from norma.store import RuleStore, open_store
from tests.conftest import CliResult
from tests.service._chat_upstream import MODELS, ChatUpstream
from tests.service._server import free_port, serve_app, serve_process
from tests.service.conftest import asgi_client, bearer, make_settings

pytestmark = [pytest.mark.anyio, pytest.mark.model]

RULEBOOK = {
    "format": "norma.rulebook/v1",
    "tenant": "acme",
    "rules": [
        {
            "id": "refund",
            "condition_text": "customer asks for a refund of an order",
            "action_text": "explain the refund policy and give the form reference",
            "examples": ["I want my money back", "can I get a refund for my order"],
            "checks": [{"id": "policy", "kind": "contains", "terms": ["refund policy"]}],
        },
        {
            "id": "weather",
            "condition_text": "customer asks about the weather forecast",
            "action_text": "say you cannot forecast the weather",
            "examples": ["will it rain tomorrow"],
        },
        {
            "id": "no-cards",
            "condition_text": "customer shares payment details",
            "action_text": "never repeat a card number",
            "checks": [{"id": "no-card", "kind": "no_pii", "kinds": ["card"], "when": "always"}],
        },
    ],
}
GOOD = "Our refund policy applies: fill in form REF-1234."
BAD = "Fill in form REF-1234."
ASK = [
    {"role": "system", "content": "You are Acme's assistant."},
    {"role": "user", "content": "I want a refund for my order"},
]
UPSTREAM_KEY = "sk-upstream-SECRET-0123456789"
RULES_BLOCK = (
    "You are Acme's assistant.\n\n"
    "Follow these rules in your answer (rule ids in brackets):\n"
    "1. [refund] explain the refund policy and give the form reference\n"
    "2. [no-cards] if customer shares payment details: never repeat a card number"
)
PATH = "/v1/tenants/acme/chat/completions"


@pytest.fixture(scope="module")
def chat_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path: Path = tmp_path_factory.mktemp("chat") / "norma.db"
    return f"sqlite:///{path}"


@pytest.fixture(scope="module")
def chat_store(chat_db: str) -> Iterator[RuleStore]:
    store = open_store(chat_db)
    store.upsert_rules("acme", list(load_rulebook(RULEBOOK, tenant_id="acme").rules))
    globex = {**RULEBOOK["rules"][0], "tenant_id": "globex"}  # type: ignore[dict-item]
    store.upsert_rules("globex", [Rule.from_mapping(globex)])
    yield store
    store.close()


@pytest.fixture(scope="module")
def acme(chat_store: RuleStore) -> str:
    return chat_store.create_api_key("acme", name="chat")


@pytest.fixture(scope="module")
def globex(chat_store: RuleStore) -> str:
    return chat_store.create_api_key("globex", name="chat")


@pytest.fixture
def upstream() -> Iterator[ChatUpstream]:
    with ChatUpstream() as up:
        yield up


@contextlib.asynccontextmanager
async def guarded(store: RuleStore, url: str | None, **settings: Any) -> AsyncIterator[httpx.AsyncClient]:
    """The app over ``store`` forwarding to ``url`` (the upstream key set), an httpx client on it; the upstream's
    client closed after, as the app's shutdown does."""
    options: dict[str, Any] = {"upstream_url": url, "upstream_api_key": UPSTREAM_KEY, **settings}
    app = create_app(make_settings(**options), store=store)
    try:
        async with asgi_client(app) as http:
            yield http
    finally:
        await app.state.norma.http.aclose()


def ask(**extra: Any) -> dict[str, Any]:
    return {"model": "gpt-test", "messages": ASK, **extra}


def events(text: str) -> list[Any]:
    """The data of a server-sent event stream, in order (``[DONE]`` as the string)."""
    found: list[Any] = []
    for block in text.split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: "):
                payload = line[len("data: ") :]
                found.append(payload if payload == "[DONE]" else json.loads(payload))
    return found


def streamed_text(found: list[Any]) -> str:
    return "".join(
        c["delta"].get("content") or ""
        for e in found
        if isinstance(e, dict)
        for c in e.get("choices", [])
        if "delta" in c
    )


# --- the policies ---------------------------------------------------------------------------------------------------


async def test_a_passing_answer_in_the_openai_shape_with_the_rules_in_the_prompt(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    upstream.reply(GOOD)
    body = ask(temperature=0.3, max_tokens=50, user="u-1", seed=7, norma={"session": {"turn": 3}})
    async with guarded(chat_store, upstream.url) as http:
        response = await http.post(PATH, json=body, headers=bearer(acme))
    assert response.status_code == 200, response.text
    assert (response.headers["norma-verdict"], response.headers["norma-action"]) == ("pass", "passed")
    data = response.json()
    assert data["object"] == "chat.completion"
    assert (data["id"], data["system_fingerprint"]) == ("chatcmpl-up", "fp-upstream")  # the upstream's object
    assert data["choices"][0] == {
        "index": 0,
        "message": {"role": "assistant", "content": GOOD},
        "finish_reason": "stop",
    }
    assert data["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert data["norma"]["action"] == "passed"
    assert data["norma"]["report"]["verdict"] == "pass"
    assert [(r["rule_id"], r["why"]) for r in data["norma"]["rules"]] == [("refund", "matched"), ("no-cards", "always")]
    assert "answer" not in data["norma"]
    [seen] = upstream.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    assert seen.body == {  # every field as sent, the system message with the rules, no `norma`
        "model": "gpt-test",
        "messages": [{"role": "system", "content": RULES_BLOCK}, ASK[1]],
        "temperature": 0.3,
        "max_tokens": 50,
        "user": "u-1",
        "seed": 7,
    }


async def test_repair_asks_once_more_with_the_failed_checks(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    upstream.reply(BAD).reply(GOOD)
    async with guarded(chat_store, upstream.url) as http:
        response = await http.post(PATH, json=ask(), headers=bearer(acme))
    assert response.status_code == 200, response.text
    assert (response.headers["norma-verdict"], response.headers["norma-action"]) == ("pass", "repaired")
    data = response.json()
    assert data["choices"][0]["message"]["content"] == GOOD
    assert [a["verdict"] for a in data["norma"]["attempts"]] == ["fail", "pass"]
    assert data["usage"] == {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}  # both calls
    assert len(upstream.requests) == 2  # one extra call exactly
    repair = upstream.requests[1].messages
    assert repair[:2] == [{"role": "system", "content": RULES_BLOCK}, ASK[1]]
    assert repair[2] == {"role": "assistant", "content": BAD}
    assert repair[3]["role"] == "user"
    assert "[refund/policy]" in repair[3]["content"]


async def test_repair_stops_at_its_bound_then_blocks_and_the_failing_answer_never_leaves(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    upstream.reply(BAD, times=5)
    async with guarded(chat_store, upstream.url, guard_max_repairs=2) as http:
        response = await http.post(PATH, json=ask(), headers=bearer(acme))
    assert response.status_code == 200, response.text
    assert (response.headers["norma-verdict"], response.headers["norma-action"]) == ("fail", "blocked")
    assert len(upstream.requests) == 3
    data = response.json()
    assert data["choices"][0]["message"] == {"role": "assistant", "content": DEFAULT_FALLBACK}
    assert data["choices"][0]["finish_reason"] == "content_filter"
    assert BAD not in response.text


async def test_block_answers_the_fallback_without_asking_again(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    upstream.reply(BAD, times=2)
    async with guarded(chat_store, upstream.url) as http:  # the server says repair, the request says block
        response = await http.post(PATH, json=ask(norma={"policy": "block"}), headers=bearer(acme))
    assert (response.headers["norma-verdict"], response.headers["norma-action"]) == ("fail", "blocked")
    assert response.json()["choices"][0]["message"]["content"] == DEFAULT_FALLBACK
    assert response.json()["norma"]["policy"] == "block"
    assert len(upstream.requests) == 1


async def test_flag_answers_the_failing_answer_marked_failed(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    upstream.reply(BAD)
    async with guarded(chat_store, upstream.url, guard_policy="flag") as http:
        response = await http.post(PATH, json=ask(), headers=bearer(acme))
    assert (response.headers["norma-verdict"], response.headers["norma-action"]) == ("fail", "flagged")
    data = response.json()
    assert data["choices"][0]["message"]["content"] == BAD
    assert data["choices"][0]["finish_reason"] == "stop"
    assert data["norma"]["passed"] is False
    failed = [(r["rule_id"], c["check_id"]) for r in data["norma"]["report"]["rules"] for c in r["checks"]
              if c["status"] == "fail"]  # fmt: skip
    assert failed == [("refund", "policy")]
    assert len(upstream.requests) == 1


async def test_bad_requests_are_problems_and_reach_no_upstream(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    async with guarded(chat_store, upstream.url) as http:
        no_user = await http.post(PATH, json=ask(messages=[{"role": "system", "content": "x"}]), headers=bearer(acme))
        two = await http.post(PATH, json=ask(n=2), headers=bearer(acme))
        policy = await http.post(PATH, json=ask(norma={"policy": "ignore"}), headers=bearer(acme))
        parts = await http.post(
            PATH, json=ask(messages=[{"role": "user", "content": [{"type": "text"}]}]), headers=bearer(acme)
        )
    assert (no_user.status_code, no_user.json()["field"]) == (400, "messages")
    assert two.status_code == 422
    assert two.json()["field"] == "body.n"
    assert policy.status_code == 422
    assert policy.json()["field"] == "body.norma.policy"
    assert (parts.status_code, parts.json()["field"]) == (400, "messages[0].content")
    assert upstream.requests == []


async def test_no_upstream_configured_is_a_503(chat_store: RuleStore, acme: str) -> None:
    async with guarded(chat_store, None) as http:
        response = await http.post(PATH, json=ask(), headers=bearer(acme))
    assert response.status_code == 503
    assert "Retry-After" in response.headers


async def test_the_models_route_lists_the_upstreams_models(
    chat_store: RuleStore, acme: str, globex: str, upstream: ChatUpstream
) -> None:
    models_path = "/v1/tenants/acme/models"
    async with guarded(chat_store, upstream.url) as http:
        listed = await http.get(models_path, headers=bearer(acme))
        other = await http.get(models_path, headers=bearer(globex))
        none = await http.get(models_path)
    assert listed.status_code == 200
    assert listed.json() == MODELS
    assert [(r.path, r.headers["authorization"]) for r in upstream.requests] == [
        ("/v1/models", f"Bearer {UPSTREAM_KEY}")
    ]
    assert other.status_code == 404  # another tenant's key: as on every tenant route
    assert none.status_code == 401
    assert len(upstream.requests) == 1


async def test_the_models_route_without_an_upstream_or_with_a_broken_one(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    async with guarded(chat_store, None) as http:
        unset = await http.get("/v1/tenants/acme/models", headers=bearer(acme))
    upstream.status(500, "boom").raw(b"[1, 2]").raw(b'{"object": "list"}')
    async with guarded(chat_store, upstream.url) as http:
        broken, garbage, shapeless = [await http.get("/v1/tenants/acme/models", headers=bearer(acme)) for _ in range(3)]
    assert unset.status_code == 503
    assert "--upstream" in unset.json()["hint"]
    assert (broken.status_code, broken.json()["upstream_status"], broken.headers["retry-after"]) == (502, 500, "1")
    assert garbage.status_code == shapeless.status_code == 502
    assert (
        garbage.json()["detail"]
        == shapeless.json()["detail"]
        == ("the upstream's model list is not an OpenAI list (no data array)")
    )


# --- streaming ------------------------------------------------------------------------------------------------------


async def test_a_stream_in_repair_is_checked_before_a_byte_is_sent(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    upstream.reply(BAD).reply(GOOD)
    body = ask(stream=True, stream_options={"include_usage": True})
    async with guarded(chat_store, upstream.url) as http:
        response = await http.post(PATH, json=body, headers=bearer(acme))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert (response.headers["norma-verdict"], response.headers["norma-action"]) == ("pass", "repaired")
    found = events(response.text)
    assert found[-1] == "[DONE]"
    assert all(e["object"] == "chat.completion.chunk" for e in found[:-1])
    assert streamed_text(found) == GOOD  # the repaired answer only; the failing one never streamed
    assert BAD not in response.text
    assert found[-3]["choices"][0]["finish_reason"] == "stop"
    last = found[-2]
    assert last["choices"] == []
    assert last["norma"]["action"] == "repaired"
    assert last["usage"]["total_tokens"] == 30
    assert [("stream" in r.body, "stream_options" in r.body) for r in upstream.requests] == [(False, False)] * 2


async def test_a_stream_in_block_sends_the_fallback_as_content_filter(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    upstream.reply(BAD)
    async with guarded(chat_store, upstream.url, guard_policy="block") as http:
        response = await http.post(PATH, json=ask(stream=True), headers=bearer(acme))
    found = events(response.text)
    assert response.headers["norma-action"] == "blocked"
    assert streamed_text(found) == DEFAULT_FALLBACK
    assert found[-3]["choices"][0]["finish_reason"] == "content_filter"
    assert "usage" not in found[-2]  # not asked for
    assert found[-1] == "[DONE]"


async def test_a_stream_in_flag_passes_the_upstream_through_then_the_verdict(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    upstream.reply(BAD)
    async with guarded(chat_store, upstream.url, guard_policy="flag") as http:
        response = await http.post(PATH, json=ask(stream=True), headers=bearer(acme))
    assert response.status_code == 200
    assert "norma-verdict" not in response.headers  # sent before the answer was whole: the last event says
    found = events(response.text)
    assert upstream.requests[0].body["stream"] is True
    assert [e["choices"][0]["delta"].get("content") for e in found[:4]] == ["Fill", " in", " form", " REF-1234."]
    assert all(e["id"] == "chatcmpl-up" for e in found[:-1])  # the upstream's own events
    assert streamed_text(found) == BAD
    verdict = found[-2]
    assert verdict["choices"] == []
    assert verdict["norma"]["action"] == "flagged"
    assert verdict["norma"]["report"]["verdict"] == "fail"
    assert found[-1] == "[DONE]"


async def test_a_stream_in_flag_reads_lines_cut_anywhere_between_network_reads(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    """Events cut mid-line, a character cut mid-byte, CRLF line ends, a comment, ``[DONE]`` without a line end:
    every event passes, in order, and the verdict is that of the whole answer."""
    first = json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                        "choices": [{"index": 0, "delta": {"content": "Our refund policy: caf\u00e9 "}}]},
                       ensure_ascii=False).encode()  # fmt: skip
    second = json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                         "choices": [{"index": 0, "delta": {"content": "form REF-1."}}]}).encode()  # fmt: skip
    cut = first.index("\u00e9".encode()) + 1  # inside the two bytes of the accented letter
    upstream.pieces(
        b": keep-alive\r\n\r\ndata: " + first[:cut],
        first[cut:] + b"\r\n\r\ndata: " + second[:10],
        second[10:] + b"\r\n\r\ndata: [DONE]",
    )
    async with guarded(chat_store, upstream.url, guard_policy="flag") as http:
        response = await http.post(PATH, json=ask(stream=True), headers=bearer(acme))
    found = events(response.text)
    assert streamed_text(found) == "Our refund policy: caf\u00e9 form REF-1."
    assert found[-1] == "[DONE]"
    assert found[-2]["norma"]["report"]["verdict"] == "pass"
    assert [e["id"] for e in found[:-1]] == ["c1", "c1", "c1"]


async def test_a_stream_cut_by_the_upstream_ends_with_an_error_and_no_done(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    upstream.reply(GOOD, cut=True)
    async with guarded(chat_store, upstream.url, guard_policy="flag") as http:
        response = await http.post(PATH, json=ask(stream=True), headers=bearer(acme))
    found = events(response.text)
    assert found[0]["choices"][0]["delta"]["content"] == "Our"
    assert found[-1]["error"]["status"] == 502
    assert "[DONE]" not in found
    assert not any("norma" in e for e in found if isinstance(e, dict))


# --- faults ---------------------------------------------------------------------------------------------------------


async def test_an_upstream_that_is_down_is_a_502_with_retry_after(chat_store: RuleStore, acme: str) -> None:
    async with guarded(chat_store, f"http://127.0.0.1:{free_port()}/v1") as http:
        plain = await http.post(PATH, json=ask(), headers=bearer(acme))
        flagged = await http.post(PATH, json=ask(stream=True, norma={"policy": "flag"}), headers=bearer(acme))
    for response in (plain, flagged):
        assert response.status_code == 502
        assert response.headers["content-type"] == "application/problem+json"
        assert response.headers["retry-after"] == "1"
        assert "unreachable" in response.json()["detail"]


async def test_an_upstream_slower_than_the_timeout_is_a_504(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    upstream.reply(GOOD, delay=5.0).reply(GOOD, delay=5.0)
    async with guarded(chat_store, upstream.url, upstream_timeout=0.5) as http:
        started = time.monotonic()
        plain = await http.post(PATH, json=ask(), headers=bearer(acme))
        flagged = await http.post(PATH, json=ask(stream=True, norma={"policy": "flag"}), headers=bearer(acme))
        took = time.monotonic() - started
    for response in (plain, flagged):
        assert response.status_code == 504
        assert response.headers["retry-after"] == "5"
        assert "within 0.5 s" in response.json()["detail"]
    assert took < 4.0


@pytest.mark.parametrize(
    ("script", "detail"),
    [
        (lambda up: up.raw(b"<html>oops</html>", content_type="text/html"), "not JSON"),
        (lambda up: up.raw(b'{"id": "x", "choices": []}'), "without choices"),
        (lambda up: up.raw(b'{"choices": [{"message": {"content": null}}]}'), "no text content"),
        (lambda up: up.raw(b"[1, 2]"), "without choices"),
    ],
)
async def test_garbage_from_the_upstream_is_a_502(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream, script: Callable[[ChatUpstream], Any], detail: str
) -> None:
    script(upstream)
    async with guarded(chat_store, upstream.url) as http:
        response = await http.post(PATH, json=ask(), headers=bearer(acme))
    assert response.status_code == 502
    assert detail in response.json()["detail"]
    assert response.headers["retry-after"] == "1"


async def test_a_stream_that_is_not_a_stream_is_a_502(chat_store: RuleStore, acme: str, upstream: ChatUpstream) -> None:
    upstream.raw(b'{"choices": []}').empty_stream()
    async with guarded(chat_store, upstream.url, guard_policy="flag") as http:
        response = await http.post(PATH, json=ask(stream=True), headers=bearer(acme))
        empty = await http.post(PATH, json=ask(stream=True), headers=bearer(acme))
    assert response.status_code == 502
    assert "did not stream" in response.json()["detail"]
    assert empty.status_code == 502
    assert "no events" in empty.json()["detail"]


async def test_an_upstream_error_status_is_a_502_naming_it(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    upstream.status(400, "model 'gpt-test' does not exist").status(429, "slow down", retry_after="7")
    upstream.status(500, "boom")
    async with guarded(chat_store, upstream.url) as http:
        bad, limited, broken = [await http.post(PATH, json=ask(), headers=bearer(acme)) for _ in range(3)]
    assert bad.status_code == limited.status_code == broken.status_code == 502
    assert bad.json()["upstream_status"] == 400
    assert bad.json()["detail"] == "the upstream answered 400: model 'gpt-test' does not exist"
    assert "retry-after" not in bad.headers  # the same request fails again
    assert (limited.json()["upstream_status"], limited.headers["retry-after"]) == (429, "7")
    assert (broken.json()["upstream_status"], broken.headers["retry-after"]) == (500, "1")


async def test_the_upstream_key_is_never_echoed(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    upstream.status(401, f"Incorrect API key provided: {UPSTREAM_KEY}.")
    settings = make_settings(upstream_url=upstream.url, upstream_api_key=UPSTREAM_KEY)
    app = create_app(settings, store=chat_store)
    with caplog.at_level(logging.DEBUG):
        async with asgi_client(app) as http:
            response = await http.post(PATH, json=ask(), headers=bearer(acme))
            docs = await http.get("/openapi.json")
        await app.state.norma.http.aclose()
    assert upstream.requests[0].headers["authorization"] == f"Bearer {UPSTREAM_KEY}"  # it was sent
    assert response.status_code == 502
    assert response.json()["detail"] == "the upstream answered 401: Incorrect API key provided: <api key>."
    for text in (response.text, str(response.headers), docs.text, caplog.text, repr(settings), str(settings),
                 settings.model_dump_json(), repr(app.state.norma.upstream)):  # fmt: skip
        assert UPSTREAM_KEY not in text
    assert "/v1/tenants/{tenant}/chat/completions" in docs.json()["paths"]


# --- tenants --------------------------------------------------------------------------------------------------------


async def test_a_key_of_another_tenant_cannot_use_the_route(
    chat_store: RuleStore, acme: str, globex: str, upstream: ChatUpstream
) -> None:
    async with guarded(chat_store, upstream.url) as http:
        other = await http.post(PATH, json=ask(), headers=bearer(globex))
        reverse = await http.post("/v1/tenants/globex/chat/completions", json=ask(), headers=bearer(acme))
        none = await http.post(PATH, json=ask())
        own = await http.post("/v1/tenants/globex/chat/completions", json=ask(), headers=bearer(globex))
    assert other.status_code == reverse.status_code == 404
    assert none.status_code == 401
    assert own.status_code == 200
    assert len(upstream.requests) == 1  # only globex's own turn reached the upstream
    assert [r["rule_id"] for r in own.json()["norma"]["rules"]] == ["refund"]  # globex's rules, not acme's


# --- over real sockets ----------------------------------------------------------------------------------------------


def test_a_client_that_disconnects_cancels_the_upstream_call(chat_store: RuleStore, acme: str) -> None:
    with ChatUpstream(latency=10.0, chunk_delay=10.0) as up:
        settings = make_settings(upstream_url=up.url, upstream_timeout=60)
        with serve_app(create_app(settings, store=chat_store)) as url:
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(f"{url}{PATH}", json=ask(), headers=bearer(acme), timeout=1.0)
            assert up.wait_for(lambda: up.abandoned == 1, timeout=5.0)  # long before its 10 s answer
            up.latency = 0.0
            with httpx.stream(
                "POST", f"{url}{PATH}", json=ask(stream=True, norma={"policy": "flag"}), headers=bearer(acme)
            ) as streamed:
                first = next(streamed.iter_lines())
                assert first.startswith("data: ")
                assert '"Our"' in first
            assert up.wait_for(lambda: up.abandoned == 2, timeout=5.0)  # mid-stream, 10 s before its next word
            assert up.wait_for(lambda: up.open == 0, timeout=5.0)


def test_an_openai_client_changes_only_its_base_url(chat_store: RuleStore, acme: str) -> None:
    """The ``openai`` package itself, pointed at ``/v1/tenants/acme``: it lists the models, asks, and streams."""
    from openai import OpenAI

    with ChatUpstream() as up, serve_app(create_app(make_settings(upstream_url=up.url), store=chat_store)) as url:
        client = OpenAI(base_url=f"{url}/v1/tenants/acme", api_key=acme, max_retries=0, timeout=30)
        listed = [model.id for model in client.models.list()]
        answer = client.chat.completions.create(model="m", messages=ASK[1:])  # type: ignore[arg-type]
        stream = client.chat.completions.create(model="m", messages=ASK[1:], stream=True)  # type: ignore[arg-type]
        pieces = [chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices]
        client.close()
    assert listed == [model["id"] for model in MODELS["data"]]
    assert answer.choices[0].message.content == up.default
    assert answer.model_extra is not None
    assert answer.model_extra["norma"]["report"]["verdict"] == "pass"
    assert "".join(pieces) == up.default


def test_norma_serve_forwards_to_its_upstream_with_the_key_from_the_environment(
    chat_db: str, acme: str, tmp_path: Path
) -> None:
    db = chat_db
    with ChatUpstream() as up:
        up.reply(BAD)
        args = ["--db", db, "--upstream", up.url, "--guard-policy", "block", "--upstream-timeout", "9"]
        env = {"NORMA_UPSTREAM_API_KEY": UPSTREAM_KEY}
        log = tmp_path / "serve.log"
        with serve_process(args, log=log, env=env) as (url, proc):
            response = httpx.post(f"{url}{PATH}", json=ask(), headers=bearer(acme), timeout=60)
            assert proc.stdout is not None
        assert up.requests[0].headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    assert response.status_code == 200, response.text
    assert response.headers["norma-action"] == "blocked"
    assert UPSTREAM_KEY not in log.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--upstream", "ftp://model.example"], "--upstream"),
        (["--upstream", "https://user:pw@model.example/v1"], "NORMA_UPSTREAM_API_KEY"),
        (["--upstream-timeout", "0"], "--upstream-timeout"),
        (["--guard-policy", "ignore"], "--guard-policy"),
        (["--guard-max-repairs", "6"], "--guard-max-repairs"),
    ],
)
def test_bad_upstream_options_exit_2(run_cli: Callable[..., CliResult], args: list[str], message: str) -> None:
    result = run_cli("serve", *args)
    assert result.code == 2
    assert message in result.err
    assert "pw@" not in result.err


def test_the_settings_read_the_upstream_from_the_environment() -> None:
    from norma.service import ServiceSettings

    env = {
        "NORMA_UPSTREAM_URL": "https://api.example.com/v1/",
        "NORMA_UPSTREAM_API_KEY": UPSTREAM_KEY,
        "NORMA_UPSTREAM_TIMEOUT": "12",
        "NORMA_GUARD_POLICY": "flag",
        "NORMA_GUARD_MAX_REPAIRS": "2",
    }
    settings = ServiceSettings.from_env(env)
    assert settings.upstream_url == "https://api.example.com/v1"
    assert settings.upstream_api_key is not None
    assert settings.upstream_api_key.get_secret_value() == UPSTREAM_KEY
    assert (settings.upstream_timeout, settings.guard_policy, settings.guard_max_repairs) == (12.0, "flag", 2)
    again = ServiceSettings.from_env({"NORMA_SERVICE_SETTINGS": settings.to_env()})  # what the workers read
    assert again == settings
    assert again.upstream_api_key == settings.upstream_api_key
    assert UPSTREAM_KEY not in repr(settings)


async def test_an_unreadable_or_endless_retry_after_is_not_passed_on(
    chat_store: RuleStore, acme: str, upstream: ChatUpstream
) -> None:
    """A Retry-After that is not a finite number of seconds is read as none: the gateway's own default (1 s for a
    503) is answered, never an error of the gateway."""
    for said in ("inf", "1e400", "nan", "soon"):
        upstream.status(503, "busy", retry_after=said)
    async with guarded(chat_store, upstream.url) as http:
        answers = [await http.post(PATH, json=ask(), headers=bearer(acme)) for _ in range(4)]
    assert [a.status_code for a in answers] == [502] * 4
    assert [a.headers["retry-after"] for a in answers] == ["1"] * 4
    assert [a.json()["upstream_status"] for a in answers] == [503] * 4
