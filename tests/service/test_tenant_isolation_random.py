"""Tenant isolation under randomised attack: a tenant's key, used on every tenant-scoped route of the app with
another tenant's paths and ids, never succeeds, never sees the other tenant's data and changes nothing.

The routes are enumerated from the app's OpenAPI schema (and the router is checked to serve nothing outside it), so
a route added later is attacked too; an authenticated route that is neither tenant-scoped nor a known stateless tool
fails the test until it is classified here. Request bodies are built from each route's own request schema, and a
control test proves that the very same requests succeed for the tenant that owns the path: what stops the attacks
is the isolation, not a malformed request.

The basics of "keys never logged" are in test_edge (three requests, in process) and test_socket (``norma serve``'s
log); here every log record of the whole randomised run is checked too, so each route's refusal path is covered.
"""

from __future__ import annotations

import json
import logging
import random
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from starlette.routing import BaseRoute

from norma.matching import Rule
from norma.service import PROBLEM_MEDIA_TYPE, create_app
from norma.service._logging import ACCESS_LOGGER, JsonFormatter
from norma.store import RuleStore, open_store
from tests.service._chat_upstream import ChatUpstream
from tests.service.conftest import ADMIN_KEY, asgi_client, bearer, make_settings

pytestmark = pytest.mark.anyio

SEED = 20261123
ATTEMPTS = 700
MIN_PER_ROUTE = 8
"""Direct cross-tenant attempts every tenant-scoped route must get (the fixed seed gives each about 20; 700 attempts
over the 19 tenant-scoped routes)."""

TENANTS = ("alpha", "beta", "gamma")
METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH")

PUBLIC = {("GET", "/v1/health"), ("GET", "/v1/ready")}
"""Routes without a key: they read no tenant's data."""
STATELESS = {
    ("POST", "/v1/audit"),
    ("POST", "/v1/rubrics/validate"),
    ("POST", "/v1/rubrics/evaluate"),
    ("POST", "/v1/names/score"),
    ("POST", "/v1/names/query"),
    ("POST", "/v1/names/generate"),
}
"""Capability routes any valid key may call: they compute on the request alone and never touch the store."""
KEY_SCOPED = {("POST", "/beta/litellm_basic_guardrail_api")}
"""Routes whose tenant is the key's, not the path's (isolation tested in test_litellm_guardrail.py)."""
UPSTREAM = ChatUpstream(record=False).__enter__()
"""The guarded endpoint's model (``/chat/completions``): a loopback server, up all along."""
PAGES = {"/", "/openapi.json", "/docs", "/docs/assets", "/docs/start.js", "/redoc", "/static"}
"""What the router serves outside the OpenAPI schema (documentation, the playground and its files)."""

WORDS = [
    "refund", "card", "parcel", "order", "hello", "lost", "money", "account", "delivery", "late", "broken", "help",
    "password", "invoice", "address", "support", "cancel", "upgrade", "question", "billing",
]  # fmt: skip


def _canary(tenant: str) -> str:
    return f"zq{tenant}canary"


def _seed_rules(tenant: str) -> list[Rule]:
    """Each tenant has a rule id the others share (``refund``) and ids of its own; every text carries its canary."""
    marker = _canary(tenant)
    specs = [
        ("refund", "customer asks for a refund", ["billing"]),
        (f"{tenant}-lost-card", "customer lost their card", ["cards"]),
        (f"{tenant}-greeting", "customer says hello", ["smalltalk"]),
        (f"{tenant}-parcel", "customer's parcel never arrived", ["delivery"]),
    ]
    return [
        Rule.from_mapping(
            {
                "id": rule_id,
                "tenant_id": tenant,
                "condition_text": f"{text} {marker}",
                "action_text": f"answer as {tenant} does {marker}",
                "tags": tags,
                "examples": [f"{text} please {marker}"],
            }
        )
        for rule_id, text, tags in specs
    ]


@dataclass
class Tenant:
    name: str
    secret: str
    """The key its own requests use."""
    spare_secret: str
    """A second key (what a revocation would hit)."""
    key_ids: list[str]
    rule_ids: list[str]
    tags: list[str]

    @property
    def secrets(self) -> list[str]:
        return [self.secret, self.spare_secret]


def _key_id(secret: str) -> str:
    return secret.split("_")[1]


