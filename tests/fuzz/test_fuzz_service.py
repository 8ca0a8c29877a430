"""Fuzzing the service's request bodies and the library's match entry point.

* Every POST / PUT route of the app (enumerated from its OpenAPI schema, so a new route is fuzzed too) gets
  arbitrary JSON, bytes that are not JSON, and near-valid bodies built from the route's own request schema (right
  shape, with a wrong value here and there). Property: never a 5xx, and every 4xx is a JSON problem
  (``application/problem+json`` with the status in the body). Requests go to the in-process app over httpx's ASGI
  transport, with the admin key, so tenant routes are exercised past authentication; the embedding model is the
  real one, as in the service tests.
* :meth:`RuleMatcher.match` gets arbitrary messages, sessions (scenario / step scope, turns, fire counts) and tag
  filters. Property: only NormaError escapes.

``make test`` runs a small deterministic sample; ``make fuzz`` runs ``NORMA_FUZZ_EXAMPLES`` inputs per test.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import anyio.from_thread
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.errors import NormaError
from norma.matching import Rule, RuleMatcher, SessionState
from norma.service import PROBLEM_MEDIA_TYPE, create_app
from norma.store import open_store
from tests.conftest import EXAMPLES
from tests.fuzz._strategies import FUZZ, json_values
from tests.service._chat_upstream import ChatUpstream
from tests.service.conftest import ADMIN_KEY, RULES, make_settings

TENANT = "acme"
RULE_KEYS = [
    "id", "tenant_id", "condition_text", "action_text", "scope", "scenario_id", "step_id", "priority", "enabled",
    "max_fires_per_session", "cooldown_turns", "tags", "examples", "metadata",
]  # fmt: skip
RUBRIC_KEYS = ["version", "goal_text", "aggregation", "criteria", "id", "description", "weight", "required", "scale"]
LABEL_KEYS = [
    "variation_count", "phonetic_similarity", "orthographic_similarity", "rule_based", "selected_rules",
    "rule_percentage", "Light", "Medium", "Far",
]  # fmt: skip

_WORDS = st.sampled_from(
    ["refund", "card", "lost", "hello", "John Smith", "María José", "global", "scenario", "step", "", " ", "\x00"]
)
_TEXT = st.one_of(_WORDS, st.text(max_size=40), st.lists(_WORDS, max_size=8).map(" ".join))
_NUMBER = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, 1, -1, 0.5, 1.0, 100, 2**63, -(2**63), 1e308]),
)


# -- near-valid bodies from the route's schema ------------------------------------------------------------------


_SENTENCES = st.lists(st.sampled_from(["customer", "asks", "refund", "card", "lost", "hello"]), min_size=1).map(
    " ".join
)


def _rule_dicts() -> st.SearchStrategy[dict[str, Any]]:
    """A rule's fields: a plain valid rule, or one with any field possibly out of its range."""
    clean = st.fixed_dictionaries(
        {"id": st.sampled_from(["refund", "greeting", "new-rule", "other-rule"]), "condition_text": _SENTENCES},
        optional={
            "action_text": _SENTENCES,
            "priority": st.integers(-10, 100),
            "tags": st.lists(st.sampled_from(["billing", "cards", "new"]), max_size=2, unique=True),
            "examples": st.lists(_SENTENCES, max_size=2),
            "tenant_id": st.just(TENANT),
        },
    )
    messy = st.fixed_dictionaries(
        {"condition_text": st.one_of(_SENTENCES, _TEXT)},
        optional={
            "id": st.one_of(st.sampled_from(["refund", "greeting", "new-rule"]), st.text(max_size=20)),
            "action_text": _TEXT,
            "scope": st.sampled_from(["global", "scenario", "step", "GLOBAL", "other"]),
            "scenario_id": st.one_of(st.none(), _WORDS),
            "step_id": st.one_of(st.none(), _WORDS),
            "priority": st.one_of(st.integers(-10, 100), _NUMBER),
            "enabled": st.one_of(st.booleans(), st.none()),
            "max_fires_per_session": st.one_of(st.none(), _NUMBER),
            "cooldown_turns": st.one_of(st.none(), _NUMBER),
            "tags": st.lists(_TEXT, max_size=3),
            "examples": st.lists(_TEXT, max_size=3),
            "metadata": json_values([], max_leaves=5),
            "tenant_id": st.sampled_from([TENANT, "default", "globex", ""]),
        },
    )
    return st.one_of(clean, messy)


