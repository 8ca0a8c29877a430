"""Coverage-guided fuzzing (atheris / libFuzzer) of every entry point that takes user data.

Each target gets raw bytes, mutated by libFuzzer from a seed corpus of valid inputs (the project's examples and a
few hand-made records) toward new code paths; the property is the same as the Hypothesis fuzz tests: only
``NormaError`` (or a documented compatibility exception) escapes, and no input takes longer than ``-timeout``.
Anything else is a crash: libFuzzer stops, saves the input as ``crash-<sha1>`` and this process exits non-zero.

Usage (``make fuzz`` runs every target for 100,000 inputs)::

    .venv/bin/python tests/fuzz/atheris_fuzz.py --list
    .venv/bin/python tests/fuzz/atheris_fuzz.py TARGET [libFuzzer flags, e.g. -runs=100000 -timeout=10]

The seed corpus is written to ``.cache/fuzz/TARGET/`` (libFuzzer adds the inputs it finds interesting there).
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import atheris

# Coverage instrumentation only when run as the fuzzer (imported by a test, the modules stay as they are).
with atheris.instrument_imports(include=["norma"]) if __name__ == "__main__" else contextlib.nullcontext():
    import pydantic
    from starlette.testclient import TestClient

    from norma._safety import load_json, load_yaml
    from norma.audit import AuditConfig, analyze, load_documents
    from norma.errors import NormaError
    from norma.matching import Rule, RuleMatcher, SessionState
    from norma.names import score_record
    from norma.rubrics import evaluate_outcome_against_rubric, load_rubric, parse_rubric_text, validate_rubric_dict
    from norma.service import ServiceSettings, create_app
    from norma.store import dump_rulebook, import_rulebook, load_rulebook, open_store

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
RUBRIC_COMPAT = (NormaError, pydantic.ValidationError)
"""The rubric API may raise pydantic's ValidationError too, as synth-ai's does (docs/rubrics.md)."""

RULEBOOK = (EXAMPLES / "rulebooks" / "banking-support.yaml").read_text(encoding="utf-8")
NAMES_RECORD = {
    "name": "John Smith",
    "variations": ["Jon Smith", "Jhon Smyth", "Johnn Smithe", "Jean Smit"],
    "labels": {
        "variation_count": 4,
        "phonetic_similarity": {"Light": 0.2, "Medium": 0.6, "Far": 0.2},
        "orthographic_similarity": {"Medium": 1.0},
        "rule_based": {"selected_rules": ["delete_random_letter", "swap_random_letter"], "rule_percentage": 30},
    },
}


def _rubric_seeds() -> list[bytes]:
    seeds = [p.read_bytes() for p in sorted((REPO / "tests" / "rubrics" / "data").rglob("*")) if p.is_file()]
    return [s for s in seeds if len(s) < 20_000][:20]


def _audit_seeds() -> list[bytes]:
    return [p.read_bytes() for p in sorted((EXAMPLES / "audit" / "requests").glob("*.json"))]


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


# -- targets: bytes -> call; let anything but the allowed exceptions escape --------------------------------------


def _refused_anywhere(value: Any, *, finite: bool) -> bool:
    """Whether ``value`` holds what the bounded loaders refuse: a lone surrogate (in a key or a value) or, for
    JSON (``finite``), a number that is not finite."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, float):
        return finite and not math.isfinite(value)
    if isinstance(value, dict):
        return any(_refused_anywhere(k, finite=finite) or _refused_anywhere(v, finite=finite) for k, v in value.items())
    if isinstance(value, list):
        return any(_refused_anywhere(v, finite=finite) for v in value)
    return False


def bounded_json(data: bytes) -> None:
    """Only NormaError escapes, and what loads holds no lone surrogate and no NaN / Infinity / 1e999."""
    try:
        value = load_json(data)
    except NormaError:
        return
    assert not _refused_anywhere(value, finite=True), f"load_json let through {value!r:.200}"


def bounded_yaml(data: bytes) -> None:
    try:
        value = load_yaml(data)
    except NormaError:
        return
    assert not _refused_anywhere(value, finite=False), f"load_yaml let through {value!r:.200}"