def _seed(store: RuleStore) -> dict[str, Tenant]:
    tenants = {}
    for name in TENANTS:
        rules = _seed_rules(name)
        store.upsert_rules(name, rules)
        secret = store.create_api_key(name, name="main")
        spare = store.create_api_key(name, name="spare")
        tenants[name] = Tenant(
            name=name,
            secret=secret,
            spare_secret=spare,
            key_ids=[_key_id(secret), _key_id(spare)],
            rule_ids=[r.id for r in rules],
            tags=sorted({t for r in rules for t in r.tags}),
        )
    return tenants


def _snapshot(store: RuleStore, tenant: Tenant) -> dict[str, Any]:
    """Everything of ``tenant`` an attack could change: version, rules, every rule's history, keys."""
    rules = [r.to_dict() for r in store.list_rules(tenant.name)]
    return {
        "version": store.version(tenant.name),
        "rules": rules,
        "history": {r["id"]: [v.to_dict() for v in store.history(tenant.name, r["id"])] for r in rules},
        "keys": [k.to_dict() for k in store.list_api_keys(tenant.name)],
        "keys_valid": [store.check_api_key(s) is not None for s in tenant.secrets],
    }


# -- the routes, from the app itself ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    """The OpenAPI path template (``/v1/tenants/{tenant}/rules/{rule_id}``)."""
    admin: bool
    """An admin route (403 for a tenant key) rather than a tenant route (404 for another tenant's key)."""
    body: dict[str, Any] | None
    """The request body's JSON schema, if the route takes one."""
    query: tuple[tuple[str, dict[str, Any]], ...]
    """The query parameters and their schemas."""

    @property
    def refused_with(self) -> int:
        return 403 if self.admin else 404


def _operations(openapi: dict[str, Any]) -> tuple[list[Operation], set[tuple[str, str]]]:
    """The tenant-scoped operations of the schema, and every operation of it (method, path)."""
    scoped: list[Operation] = []
    every: set[tuple[str, str]] = set()
    for path, item in openapi["paths"].items():
        for method, op in item.items():
            every.add((method.upper(), path))
            admin = "admin" in op.get("tags", [])
            if "{tenant}" not in path and not admin:
                continue
            content = op.get("requestBody", {}).get("content", {}).get("application/json", {})
            query = tuple((p["name"], p.get("schema", {})) for p in op.get("parameters", []) if p["in"] == "query")
            scoped.append(Operation(method.upper(), path, admin, content.get("schema"), query))
    return scoped, every