def _rubrics() -> st.SearchStrategy[Any]:
    criterion = st.fixed_dictionaries(
        {"id": _TEXT},
        optional={
            "description": _TEXT,
            "weight": _NUMBER,
            "required": st.booleans(),
            "scale": json_values([], max_leaves=3),
        },
    )
    near = st.fixed_dictionaries(
        {"version": st.sampled_from(["1.0", "1", ""]), "criteria": st.lists(criterion, max_size=4)},
        optional={"goal_text": _TEXT, "aggregation": st.sampled_from(["weighted_sum", "sum", "custom", "mean", "x"])},
    )
    return st.one_of(near, st.dictionaries(st.sampled_from(RUBRIC_KEYS), json_values(RUBRIC_KEYS), max_size=4))


def _labels() -> st.SearchStrategy[Any]:
    shares = st.dictionaries(st.sampled_from(["Light", "Medium", "Far", "x"]), _NUMBER, max_size=3)
    near = st.fixed_dictionaries(
        {"variation_count": _NUMBER, "phonetic_similarity": shares, "orthographic_similarity": shares},
        optional={
            "rule_based": st.fixed_dictionaries(
                {"selected_rules": st.lists(_TEXT, max_size=3), "rule_percentage": _NUMBER}
            )
        },
    )
    return st.one_of(near, json_values(LABEL_KEYS))


_FREE_FORM: dict[str, Callable[[], st.SearchStrategy[Any]]] = {
    "rubric": _rubrics,
    "labels": _labels,
    "rules": _rule_dicts,  # the items of a rulebook's rules
    "": _rule_dicts,  # a whole free-form body: PUT /rules/{rule_id} takes one rule's fields
    "outcome": lambda: st.dictionaries(_TEXT, _NUMBER, max_size=4),
    "events": lambda: st.fixed_dictionaries({"criterion_id": _TEXT, "reward": _NUMBER}),  # each event
}
"""Free-form values (``dict[str, Any]`` or ``Any`` in the schema), by field name: what the library reads there."""
_NAMED_STRINGS: dict[str, st.SearchStrategy[str]] = {
    "tenant": st.one_of(st.just(TENANT), _TEXT),
    "format": st.one_of(st.just("norma.rulebook/v1"), _TEXT),
}
"""String fields with a value the route checks (the path's tenant, the rulebook format)."""


