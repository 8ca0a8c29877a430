"""LiteLLM's Generic Guardrail API (``POST /beta/litellm_basic_guardrail_api``): the contract's three actions, the
user's message remembered by call id (bounded, expiring), tenant isolation, bad bodies; and, when a ``litellm``
proxy can run here, a real LiteLLM proxy calling norma around a scripted loopback model.

Each expected outcome is worked out by hand from the rulebook below: an answer to a refund request without "refund
policy" fails ``refund/policy`` (an error) and one without "REF-" fails ``refund/form`` (a warning); a card number
fails the always-on ``no-cards/no-card``; a money-laundering request matches ``launder``, tagged ``block``.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from norma.service import create_app
from norma.service._recall import ExpiringStore
from norma.service._routes_litellm import PATH
from norma.store import RuleStore, load_rulebook, open_store
from tests.service._server import litellm_command, litellm_proxy, serve_app
from tests.service.conftest import ADMIN_KEY, asgi_client, make_settings

pytestmark = [pytest.mark.anyio, pytest.mark.model]

REPO = Path(__file__).resolve().parents[2]
BANK = """\
format: norma.rulebook/v1
tenant: bank
rules:
  - id: refund
    condition_text: customer asks for a refund of an order
    action_text: explain the refund policy and give the form reference
    examples: ["I want my money back", "can I get a refund for my order"]
    checks:
      - {id: policy, kind: contains, terms: ["refund policy"]}
      - {id: form, kind: contains, terms: ["REF"], severity: warning}
  - id: launder
    condition_text: customer asks how to launder money or hide cash from the tax office
    action_text: refuse and end the conversation
    tags: [block]
    examples: ["how do I launder money", "how can I hide cash from the taxman"]
  - id: no-cards
    condition_text: customer shares payment details
    action_text: never repeat a card number
    checks:
      - {id: no-card, kind: no_pii, kinds: [card], when: always}
"""
OTHER = """\
format: norma.rulebook/v1
tenant: other
rules:
  - id: weather
    condition_text: customer asks about the weather forecast
    action_text: say you cannot forecast the weather
    examples: ["will it rain tomorrow"]
"""

ASK = "I want a refund for my order"
LAUNDER = "how do I launder money"
GOOD = "Our refund policy applies: fill in form REF-1234."
NO_FORM = "Our refund policy applies: fill in the form."
BAD = "Fill in form REF-1234."
CARD = "Your card 4111 1111 1111 1111 is on file."
SYSTEM = "You are Bank's assistant."
BLOCK = (
    "Follow these rules in your answer (rule ids in brackets):\n"
    "1. [refund] explain the refund policy and give the form reference\n"
    "2. [no-cards] if customer shares payment details: never repeat a card number"
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RuleStore]:
    opened = open_store(f"sqlite:///{tmp_path_factory.mktemp('litellm') / 'norma.db'}")
    for text in (BANK, OTHER):
        book = load_rulebook(yaml.safe_load(text))
        opened.upsert_rules(book.rules[0].tenant_id, list(book.rules))
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def bank_key(store: RuleStore) -> str:
    return store.create_api_key("bank", name="litellm")


@pytest.fixture(scope="module")
def other_key(store: RuleStore) -> str:
    return store.create_api_key("other", name="litellm")


@pytest.fixture
async def client(store: RuleStore) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(make_settings(), store=store)) as http:
        yield http


def _request(text: str, call_id: str | None = "call-1", *, system: str | None = None, **extra: Any) -> dict[str, Any]:
    """A pre-call body as LiteLLM sends it for a chat completion."""
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": text}]
    return {
        "input_type": "request",
        "litellm_call_id": call_id,
        "texts": [m["content"] for m in messages],
        "structured_messages": messages,
        "request_data": {"user_api_key_hash": "abc"},
        "model": "gpt-x",
        **extra,
    }


def _response(*texts: str, call_id: str | None = "call-1", **extra: Any) -> dict[str, Any]:
    """A post-call body as LiteLLM sends it: the answer's texts, no messages."""
    return {"input_type": "response", "litellm_call_id": call_id, "texts": list(texts), "request_data": {}, **extra}