def _served_paths(routes: list[BaseRoute]) -> Iterator[str]:
    """Every path the router serves (through included routers and mounts)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _served_paths(inner.routes)
        elif hasattr(route, "path"):
            yield str(route.path)
        else:
            children = getattr(route, "routes", None)
            assert children is not None, f"cannot tell what {route!r} serves: teach _served_paths about it"
            yield from _served_paths(children)


# -- requests built from the route's own schemas ----------------------------------------------------------------


@dataclass
class Builder:
    """Fills a route's path, query and body with valid-looking values naming ``victim`` (the tenant in the path)."""

    rng: random.Random
    openapi: dict[str, Any]
    victim: Tenant
    body_tenant: str
    """The tenant named inside bodies (``tenant``, ``tenant_id``): the victim, or the path's tenant."""
    path_params: dict[str, str] = field(default_factory=dict)
    used_ids: set[str] = field(default_factory=set)

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[1]
            schema = self.openapi["components"]["schemas"][name]
        return schema

    def sentence(self) -> str:
        return " ".join(self.rng.choices(WORDS, k=self.rng.randint(2, 6)))

    def rule(self) -> dict[str, Any]:
        """A valid rule; its id is the path's when there is one, else one of the victim's (an overwrite)."""
        rule_id = self.path_params.get("rule_id")
        if rule_id is None:  # unique within one body (a rulebook with a duplicate id is refused as a whole)
            fresh = [i for i in self.victim.rule_ids if i not in self.used_ids]
            rule_id = self.rng.choice(fresh) if fresh else f"new-rule-{len(self.used_ids)}"
            self.used_ids.add(rule_id)
        rule: dict[str, Any] = {"id": rule_id, "condition_text": self.sentence(), "action_text": self.sentence()}
        if self.rng.random() < 0.5:
            rule["tags"] = self.rng.sample(WORDS, 2)
        if self.rng.random() < 0.5:
            rule["examples"] = [self.sentence()]
        if self.rng.random() < 0.3:
            rule["priority"] = self.rng.randint(-5, 50)
        if self.rng.random() < 0.4:
            rule["tenant_id"] = self.body_tenant
        return rule

    def value(self, schema: dict[str, Any], name: str = "") -> Any:
        schema = self.resolve(schema)
        hinted = self._hint(name, schema)
        if hinted is not _NO_HINT:
            return hinted
        if "anyOf" in schema:
            options = [s for s in schema["anyOf"] if self.resolve(s).get("type") != "null"]
            return self.value(self.rng.choice(options), name) if options else None
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        kind = schema.get("type")
        if kind == "object":
            properties = schema.get("properties")
            extra = schema.get("additionalProperties", True)
            if properties:
                required = set(schema.get("required", []))
                return {
                    key: self.value(sub, key)
                    for key, sub in properties.items()
                    if key in required or self.rng.random() < 0.5
                }
            if isinstance(extra, dict):
                return {self.rng.choice(WORDS): self.value(extra) for _ in range(self.rng.randint(0, 2))}
            return self.rule()  # a free-form object: the tenant routes that take one take a rule
        if kind == "array":
            return [self.value(schema.get("items", {}), name) for _ in range(self.rng.randint(1, 3))]
        if kind == "string":
            return self.rng.choice(WORDS)[: schema.get("maxLength", 200)]
        if kind == "integer":
            low = int(schema.get("minimum", 0))
            return self.rng.randint(low, min(int(schema.get("maximum", low + 50)), low + 50))
        if kind == "number":  # inside the schema's bounds (a quantile or a target lies strictly between 0 and 1)
            low = float(schema.get("minimum", schema.get("exclusiveMinimum", 0)))
            high = float(schema.get("maximum", schema.get("exclusiveMaximum", low + 10)))
            return (
                round(self.rng.uniform(low + 0.01, high - 0.01), 3)
                if high - low < 1.5
                else float(self.rng.randint(0, 10))
            )
        if kind == "boolean":
            return self.rng.random() < 0.5
        return self.sentence()

    def _hint(self, name: str, schema: dict[str, Any]) -> Any:
        if name == "message":
            return self.sentence()
        if name == "messages" and schema.get("type") == "array" and "$ref" not in schema["items"]:  # a chat's
            return [{"role": "user", "content": self.sentence()}]
        if name == "format":
            return "norma.rulebook/v1"
        if name == "tenant":
            return self.body_tenant
        if name == "tags" and schema.get("type") != "object":
            return self.rng.sample(self.victim.tags, 1)
        if name == "expected":  # a labelled message expects 0 or 1 of the tenant's rules
            return self.rng.sample(self.victim.rule_ids, self.rng.randint(0, 1))
        if name in ("target_precision", "target_recall"):  # the best F1: a target may be out of reach
            return None
        if name in ("old_version", "new_version"):  # a rules diff: every tenant here is at version 1
            return 1
        return _NO_HINT

    def path(self, template: str, tenant_segment: str) -> str:
        def fill(name: str) -> str:
            if name == "tenant":
                return tenant_segment
            if name == "rule_id":
                return self.rng.choice([*self.victim.rule_ids, "no-such-rule"])
            if name == "key_id":
                return self.rng.choice(self.victim.key_ids)
            pytest.fail(f"teach this test how to fill {{{name}}} in {template}")

        out = template
        while "{" in out:
            name = out[out.index("{") + 1 : out.index("}")]
            value = fill(name)
            self.path_params[name] = value
            out = out.replace(f"{{{name}}}", quote(value, safe=""), 1)
        return out

    def query(self, params: tuple[tuple[str, dict[str, Any]], ...]) -> dict[str, str]:
        chosen = {}
        for name, schema in params:
            if self.rng.random() < 0.3:
                value = self.rng.choice(self.victim.tags) if name == "tag" else self.value(schema, name)
                chosen[name] = str(value).lower() if isinstance(value, bool) else str(value)
        return chosen


_NO_HINT = object()


@dataclass
class Attempt:
    kind: str
    method: str
    url: str
    body: Any
    params: dict[str, str]
    expected: set[int]
    """The statuses the service answers this attempt with (404 / 403 as docs/service.md says; 405 for a method
    the path does not have)."""
    op: Operation | None