class Schemas:
    """Hypothesis strategies for the values a JSON schema (from the app's OpenAPI document) describes."""

    def __init__(self, openapi: dict[str, Any]) -> None:
        self.components = openapi["components"]["schemas"]

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.components[schema["$ref"].rsplit("/", 1)[1]]
        return schema

    def near_valid(self, schema: dict[str, Any], name: str = "") -> st.SearchStrategy[Any]:
        """Mostly what ``schema`` allows, sometimes (1 in 10 at each level) an arbitrary JSON value instead."""
        valid = self.valid(schema, name)
        wrong = json_values([], max_leaves=4)
        return st.integers(0, 9).flatmap(lambda n: wrong if n == 9 else valid)  # (Hypothesis favours 0)

    def valid(self, schema: dict[str, Any], name: str = "") -> st.SearchStrategy[Any]:
        schema = self.resolve(schema)
        if "anyOf" in schema:
            return st.one_of(*(self.near_valid(option, name) for option in schema["anyOf"]))
        if "enum" in schema:
            return st.sampled_from(schema["enum"])
        kind = schema.get("type")
        if kind == "null":
            return st.none()
        if kind == "boolean":
            return st.booleans()
        if kind == "integer":
            low, high = schema.get("minimum"), schema.get("maximum")
            bounded = st.integers(
                min_value=None if low is None else int(low), max_value=None if high is None else int(high)
            )
            return st.one_of(bounded, _NUMBER)
        if kind == "number":
            low, high = schema.get("minimum"), schema.get("maximum")
            return st.one_of(st.floats(min_value=low, max_value=high, allow_nan=False), _NUMBER)
        if kind == "string":
            return _NAMED_STRINGS.get(name, _TEXT).map(lambda s: s[: schema.get("maxLength", 10_000)])
        if kind == "array":
            items = self.near_valid(schema.get("items", {}), name)
            return st.lists(items, max_size=min(4, int(schema.get("maxItems", 4))))
        if kind == "object":
            properties = schema.get("properties")
            if properties:
                required = set(schema.get("required", []))
                return st.fixed_dictionaries(
                    {k: self.near_valid(v, k) for k, v in properties.items() if k in required},
                    optional={k: self.near_valid(v, k) for k, v in properties.items() if k not in required},
                )
            extra = schema.get("additionalProperties", True)
            if isinstance(extra, dict):
                return st.dictionaries(_TEXT, self.near_valid(extra), max_size=4)
            return _FREE_FORM[name]() if name in _FREE_FORM else json_values([])
        return _FREE_FORM[name]() if name in _FREE_FORM else json_values([])  # no type: anything


# -- the app, in process ----------------------------------------------------------------------------------------


class Service:
    """The app over httpx's ASGI transport, called synchronously through an anyio portal (Hypothesis is sync)."""

    def __init__(self, portal: anyio.from_thread.BlockingPortal, client: httpx.AsyncClient) -> None:
        self.portal = portal
        self.client = client

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        call = functools.partial(self.client.request, method, url, **kwargs)
        return self.portal.call(call)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('fuzz-service') / 'norma.db'}")
    store.upsert_rules(TENANT, [Rule.from_mapping({**r, "tenant_id": TENANT}) for r in RULES])
    upstream = ChatUpstream(record=False).__enter__()  # the guarded endpoint's model: a loopback server
    settings = make_settings(audit_docs=EXAMPLES / "audit" / "docs", request_timeout=20, upstream_url=upstream.url)
    app = create_app(settings, store=store)
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://norma.test",
        headers={"Authorization": f"Bearer {ADMIN_KEY}"},
    )
    try:
        with anyio.from_thread.start_blocking_portal("asyncio") as portal:
            yield Service(portal, client)
            portal.call(client.aclose)
            portal.call(app.state.norma.http.aclose)  # what the app's shutdown does (no lifespan here)
    finally:
        store.close()
        upstream.__exit__(None, None, None)


OPENAPI: dict[str, Any] = create_app(make_settings()).openapi()  # the schema only: no store is opened
SCHEMAS = Schemas(OPENAPI)
WRITE_ROUTES = sorted(
    (method.upper(), path, op["requestBody"]["content"]["application/json"]["schema"])
    for path, item in OPENAPI["paths"].items()
    for method, op in item.items()
    if method in ("post", "put") and "requestBody" in op
)
"""Every POST / PUT route with a JSON body: (method, path template, body schema)."""


def _paths(template: str) -> st.SearchStrategy[str]:
    """The template with its parameters filled: mostly real values (the seeded tenant, a rule it has), sometimes
    anything."""
    fills = {
        "tenant": st.one_of(st.just(TENANT), st.just(TENANT), st.text(min_size=1, max_size=20)),
        "rule_id": st.one_of(st.sampled_from(["refund", "greeting", "new-rule"]), st.text(min_size=1, max_size=20)),
    }
    names = [part[1:-1] for part in template.split("/") if part.startswith("{")]
    missing = [n for n in names if n not in fills]
    assert not missing, f"teach _paths how to fill {missing} in {template}"

    def fill(values: tuple[str, ...]) -> str:
        out = template
        for name, value in zip(names, values, strict=True):
            out = out.replace(f"{{{name}}}", quote(value, safe=""))
        return out

    return st.tuples(*(fills[n] for n in names)).map(fill)