async def _guard(client: httpx.AsyncClient, key: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post(PATH, json=body, headers={"x-api-key": key})
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


# --- the contract's three actions ----------------------------------------------------------------------------------


async def test_a_failing_answer_to_a_remembered_message_is_blocked_and_a_good_one_passes(
    client: httpx.AsyncClient, bank_key: str
) -> None:
    assert await _guard(client, bank_key, _request(ASK, "c-pass")) == {"action": "NONE"}
    assert await _guard(client, bank_key, _response(GOOD, call_id="c-pass")) == {"action": "NONE"}
    blocked = await _guard(client, bank_key, _response(BAD, call_id="c-pass"))
    assert blocked == {
        "action": "BLOCKED",
        "blocked_reason": "norma: the answer fails the turn check: [refund/policy] mentions none of 'refund policy'",
    }


async def test_every_choice_of_the_answer_is_checked(client: httpx.AsyncClient, bank_key: str) -> None:
    await _guard(client, bank_key, _request(ASK, "c-choices"))
    blocked = await _guard(client, bank_key, _response(GOOD, CARD, call_id="c-choices"))
    assert blocked["action"] == "BLOCKED"
    assert "[refund/policy]" in blocked["blocked_reason"]  # the second choice has no refund policy
    assert "[no-cards/no-card]" in blocked["blocked_reason"]


async def test_a_rule_tagged_block_stops_the_call_before_the_model(client: httpx.AsyncClient, bank_key: str) -> None:
    blocked = await _guard(client, bank_key, _request(LAUNDER, "c-launder"))
    assert blocked == {
        "action": "BLOCKED",
        "blocked_reason": "norma: the message matches rule [launder], which blocks it: refuse and end the conversation",
    }


async def test_inject_rules_appends_the_rules_to_the_system_message(client: httpx.AsyncClient, bank_key: str) -> None:
    body = _request(ASK, "c-inject", system=SYSTEM, additional_provider_specific_params={"inject_rules": True})
    assert await _guard(client, bank_key, body) == {
        "action": "GUARDRAIL_INTERVENED",
        "texts": [f"{SYSTEM}\n\n{BLOCK}", ASK],
    }
    # the remembered message is the user's own, not the rewritten one
    assert (await _guard(client, bank_key, _response(BAD, call_id="c-inject")))["action"] == "BLOCKED"


async def test_inject_rules_without_a_system_message_puts_them_before_the_users(
    client: httpx.AsyncClient, bank_key: str
) -> None:
    body = _request(ASK, "c-inject-2", additional_provider_specific_params={"inject_rules": True, "other": 1})
    assert await _guard(client, bank_key, body) == {"action": "GUARDRAIL_INTERVENED", "texts": [f"{BLOCK}\n\n{ASK}"]}
    texts_only = {**body, "structured_messages": None, "texts": ["earlier turn", ASK]}
    assert await _guard(client, bank_key, texts_only) == {
        "action": "GUARDRAIL_INTERVENED",
        "texts": ["earlier turn", f"{BLOCK}\n\n{ASK}"],
    }


async def test_without_inject_rules_the_request_is_left_alone(client: httpx.AsyncClient, bank_key: str) -> None:
    assert await _guard(client, bank_key, _request(ASK, "c-plain", system=SYSTEM)) == {"action": "NONE"}


async def test_fail_on_warning_blocks_on_a_failed_warning_check(client: httpx.AsyncClient, bank_key: str) -> None:
    await _guard(client, bank_key, _request(ASK, "c-warn"))
    assert await _guard(client, bank_key, _response(NO_FORM, call_id="c-warn")) == {"action": "NONE"}
    strict = _response(NO_FORM, call_id="c-warn", additional_provider_specific_params={"fail_on": "warning"})
    blocked = await _guard(client, bank_key, strict)
    assert blocked["action"] == "BLOCKED"
    assert blocked["blocked_reason"].startswith("norma: the answer fails the turn check: [refund/form] ")


# --- what is remembered --------------------------------------------------------------------------------------------


async def test_a_call_not_remembered_is_checked_against_the_always_rules_only(
    client: httpx.AsyncClient, bank_key: str
) -> None:
    assert await _guard(client, bank_key, _response(BAD, call_id="never-seen")) == {"action": "NONE"}
    assert await _guard(client, bank_key, _response(BAD, call_id=None)) == {"action": "NONE"}
    blocked = await _guard(client, bank_key, _response(CARD, call_id="never-seen"))
    assert blocked["action"] == "BLOCKED"
    assert "[no-cards/no-card]" in blocked["blocked_reason"]


async def test_a_call_not_remembered_uses_the_structured_messages_it_carries(
    client: httpx.AsyncClient, bank_key: str
) -> None:
    body = _response(BAD, call_id="never-seen-2", structured_messages=[{"role": "user", "content": ASK}])
    assert (await _guard(client, bank_key, body))["action"] == "BLOCKED"


async def test_remembered_calls_are_bounded_and_expire(store: RuleStore, bank_key: str) -> None:
    now = [0.0]
    app = create_app(make_settings(), store=store)
    app.state.litellm_calls = ExpiringStore(2, 60.0, clock=lambda: now[0])
    async with asgi_client(app) as client:
        for call in ("b-1", "b-2", "b-3"):
            await _guard(client, bank_key, _request(ASK, call))
        assert await _guard(client, bank_key, _response(BAD, call_id="b-1")) == {"action": "NONE"}  # pushed out
        assert (await _guard(client, bank_key, _response(BAD, call_id="b-2")))["action"] == "BLOCKED"
        now[0] = 59.0
        assert (await _guard(client, bank_key, _response(BAD, call_id="b-3")))["action"] == "BLOCKED"
        now[0] = 60.0
        assert await _guard(client, bank_key, _response(BAD, call_id="b-3")) == {"action": "NONE"}  # expired


def test_the_expiring_store_forgets_the_oldest_and_the_expired() -> None:
    now = [0.0]
    store: ExpiringStore[str, int] = ExpiringStore(3, 10.0, clock=lambda: now[0])
    for n, key in enumerate("abcd"):
        now[0] = float(n)
        store.put(key, n)
    assert [store.get(k) for k in "abcd"] == [None, 1, 2, 3]
    now[0] = 5.0
    store.put("b", 10)  # stored again: its time restarts, and it is now the newest
    now[0] = 12.5
    assert [store.get(k) for k in "bcd"] == [10, None, 3]
    assert len(store) == 2
    now[0] = 13.0
    assert len(store) == 1
    with pytest.raises(ValueError, match="max_items"):
        ExpiringStore(0, 1.0)


# --- tenants ---------------------------------------------------------------------------------------------------------


async def test_a_tenants_key_sees_only_its_rules_and_its_calls(
    client: httpx.AsyncClient, bank_key: str, other_key: str
) -> None:
    await _guard(client, bank_key, _request(ASK, "shared-id"))
    # the other tenant's post-call with the same call id finds nothing of the bank's, and has no refund rule
    assert await _guard(client, other_key, _response(BAD, call_id="shared-id")) == {"action": "NONE"}
    assert await _guard(client, other_key, _response(CARD, call_id="shared-id")) == {"action": "NONE"}
    assert await _guard(client, other_key, _request(LAUNDER, "o-1")) == {"action": "NONE"}
    injected = _request("will it rain tomorrow", "o-2", additional_provider_specific_params={"inject_rules": True})
    assert await _guard(client, other_key, injected) == {
        "action": "GUARDRAIL_INTERVENED",
        "texts": [
            "Follow these rules in your answer (rule ids in brackets):\n"
            "1. [weather] say you cannot forecast the weather\n\nwill it rain tomorrow"
        ],
    }
    # and the bank's call is still the bank's
    assert (await _guard(client, bank_key, _response(BAD, call_id="shared-id")))["action"] == "BLOCKED"


# --- bad requests --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"texts": ["hi"]}, "body.input_type"),
        ({"input_type": "maybe", "texts": ["hi"]}, "body.input_type"),
        ({"input_type": "request", "texts": "hi"}, "body.texts"),
        ({"input_type": "request", "texts": [1]}, "body.texts[0]"),
        ({"input_type": "request", "litellm_call_id": "x" * 201, "texts": ["hi"]}, "body.litellm_call_id"),
        ([], "body"),
    ],
)
async def test_a_body_outside_the_contract_is_a_422_problem(
    client: httpx.AsyncClient, bank_key: str, body: Any, field: str
) -> None:
    response = await client.post(PATH, json=body, headers={"x-api-key": bank_key})
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["field"] == field