def _auth_headers(rng: random.Random, secret: str) -> dict[str, str]:
    style = rng.choice(["bearer", "lower", "x-api-key"])
    if style == "x-api-key":
        return {"X-API-Key": secret}
    return {"Authorization": f"{'Bearer' if style == 'bearer' else 'bearer'} {secret}"}


def _variants(name: str) -> list[str]:
    """Spellings of a tenant's id that are not that id (and must not reach its data)."""
    return [name.upper(), name.title(), f"{name} ", f" {name}", f"{name}/", f"{name}%00", f"{name}\t", f"./{name}"]


def _attempts(
    rng: random.Random, openapi: dict[str, Any], ops: list[Operation], tenants: dict[str, Tenant]
) -> Iterator[tuple[Tenant, Tenant, Attempt]]:
    by_path: dict[str, dict[str, Operation]] = {}
    for op in ops:
        by_path.setdefault(op.path, {})[op.method] = op
    with_body = [op for op in ops if op.body is not None]
    for _ in range(ATTEMPTS):
        attacker, victim = (tenants[t] for t in rng.sample(TENANTS, 2))
        kind = rng.choices(["cross", "method", "variant", "smuggle"], weights=[10, 2, 2, 3])[0]
        build = Builder(rng, openapi, victim, body_tenant=victim.name)
        if kind == "smuggle":  # the attacker's own path, the victim named inside the body
            op = rng.choice(with_body)
            url = build.path(op.path, attacker.name)
            body = build.value(op.body or {})
            if op.admin:
                expected = {403}
            elif "tenant" in json.dumps(body):
                expected = {400, 409}
            else:  # the body names no tenant this time: an ordinary request on the attacker's own data
                kind, expected = "own", set(range(200, 300))
            yield attacker, victim, Attempt(kind, op.method, url, body, {}, expected, op)
            continue
        op = rng.choice(ops)
        segment = rng.choice(_variants(victim.name)) if kind == "variant" else victim.name
        url = build.path(op.path, segment)
        method = rng.choice(METHODS) if kind == "method" else op.method
        target = by_path[op.path].get(method)
        if target is None:
            expected = {405}
        elif "/" in segment:  # the path has another shape: no such route (or, a trailing slash, its redirect)
            expected = {target.refused_with, 404, 307}
        else:
            expected = {target.refused_with}
        body = build.value(target.body) if target is not None and target.body is not None else None
        params = build.query(target.query) if target is not None else {}
        yield attacker, victim, Attempt(kind, method, url, body, params, expected, target)


# -- fixtures -----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def isolated_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RuleStore]:
    opened = open_store(f"sqlite:///{tmp_path_factory.mktemp('isolation') / 'norma.db'}")
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def tenants(isolated_store: RuleStore) -> dict[str, Tenant]:
    return _seed(isolated_store)


@pytest.fixture
async def http(isolated_store: RuleStore) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(make_settings(upstream_url=UPSTREAM.url), store=isolated_store)
    async with asgi_client(app) as client:
        yield client
    await app.state.norma.http.aclose()  # what the app's shutdown does (no lifespan here)


@pytest.fixture(scope="module")
def openapi(isolated_store: RuleStore) -> dict[str, Any]:
    schema: dict[str, Any] = create_app(make_settings(), store=isolated_store).openapi()
    return schema


# -- tests --------------------------------------------------------------------------------------------------------


def test_every_route_is_classified(isolated_store: RuleStore, openapi: dict[str, Any]) -> None:
    """Each operation is tenant-scoped (attacked below), public or a stateless tool; the router serves no other."""
    ops, every = _operations(openapi)
    scoped = {(op.method, op.path) for op in ops}
    unclassified = every - scoped - PUBLIC - STATELESS - KEY_SCOPED
    assert not unclassified, f"classify these routes in {Path(__file__).name}: {sorted(unclassified)}"
    assert not (scoped & (PUBLIC | STATELESS)), "a tenant-scoped route is listed as public or stateless"
    assert every >= PUBLIC | STATELESS | KEY_SCOPED, "a route listed here no longer exists: update the lists"
    assert len(scoped) >= 12
    app = create_app(make_settings(), store=isolated_store)
    served = set(_served_paths(app.router.routes))
    assert served - {path for _, path in every} == PAGES