def _check(response: httpx.Response, where: str) -> None:
    assert response.status_code < 500, f"{where}: {response.status_code} {response.text[:500]}"
    if response.status_code >= 400:
        assert response.headers["content-type"] == PROBLEM_MEDIA_TYPE, where
        problem = response.json()
        assert problem["status"] == response.status_code, where
        assert isinstance(problem["title"], str), where
        assert isinstance(problem["detail"], str), where
    elif response.is_success and response.status_code != 204:
        response.json()  # (a 3xx is the router's redirect of a path with a trailing slash, e.g. rule id "/")


_ROUTES = st.sampled_from(WRITE_ROUTES)


def test_every_write_route_is_fuzzed() -> None:
    """The routes come from the schema: today's ten are all there, each with a body strategy."""
    assert len(WRITE_ROUTES) >= 10
    assert ("PUT", "/v1/tenants/{tenant}/rules/{rule_id}") in {(m, p) for m, p, _ in WRITE_ROUTES}
    for _, path, schema in WRITE_ROUTES:
        SCHEMAS.near_valid(schema).validate()
        _paths(path).validate()


def _send(service: Service, method: str, path: str, body: Any) -> httpx.Response:
    """``body`` as JSON (NaN and Infinity included, as Python writes them: answered 400), or as raw bytes."""
    content = body if isinstance(body, bytes) else json.dumps(body, allow_nan=True).encode()
    return service.request(method, path, content=content, headers={"content-type": "application/json"})


@FUZZ
@given(st.data(), _ROUTES, st.one_of(json_values(RULE_KEYS + RUBRIC_KEYS + LABEL_KEYS), st.binary(max_size=200)))
def test_arbitrary_bodies(service: Service, data: st.DataObject, route: tuple[str, str, Any], body: Any) -> None:
    method, template, _ = route
    path = data.draw(_paths(template))
    _check(_send(service, method, path, body), f"{method} {path} {body!r:.300}")


@FUZZ
@given(st.data(), _ROUTES)
def test_near_valid_bodies(service: Service, data: st.DataObject, route: tuple[str, str, Any]) -> None:
    method, template, schema = route
    path = data.draw(_paths(template))
    body = data.draw(SCHEMAS.near_valid(schema))
    _check(_send(service, method, path, body), f"{method} {path} {body!r:.300}")


_POISONS = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400", '"\\ud800"', '"a\\udfffb"'])
"""What the edge refuses anywhere in a body (as JSON text): numbers that are not finite, lone surrogates."""
_MARK = "\x00poison\x00"