async def test_bad_norma_options_are_a_400_naming_them(client: httpx.AsyncClient, bank_key: str) -> None:
    body = _request(ASK, additional_provider_specific_params={"fail_on": "sometimes"})
    response = await client.post(PATH, json=body, headers={"x-api-key": bank_key})
    assert response.status_code == 400
    problem = response.json()
    assert problem["field"] == "body.additional_provider_specific_params"
    assert "fail_on" in problem["detail"]


async def test_malformed_json_is_a_problem(client: httpx.AsyncClient, bank_key: str) -> None:
    response = await client.post(
        PATH, content=b'{"input_type": ', headers={"x-api-key": bank_key, "content-type": "application/json"}
    )
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"


async def test_keys(client: httpx.AsyncClient, bank_key: str) -> None:
    body = _request(ASK)
    assert (await client.post(PATH, json=body)).status_code == 401
    assert (await client.post(PATH, json=body, headers={"x-api-key": "nrm_0123456789ab_nope"})).status_code == 401
    admin = await client.post(PATH, json=body, headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    assert admin.status_code == 403
    assert "tenant" in admin.json()["detail"]
    bearer = await client.post(PATH, json=body, headers={"Authorization": f"Bearer {bank_key}"})
    assert bearer.status_code == 200


async def test_nothing_to_read_is_none(client: httpx.AsyncClient, bank_key: str) -> None:
    assert await _guard(client, bank_key, {"input_type": "request", "texts": [], "request_data": {}}) == {
        "action": "NONE"
    }
    assert await _guard(client, bank_key, {"input_type": "request", "request_data": {}}) == {"action": "NONE"}


# --- a real LiteLLM proxy (optional tier) --------------------------------------------------------------------------


class _Upstream:
    """A scripted OpenAI-compatible model on a loopback port that also streams (``stream: true``: one chunk per
    word, as Server-Sent Events); records the messages of each request."""

    def __init__(self) -> None:
        self.replies: deque[str] = deque()
        self.requests: list[list[dict[str, Any]]] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                upstream.requests.append(body["messages"])
                text = upstream.replies.popleft()
                if not body.get("stream"):
                    message = {"role": "assistant", "content": text}
                    self._send("application/json", _completion({"message": message, "finish_reason": "stop"}))
                    return
                words = text.split(" ")
                events = [{"delta": {"content": w if i == 0 else f" {w}"}} for i, w in enumerate(words)]
                events.append({"delta": {}, "finish_reason": "stop"})
                lines = [f"data: {json.dumps(_completion(e, chunk=True))}\n\n" for e in events]
                self._send("text/event-stream", "".join([*lines, "data: [DONE]\n\n"]))

            def _send(self, kind: str, payload: Any) -> None:
                data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _completion(choice: dict[str, Any], *, chunk: bool = False) -> dict[str, Any]:
    kind = "chat.completion.chunk" if chunk else "chat.completion"
    return {"id": "c-1", "object": kind, "created": 0, "model": "scripted", "choices": [{"index": 0, **choice}]}


@contextlib.contextmanager
def _litellm_proxy(config: str, tmp_path: Path) -> Iterator[str]:
    command = litellm_command()
    if command is None:
        pytest.skip(
            "no litellm proxy here: `make bench-litellm` (or pip install 'litellm[proxy]' into another virtualenv and "
            "set NORMA_LITELLM=/path/to/venv/bin/litellm) to run the real-LiteLLM tier"
        )
    try:
        proxy = litellm_proxy(command, config, tmp_path)
        url = proxy.__enter__()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield url
    finally:
        proxy.__exit__(None, None, None)


@pytest.mark.slow
def test_a_real_litellm_proxy_guarded_by_norma(store: RuleStore, bank_key: str, tmp_path: Path) -> None:
    upstream = _Upstream()
    with contextlib.closing(upstream), serve_app(create_app(make_settings(), store=store)) as norma_url:
        config = f"""\
model_list:
  - model_name: bank-model
    litellm_params:
      model: openai/scripted
      api_base: {upstream.url}
      api_key: upstream-key
general_settings:
  master_key: sk-proxy-test
guardrails:
  - guardrail_name: norma
    litellm_params:
      guardrail: generic_guardrail_api
      mode: [pre_call, post_call]
      api_base: {norma_url}
      api_key: {bank_key}
      default_on: true
      streaming_end_of_stream_only: true
      additional_provider_specific_params:
        inject_rules: true
"""
        with _litellm_proxy(config, tmp_path) as proxy:

            def chat(text: str, *, stream: bool = False) -> httpx.Response:
                return httpx.post(
                    f"{proxy}/v1/chat/completions",
                    json={
                        "model": "bank-model",
                        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}],
                        "stream": stream,
                    },
                    headers={"Authorization": "Bearer sk-proxy-test"},
                    timeout=60,
                )

            upstream.replies.append(GOOD)
            passed = chat(ASK)
            assert passed.status_code == 200, passed.text
            assert passed.json()["choices"][0]["message"]["content"] == GOOD
            sent = upstream.requests[-1]
            assert sent[0] == {"role": "system", "content": f"{SYSTEM}\n\n{BLOCK}"}  # the rules, injected
            assert sent[-1] == {"role": "user", "content": ASK}

            upstream.replies.append(BAD)
            failed = chat(ASK)
            assert failed.status_code >= 400, failed.text
            assert "norma: the answer fails the turn check: [refund/policy]" in failed.text
            assert BAD not in failed.text

            calls = len(upstream.requests)
            stopped = chat(LAUNDER)
            assert stopped.status_code >= 400, stopped.text
            assert "norma: the message matches rule [launder]" in stopped.text
            assert len(upstream.requests) == calls  # the model never ran

            # streamed, checked once whole (streaming_end_of_stream_only): "refund policy" comes last and passes
            late = "Fill in form REF-1234 and then read our refund policy"
            upstream.replies.append(late)
            streamed = chat(ASK, stream=True)
            assert streamed.status_code == 200
            assert "norma:" not in streamed.text
            assert streamed.text.rstrip().endswith("data: [DONE]")
            upstream.replies.append(BAD)
            streamed = chat(ASK, stream=True)  # streamed out, then ended by the block
            events = [line.removeprefix("data: ") for line in streamed.text.splitlines() if line.startswith("data: ")]
            assert (
                "norma: the answer fails the turn check: [refund/policy]" in json.loads(events[-1])["error"]["message"]
            )