def rubric_text(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    with contextlib.suppress(*RUBRIC_COMPAT):
        mapping = parse_rubric_text(text, fetch=False)
        rubric = load_rubric(mapping)
        evaluate_outcome_against_rubric({"scores": {}}, rubric)


def rubric_strict(data: bytes) -> None:
    try:
        value = load_json(data)
    except NormaError:
        return
    if not isinstance(value, dict):  # synth-ai's documented TypeError for a non-mapping payload
        try:
            validate_rubric_dict(value)
        except TypeError:
            return
        raise AssertionError("validate_rubric_dict accepted a non-mapping")
    with contextlib.suppress(*RUBRIC_COMPAT):
        validate_rubric_dict(value)


def names_record(data: bytes) -> None:
    with contextlib.suppress(NormaError):
        score_record(load_json(data))


def rule(data: bytes) -> None:
    with contextlib.suppress(NormaError):
        Rule.from_mapping(load_json(data))


def rulebook(data: bytes) -> None:
    with contextlib.suppress(NormaError):
        value = load_yaml(data)
        if not isinstance(value, str):  # a string is taken as the rulebook's path
            load_rulebook(value, tenant_id="fuzz")


def rulebook_roundtrip(data: bytes) -> None:
    """Rules read from any bytes (JSON, else YAML) dump as YAML and as JSON and read back equal (issue 23: a YAML
    dump dropped U+0085; PUT accepted metadata no rulebook could hold)."""
    try:
        value = load_json(data)
    except NormaError:
        try:
            value = load_yaml(data)
        except NormaError:
            return
    items = value.get("rules") if isinstance(value, dict) else value
    if not isinstance(items, list):
        items = [value]
    rules: dict[str, Rule] = {}
    for item in items:
        with contextlib.suppress(NormaError):
            rule = Rule.from_mapping(item) if isinstance(item, dict) else None
            if rule is not None:
                rules[rule.id] = rule.model_copy(update={"tenant_id": "fuzz"})
    for fmt in ("yaml", "json"):
        text = dump_rulebook(list(rules.values()), tenant_id="fuzz", fmt=fmt)  # type: ignore[arg-type]
        loaded = load_json(text.encode()) if fmt == "json" else load_yaml(text.encode())
        again = load_rulebook(loaded, tenant_id="fuzz").rules
        assert list(again) == list(rules.values()), f"{fmt} round trip changed the rules: {text[:500]}"


_STATE: dict[str, Any] = {}


def _documents() -> Any:
    if "documents" not in _STATE:
        _STATE["documents"] = load_documents(EXAMPLES / "audit" / "docs")
    return _STATE["documents"]


def audit_request(data: bytes) -> None:
    with contextlib.suppress(NormaError):
        analyze(load_json(data), _documents(), AuditConfig(embeddings=False))


def audit_config(data: bytes) -> None:
    with contextlib.suppress(NormaError):
        AuditConfig.parse(load_json(data))


def _matcher() -> RuleMatcher:
    if "matcher" not in _STATE:
        book = load_rulebook(EXAMPLES / "rulebooks" / "banking-support.yaml")
        _STATE["matcher"] = RuleMatcher(book.rules)
    matcher: RuleMatcher = _STATE["matcher"]
    return matcher


def match_request(data: bytes) -> None:
    """A match request as the service and library take it: a message, a session and a tag filter."""
    try:
        request = load_json(data)
    except NormaError:
        return
    if not isinstance(request, dict):
        return
    with contextlib.suppress(NormaError):
        session = request.get("session")
        state = None if session is None else SessionState.from_mapping(session)
        message = request.get("message", "")
        _matcher().match(message, state, tags=request.get("tags"), explain=bool(request.get("explain")))


def _client() -> Any:
    if "client" not in _STATE:
        folder = Path(tempfile.mkdtemp(prefix="norma-fuzz-"))
        store = open_store(f"sqlite:///{folder / 'norma.db'}")
        import_rulebook(store, EXAMPLES / "rulebooks" / "banking-support.yaml")
        key = store.create_api_key("northwind-bank", name="fuzz")
        app = create_app(ServiceSettings(db_url=f"sqlite:///{folder / 'norma.db'}", rate_limit=0), store=store)
        client = TestClient(app, raise_server_exceptions=False)
        client.__enter__()
        client.headers["Authorization"] = f"Bearer {key}"
        _STATE["client"] = client
        _STATE["routes"] = sorted(
            (method.upper(), path.replace("{tenant}", "northwind-bank"))
            for path, operations in app.openapi()["paths"].items()
            for method in operations
            if method in ("post", "put") and "{" not in path.replace("{tenant}", "")
        )
    return _STATE["client"]


def service_body(data: bytes) -> None:
    """Any body on any POST/PUT route of the service: never a 5xx, every error a JSON problem."""
    client = _client()
    routes = _STATE["routes"]
    if not data:
        return
    method, path = routes[data[0] % len(routes)]
    if path.endswith("/keys"):
        return  # an admin route: a tenant key gets 404 before the body is read
    response = client.request(method, path, content=data[1:], headers={"Content-Type": "application/json"})
    if response.status_code >= 500:
        raise AssertionError(f"{method} {path} answered {response.status_code}: {response.text[:300]}")
    if response.status_code >= 400:
        assert response.headers["content-type"].startswith("application/problem+json"), response.headers
        assert "detail" in response.json()
    try:
        parsed = json.loads(data[1:])  # Python's own reader: NaN, Infinity, 1e999 and lone surrogates come through
    except (ValueError, RecursionError):
        return
    if _refused_anywhere(parsed, finite=True):  # the edge refuses them on every route, naming the field
        assert response.status_code in (400, 413), f"{method} {path}: {response.status_code} for {data[1:300]!r}"
        assert response.json()["field"].startswith("body"), response.json()


def _rule_seeds() -> list[bytes]:
    rules = load_rulebook(EXAMPLES / "rulebooks" / "banking-support.yaml").rules
    return [_json(r.to_dict()) for r in rules[:5]]


def _config_seeds() -> list[bytes]:
    patterns = ["(?P<doc>POL)-(?P<sec>\\d+)"]
    return [_json({"embeddings": False, "reference_patterns": patterns, "limits": {"max_output_chars": 5000}})]


def _match_seeds() -> list[bytes]:
    session = {"active_scenario_id": "cards", "turn": 3, "fire_counts": {"card-lost-verify": 1}}
    return [_json({"message": "someone used my card", "session": session, "tags": ["cards"], "explain": True})]


def _service_seeds() -> list[bytes]:
    bodies = [_json({"message": "I lost my card", "explain": True}), _json(NAMES_RECORD)]
    refused = [b'{"message": "\\ud800"}', b'{"rules": [{"id": "r", "condition_text": "x", "priority": NaN}]}']
    refused += [b'{"rubric": {"criteria": [{"id": "c", "weight": 1e999}]}}', b'{"x": "\xed\xa0\x80"}']
    return [bytes([i]) + body for body in [*bodies, *refused] for i in range(8)]


def _roundtrip_seeds() -> list[bytes]:
    rules = [r.to_dict() for r in load_rulebook(EXAMPLES / "rulebooks" / "banking-support.yaml").rules[:5]]
    odd = {"id": "odd", "condition_text": "x\x85\u2028y\x00", "tags": ["\u2029"], "metadata": {"k\x85": [1.5, None]}}
    return [_json({"rules": rules}), _json([odd]), RULEBOOK.encode()]


TARGETS: dict[str, tuple[Callable[[bytes], None], Callable[[], list[bytes]]]] = {
    "bounded_json": (
        bounded_json,
        lambda: [_json(NAMES_RECORD), b'{"a": [1, 2.5, null, true, "x"]}', b'{"a": NaN, "\\ud800": 1e999}'],
    ),
    "bounded_yaml": (bounded_yaml, lambda: [RULEBOOK.encode(), b"a: &x [1, 2]\nb: *x\n", b'a: "\\ud800"\n']),
    "rubric_text": (rubric_text, _rubric_seeds),
    "rubric_strict": (rubric_strict, _rubric_seeds),
    "names_record": (names_record, lambda: [_json(NAMES_RECORD)]),
    "rule": (rule, _rule_seeds),
    "rulebook": (rulebook, lambda: [RULEBOOK.encode()]),
    "rulebook_roundtrip": (rulebook_roundtrip, _roundtrip_seeds),
    "audit_request": (audit_request, _audit_seeds),
    "audit_config": (audit_config, _config_seeds),
    "match_request": (match_request, _match_seeds),
    "service_body": (service_body, _service_seeds),
}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help", "--list"):
        print("targets:", " ".join(TARGETS))
        raise SystemExit(0 if len(sys.argv) > 1 else 2)
    name = sys.argv[1]
    if name not in TARGETS:
        raise SystemExit(f"unknown target {name!r}; one of: {', '.join(TARGETS)}")
    target, seeds = TARGETS[name]
    corpus = REPO / ".cache" / "fuzz" / name
    corpus.mkdir(parents=True, exist_ok=True)
    for i, seed in enumerate(seeds()):
        (corpus / f"seed-{i:03d}").write_bytes(seed)
    flags = [a for a in sys.argv[2:] if a.startswith("-")]
    atheris.Setup([sys.argv[0], *flags, str(corpus)], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