def _clean(value: Any) -> Any:
    """``value`` with the refused values the strategies may draw (NaN, Infinity) made harmless."""
    if isinstance(value, float) and not math.isfinite(value):
        return 0.0
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _slots(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Every place a value sits in ``value`` (the root included)."""
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _slots(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _slots(child, (*path, index))


def _replaced(value: Any, path: tuple[str | int, ...]) -> Any:
    if not path:
        return _MARK
    head, *rest = path
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replaced(value[head], tuple(rest))  # type: ignore[index]
    return copy


def _field(path: tuple[str | int, ...]) -> str:
    out = "body"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


@FUZZ
@given(st.data(), _ROUTES, _POISONS)
def test_refused_values_anywhere_are_4xx_naming_the_field(
    service: Service, data: st.DataObject, route: tuple[str, str, Any], poison: str
) -> None:
    """A near-valid body with a NaN, an Infinity, a 1e999 or a lone surrogate put anywhere in it: 400 naming that
    field, on every route, before the route looks at the body (issue 23, items 2 and 3)."""
    method, template, schema = route
    path = template.replace("{tenant}", TENANT).replace("{rule_id}", "refund")
    body = _clean(data.draw(SCHEMAS.near_valid(schema)))
    where = data.draw(st.sampled_from(list(_slots(body))))
    text = json.dumps(_replaced(body, where)).replace(json.dumps(_MARK), poison)
    response = _send(service, method, path, text.encode())
    _check(response, f"{method} {path} {text:.300}")
    assert response.status_code == 400, f"{method} {path} {text:.300}: {response.text[:300]}"
    field = _field(where)
    plain = all(isinstance(p, int) or (p and len(p) <= 40 and not set(p) & set(".[]")) for p in where)
    if plain and len(field) <= 160:  # (long paths are shortened in the answer, odd keys are ambiguous in a path)
        assert response.json()["field"] == field, text[:300]
    else:
        assert response.json()["field"].startswith("body"), text[:300]


# -- the library's match entry point ----------------------------------------------------------------------------


SCENARIOS = ["checkout", "onboarding"]
STEPS = ["payment", "address"]


@pytest.fixture(scope="module")
def matcher() -> RuleMatcher:
    """The service tests' rules plus scoped ones with fire limits and cooldowns, so sessions change the result."""
    scoped: list[dict[str, Any]] = [
        {"id": "pay", "condition_text": "customer cannot pay", "scope": "scenario", "scenario_id": "checkout",
         "max_fires_per_session": 1, "tags": ["billing"]},
        {"id": "card-step", "condition_text": "customer types a card number", "scope": "step", "step_id": "payment",
         "scenario_id": "checkout", "cooldown_turns": 2},
        {"id": "address-step", "condition_text": "customer gives an address", "scope": "step",
         "step_id": "address", "examples": ["I live at 5 Main Street"]},
        {"id": "off", "condition_text": "customer asks for a refund", "enabled": False},
    ]  # fmt: skip
    return RuleMatcher(Rule.from_mapping(r) for r in [*RULES, *scoped])


_IDS = st.sampled_from(["refund", "lost-card", "greeting", "pay", "card-step", "address-step", "off", ""])
_TURNS = st.one_of(st.integers(min_value=0, max_value=2**70), st.sampled_from([0, 1, 2, 3, 2**63 - 1, 2**63, 2**64]))
_COUNTS = st.dictionaries(st.one_of(_IDS, st.text(max_size=8)), st.integers(min_value=-(2**70), max_value=2**70))
_SESSIONS = st.one_of(
    st.none(),
    st.builds(
        SessionState,
        active_scenario_id=st.one_of(st.none(), st.sampled_from(SCENARIOS), st.text(max_size=10)),
        active_step_id=st.one_of(st.none(), st.sampled_from(STEPS), st.text(max_size=10)),
        turn=_TURNS,
        fire_counts=_COUNTS,
        last_fired_turn=_COUNTS,
    ),
    json_values(["active_scenario_id", "active_step_id", "turn", "fire_counts", "last_fired_turn"]),
)
_MESSAGES = st.one_of(
    _TEXT,
    st.text(max_size=300),
    st.lists(
        st.sampled_from(["refund", "card", "my", "lost", "payment", "antidisestablishmentarianism"]), max_size=600
    ).map(" ".join),  # long enough to be cut into windows
    json_values([], max_leaves=3),
)
_TAGS = st.one_of(
    st.none(),
    _TEXT,
    st.lists(st.one_of(st.sampled_from(["billing", "cards", "nope"]), _TEXT), max_size=4),
    json_values([], max_leaves=4),
)


@FUZZ
@given(_MESSAGES, _SESSIONS, _TAGS, st.one_of(st.booleans(), json_values([], max_leaves=2)))
def test_match_requests(matcher: RuleMatcher, message: Any, session: Any, tags: Any, explain: Any) -> None:
    with contextlib.suppress(NormaError):
        result = matcher.match(message, session, explain=explain, tags=tags)
        for match in result:
            assert math.isfinite(match.final_score)
