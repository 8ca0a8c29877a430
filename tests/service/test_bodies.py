"""Request bodies (issue 23, items 2-4): nothing a body holds makes a 5xx; text that is not valid Unicode, NaN,
Infinity and 1e999 are refused at the edge on every route with a 400 naming the field, as the CLI refuses them;
and one set of limits holds for every way in (Python, a rulebook file through `norma rules import`, PUT, bulk POST).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import httpx
import pytest

from norma.errors import InvalidInputError
from norma.rules import MAX_METADATA_DEPTH, Rule
from norma.service import create_app
from norma.store import RuleStore
from tests.conftest import CliResult
from tests.service.conftest import ADMIN_KEY, bearer, make_settings

pytestmark = pytest.mark.anyio

JSON = {"content-type": "application/json"}
WRITE_ROUTES = sorted(
    (method.upper(), path.replace("{tenant}", "acme").replace("{rule_id}", "refund"))
    for path, item in create_app(make_settings()).openapi()["paths"].items()
    for method, op in item.items()
    if method in ("post", "put") and "requestBody" in op
)
"""Every route that reads a JSON body, from the schema (a new route is covered, or this list grows)."""
RUBRIC = '{"version": "1", "goal_text": "g", "criteria": [{"id": %s, "description": "d", "weight": %s}]}'


def _chain(depth: int) -> str:
    """JSON metadata nested exactly ``depth`` levels (the mapping is level 1, the innermost value the last)."""
    return '{"k": ' * (depth - 1) + '"bottom"' + "}" * (depth - 1)


async def _send(client: httpx.AsyncClient, method: str, url: str, text: str | bytes) -> httpx.Response:
    content = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return await client.request(method, url, content=content, headers={**bearer(ADMIN_KEY), **JSON})


def _assert_problem(response: httpx.Response, status: int, field: str, detail: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["status"] == status
    assert problem["field"] == field, problem
    assert detail in problem["detail"], problem


# -- item 2: lone surrogates, deep metadata ---------------------------------------------------------------------


async def test_a_bulk_rulebook_with_a_lone_surrogate_rule_id_is_400_naming_it(
    client: httpx.AsyncClient, store: RuleStore
) -> None:
    before = store.version("acme")
    body = '{"rules": [{"id": "ok", "condition_text": "x"}, {"id": "\\ud800", "condition_text": "x"}]}'
    response = await _send(client, "POST", "/v1/tenants/acme/rules", body)
    _assert_problem(response, 400, "body.rules[1].id", "not valid Unicode")
    assert store.version("acme") == before


async def test_evaluate_with_a_lone_surrogate_criterion_id_is_400_naming_it(client: httpx.AsyncClient) -> None:
    body = '{"rubric": %s, "outcome": {"c": 1}}' % (RUBRIC % ('"\\ud800"', "1.0"))
    response = await _send(client, "POST", "/v1/rubrics/evaluate", body)
    _assert_problem(response, 400, "body.rubric.criteria[0].id", "not valid Unicode")
    key = await _send(
        client, "POST", "/v1/rubrics/evaluate", '{"rubric": %s, "outcome": {"\\udfff": 1}}' % (RUBRIC % ('"c"', "1.0"))
    )
    _assert_problem(key, 400, "body.outcome.\\udfff", "not valid Unicode")


@pytest.mark.parametrize(("method", "url"), WRITE_ROUTES)
@pytest.mark.parametrize(
    "body",
    [
        '{"x": "\\ud800"}',  # an escape of a lone surrogate
        '{"x": ["a", "b\\udc00c"]}',
        '{"\\ud83d": 1}',  # in a key
        b'{"x": "\xed\xa0\x80"}',  # a surrogate encoded as UTF-8 bytes (CESU): Python's JSON reader lets it through
    ],
)
async def test_text_that_is_not_unicode_is_400_on_every_route(
    client: httpx.AsyncClient, method: str, url: str, body: str | bytes
) -> None:
    response = await _send(client, method, url, body)
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["field"].startswith("body."), problem
    assert "not valid Unicode" in problem["detail"]


@pytest.mark.parametrize(("method", "url"), WRITE_ROUTES)
async def test_bytes_that_are_not_utf8_are_400_on_every_route(client: httpx.AsyncClient, method: str, url: str) -> None:
    response = await _send(client, method, url, b'{"x": "\xff"}')
    _assert_problem(response, 400, "body", "not valid UTF-8")


async def test_put_of_metadata_nested_300_levels_is_4xx_naming_the_field(
    client: httpx.AsyncClient, store: RuleStore
) -> None:
    for depth in (300, 200, 65, MAX_METADATA_DEPTH + 1):
        body = '{"condition_text": "x", "metadata": ' + _chain(depth) + "}"
        response = await _send(client, "PUT", "/v1/tenants/acme/rules/deep", body)
        assert 400 <= response.status_code < 500, (depth, response.text)
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["field"].startswith(("body.metadata", "metadata")), (depth, response.json())
    with pytest.raises(LookupError):
        store.get_rule("acme", "deep")
    deepest = '{"condition_text": "x", "metadata": ' + _chain(MAX_METADATA_DEPTH) + "}"
    accepted = await _send(client, "PUT", "/v1/tenants/acme/rules/deepest", deepest)
    assert accepted.status_code == 200, accepted.text
    got = await client.get("/v1/tenants/acme/rules/deepest", headers=bearer(ADMIN_KEY))
    assert got.json()["metadata"] == json.loads(_chain(MAX_METADATA_DEPTH))


async def test_a_body_nested_past_any_recursion_limit_is_413(client: httpx.AsyncClient) -> None:
    response = await _send(client, "POST", "/v1/rubrics/validate", "[" * 200_000 + "]" * 200_000)
    assert response.status_code == 413, response.text
    assert response.json()["field"] == "body"


# -- item 3: NaN, Infinity, 1e999 -------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "url"), WRITE_ROUTES)
@pytest.mark.parametrize(
    ("literal", "name"), [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"), ("1e999", "Infinity")]
)
async def test_nan_and_infinity_are_400_on_every_route(
    client: httpx.AsyncClient, method: str, url: str, literal: str, name: str
) -> None:
    response = await _send(client, method, url, '{"x": {"y": [1, ' + literal + "]}}")
    _assert_problem(response, 400, "body.x.y[1]", f"{name} is not a JSON number")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
@pytest.mark.parametrize("route", ["/v1/rubrics/validate", "/v1/rubrics/evaluate"])
async def test_a_rubric_weight_that_is_not_finite_is_refused_not_valid(
    client: httpx.AsyncClient, literal: str, route: str
) -> None:
    """The probe of issue 23: validate said 200 "valid": true, evaluate "reward": null."""
    body = '{"rubric": %s, "outcome": {"c": 1}}' % (RUBRIC % ('"c"', literal))
    if route.endswith("validate"):
        body = '{"rubric": %s}' % (RUBRIC % ('"c"', literal))
    response = await _send(client, "POST", route, body)
    _assert_problem(response, 400, "body.rubric.criteria[0].weight", "is not a JSON number")


def test_the_cli_refuses_the_same_numbers_with_the_same_words(run_cli: Any, tmp_path: Path) -> None:
    for literal, name in [("NaN", "NaN"), ("Infinity", "Infinity"), ("1e999", "Infinity")]:
        book = tmp_path / "book.json"
        book.write_text('{"tenant": "t", "rules": [{"id": "r", "condition_text": "x", "priority": ' + literal + "}]}")
        result: CliResult = run_cli("rules", "import", str(book), "--db", f"sqlite:///{tmp_path}/cli.db")
        assert result.code == 2
        assert f"{name} is not a JSON number" in result.err


# -- item 4: one set of limits for every way in -----------------------------------------------------------------

CASES: list[tuple[str, str, bool]] = [
    ("deepest metadata", '{"condition_text": "x", "metadata": ' + _chain(MAX_METADATA_DEPTH) + "}", True),
    ("metadata one level deeper", '{"condition_text": "x", "metadata": ' + _chain(MAX_METADATA_DEPTH + 1) + "}", False),
    ("metadata 70 levels", '{"condition_text": "x", "metadata": ' + _chain(70) + "}", False),
    ("metadata 300 levels", '{"condition_text": "x", "metadata": ' + _chain(300) + "}", False),
    ("next line and line separator", '{"condition_text": "x\\u0085\\u2028y", "tags": ["\\u0085"]}', True),
    ("NUL in text", '{"condition_text": "a\\u0000b"}', True),
    ("NUL in a scenario id", '{"condition_text": "x", "scope": "scenario", "scenario_id": "s\\u0000"}', False),
    (
        "a scenario id of 201 characters",
        '{"condition_text": "x", "scope": "scenario", "scenario_id": "%s"}' % ("s" * 201),
        False,
    ),
    ("NaN in metadata", '{"condition_text": "x", "metadata": {"a": [NaN]}}', False),
    ("1e999 in metadata", '{"condition_text": "x", "metadata": {"a": {"b": 1e999}}}', False),
    ("a lone surrogate in metadata", '{"condition_text": "x", "metadata": {"a": "\\ud800"}}', False),
    ("an integer of 5,000 digits", '{"condition_text": "x", "metadata": {"a": %s}}' % ("9" * 5000), False),
    ("big finite numbers", '{"condition_text": "x", "metadata": {"a": [1e308, -1e-308, %s]}}' % ("9" * 4000), True),
]


def _python_accepts(text: str) -> bool:
    try:
        fields = json.loads(text)  # Python's own reader: NaN, Infinity and surrogates come through
    except ValueError:
        return False
    try:
        Rule.from_mapping({**fields, "id": "case"})
    except InvalidInputError:
        return False
    return True


@pytest.mark.parametrize(("case", "text", "accepted"), CASES, ids=[c[0] for c in CASES])
async def test_one_set_of_limits_for_every_way_in(
    client: httpx.AsyncClient, run_cli: Any, tmp_path: Path, case: str, text: str, accepted: bool
) -> None:
    tenant = "limits-" + "".join(c if c.isalnum() else "-" for c in case)
    put = await _send(client, "PUT", f"/v1/tenants/{tenant}/rules/case", text)
    with_id = text.replace("{", '{"id": "case", ', 1)
    bulk = await _send(client, "POST", f"/v1/tenants/{tenant}/rules", '{"rules": [' + with_id + "]}")
    book = tmp_path / "book.json"
    book.write_text(json.dumps({"tenant": tenant})[:-1] + ', "rules": [' + with_id + "]}", "utf-8")
    db = f"sqlite:///{tmp_path}/cli.db"
    cli = run_cli("rules", "import", str(book), "--db", db)
    ways = {
        "python": _python_accepts(text),
        "PUT": put.status_code == 200,
        "bulk POST": bulk.status_code == 200,
        "norma rules import": cli.code == 0,
    }
    assert ways == dict.fromkeys(ways, accepted), (ways, put.text[:300], bulk.text[:300], cli.err[:300])
    for response in (put, bulk):
        assert response.status_code in (200, 400, 413), response.text  # never a 5xx
        if not accepted:
            assert response.json()["field"], response.json()
    if accepted:  # and what was accepted exports and imports back, through the CLI
        exported = tmp_path / "export.yaml"
        assert run_cli("rules", "export", "--tenant", tenant, "--db", db, "-o", str(exported)).code == 0
        again = f"sqlite:///{tmp_path}/again.db"
        assert run_cli("rules", "import", str(exported), "--db", again).code == 0, exported.read_text("utf-8")
        listed = run_cli("rules", "list", "--tenant", tenant, "--db", again, "--format", "json")
        original = run_cli("rules", "list", "--tenant", tenant, "--db", db, "--format", "json")
        assert json.loads(listed.out)["rules"] == json.loads(original.out)["rules"]
        served = await client.get(f"/v1/tenants/{tenant}/rules/case", headers=bearer(ADMIN_KEY))
        assert served.json() == json.loads(original.out)["rules"][0]


def test_nan_in_metadata_is_refused_by_python_at_any_depth() -> None:
    for metadata in ({"a": math.nan}, {"a": [1, {"b": math.inf}]}):
        with pytest.raises(InvalidInputError, match="finite"):
            Rule(id="r", condition_text="x", metadata=metadata)