async def test_randomised_cross_tenant_attempts_never_succeed(
    http: httpx.AsyncClient,
    isolated_store: RuleStore,
    tenants: dict[str, Tenant],
    openapi: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="norma")
    ops, _ = _operations(openapi)
    before = {name: _snapshot(isolated_store, t) for name, t in tenants.items()}
    rng = random.Random(SEED)
    kinds: Counter[str] = Counter()
    direct: Counter[tuple[str, str]] = Counter()
    sent = 0
    for attacker, victim, attempt in _attempts(rng, openapi, ops, tenants):
        if attempt.kind == "own":  # keep the store as it was: only attacks are sent
            continue
        headers = _auth_headers(rng, attacker.secret)
        response = await http.request(
            attempt.method, attempt.url, json=attempt.body, params=attempt.params, headers=headers
        )
        sent += 1
        kinds[attempt.kind] += 1
        if attempt.kind == "cross" and attempt.op is not None:
            direct[(attempt.op.method, attempt.op.path)] += 1
        where = f"{attacker.name} -> {attempt.kind} {attempt.method} {attempt.url} {attempt.body!r}"
        assert response.status_code in attempt.expected, f"{where}: {response.status_code} {response.text[:300]}"
        assert not response.is_success, where
        if response.status_code != 307:
            assert response.headers["content-type"] == PROBLEM_MEDIA_TYPE, where
            assert response.json()["status"] == response.status_code, where
        leaked = [s for s in (_canary(victim.name), *victim.key_ids, *victim.secrets) if s in response.text]
        assert not leaked, f"{where}: the answer holds {leaked}"

    assert sent >= ATTEMPTS * 0.85
    assert min(kinds.values()) >= 20, kinds
    missing = {(op.method, op.path) for op in ops if direct[(op.method, op.path)] < MIN_PER_ROUTE}
    assert not missing, f"routes not attacked enough: {sorted(missing)} ({direct})"
    after = {name: _snapshot(isolated_store, t) for name, t in tenants.items()}
    for name in TENANTS:
        assert after[name] == before[name], f"tenant {name}'s data changed"
        assert all(after[name]["keys_valid"])
        assert after[name]["version"] == 1

    # the access log: one line per request, the public key id only, and no secret anywhere in any record
    access = [r for r in caplog.records if r.name == ACCESS_LOGGER]
    assert len(access) == sent
    attacker_ids = {_key_id(t.secret) for t in tenants.values()}
    # (None: refused by the router before authentication: 405, or a path no route has)
    assert {getattr(r, "fields", {})["key_id"] for r in access} == {*attacker_ids, None}
    formatter = JsonFormatter()
    logged = caplog.text + "\n".join(formatter.format(r) for r in caplog.records)
    secrets = [s for t in tenants.values() for s in t.secrets]
    assert not [s for s in secrets if s in logged]
    assert not [s for s in secrets if s.split("_", 2)[2] in logged]  # not even the secret part alone


async def test_the_same_requests_succeed_for_the_owner(tmp_path: Path, openapi: dict[str, Any]) -> None:
    """The control: the requests the attacks send are valid — on its own paths, a tenant's key (an admin key on
    admin routes) gets 2xx for each route. Without the isolation, the attacks would have succeeded."""
    store = open_store(f"sqlite:///{tmp_path / 'norma.db'}")
    try:
        tenants = _seed(store)
        app = create_app(make_settings(upstream_url=UPSTREAM.url), store=store)
        ops, _ = _operations(openapi)
        rng = random.Random(SEED)
        async with asgi_client(app) as client:
            for op in ops:
                owner = tenants[rng.choice(TENANTS)]
                answers = []
                for _ in range(5):  # a DELETE may pick a rule deleted by an earlier try: try again
                    build = Builder(rng, openapi, owner, body_tenant=owner.name)
                    url = build.path(op.path, owner.name)
                    if op.path == "/v1/keys/{key_id}":  # revoke the spare key, not the one in use
                        url = f"/v1/keys/{_key_id(owner.spare_secret)}"
                    body = build.value(op.body) if op.body is not None else None
                    secret = ADMIN_KEY if op.admin else owner.secret
                    response = await client.request(
                        op.method, url, json=body, params=build.query(op.query), headers=bearer(secret)
                    )
                    answers.append((response.status_code, response.text[:200]))
                    if response.is_success:
                        break
                assert answers[-1][0] < 300, (op.method, op.path, answers)
        await app.state.norma.http.aclose()
    finally:
        store.close()
