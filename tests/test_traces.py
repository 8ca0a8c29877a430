"""OpenTelemetry spans of the library (norma._trace, docs/traces.md), read back with the SDK's in-memory exporter:
names, parents and attributes; no message or output text unless NORMA_TRACE_CONTENT asks; and without
OpenTelemetry norma works and never imports it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from norma._trace import CONTENT_ENV, CONTENT_LIMIT
from norma.audit import BUILTIN_RULES, analyze
from norma.checks import evaluate_checks
from norma.errors import LimitExceededError
from norma.matching import RuleMatcher, file_matcher
from norma.names import score_over_seeds, score_record
from norma.rubrics import evaluate_rubric
from norma.rules import Rule
from tests._otel import finished, listening

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RULEBOOK = EXAMPLES / "matching" / "support_rules.yaml"
STOLEN = "someone stole my card"


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    monkeypatch.delenv(CONTENT_ENV, raising=False)
    with listening() as exporter:
        yield exporter


@pytest.fixture(scope="module")
def matcher() -> RuleMatcher:
    return file_matcher(RULEBOOK)


def _texts(exporter: InMemorySpanExporter) -> list[str]:
    """Every string attribute value of every ended span."""
    return [v for s in exporter.get_finished_spans() for v in (s.attributes or {}).values() if isinstance(v, str)]


# -- matching --------------------------------------------------------------------------------------------------------


def test_a_match_is_one_span_with_the_tenant_the_counts_and_the_top_rule(
    spans: InMemorySpanExporter, matcher: RuleMatcher
) -> None:
    result = matcher.match(STOLEN)
    [match] = finished(spans, "norma.match")
    attributes = dict(match.attributes or {})
    assert attributes["norma.tenant"] == "default"  # the rulebook names no tenant
    assert attributes["norma.rules.count"] == 6  # the rules of examples/matching/support_rules.yaml
    assert attributes["norma.messages.count"] == 1
    assert attributes["norma.matches.count"] == len(result) >= 1
    assert attributes["norma.match.top_rule_id"] == "lost-card"
    assert isinstance(attributes["norma.match.threshold"], float)
    assert "norma.message" not in attributes
    assert not any("stole" in text for text in _texts(spans))


def test_the_match_span_nests_under_the_callers_span(spans: InMemorySpanExporter, matcher: RuleMatcher) -> None:
    with trace.get_tracer("tests").start_as_current_span("caller") as caller:
        matcher.match("hello")
    [match] = finished(spans, "norma.match")
    assert match.parent is not None
    assert match.parent.span_id == caller.get_span_context().span_id
    assert match.context is not None
    assert match.context.trace_id == caller.get_span_context().trace_id


def test_a_batch_is_one_span_counting_every_message(spans: InMemorySpanExporter, matcher: RuleMatcher) -> None:
    results = matcher.match_many([STOLEN, "I want my money back", "what a lovely afternoon"])
    [match] = finished(spans, "norma.match")
    attributes = dict(match.attributes or {})
    assert attributes["norma.messages.count"] == 3
    assert attributes["norma.matches.count"] == sum(len(r) for r in results) >= 2
    assert "norma.match.top_rule_id" not in attributes  # one top rule per message: none for the batch


def test_the_message_is_in_the_span_only_when_asked_and_truncated(
    spans: InMemorySpanExporter, matcher: RuleMatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CONTENT_ENV, "1")
    matcher.match(STOLEN)
    long = "my card was stolen " * 100
    matcher.match(long)
    first, second = finished(spans, "norma.match")
    assert (first.attributes or {})["norma.message"] == STOLEN
    assert (second.attributes or {})["norma.message"] == long[:CONTENT_LIMIT]
    assert len(long) > CONTENT_LIMIT == 1000


def test_a_failed_match_is_an_error_span_naming_the_error_type_only(
    spans: InMemorySpanExporter, matcher: RuleMatcher
) -> None:
    with pytest.raises(LimitExceededError):
        matcher.match("my card " * 20_000)  # over max_message_chars
    [match] = finished(spans, "norma.match")
    assert match.status.status_code is StatusCode.ERROR
    assert match.status.description == "LimitExceededError"
    assert (match.attributes or {})["error.type"] == "LimitExceededError"
    assert match.events == ()  # no exception event: its message or traceback could quote the input


# -- audit, checks, rubrics, names ------------------------------------------------------------------------------------


def _case(name: str) -> dict[str, object]:
    case: dict[str, object] = json.loads((EXAMPLES / "audit" / "cases" / f"{name}.json").read_text(encoding="utf-8"))
    return case


@pytest.mark.parametrize(
    ("case", "verdict", "violations"),
    [("fail_english_should", "FAIL", 2), ("pass_english_reference", "PASS", 0)],
)
def test_an_audit_is_one_span_with_the_verdict_and_counts(
    spans: InMemorySpanExporter, case: str, verdict: str, violations: int
) -> None:
    data = _case(case)
    report = analyze(data["request"], EXAMPLES / "audit" / "docs", data["config"])  # type: ignore[arg-type]
    assert report.model_dump(mode="json")["result"] == verdict
    [audit] = finished(spans, "norma.audit")
    attributes = dict(audit.attributes or {})
    assert attributes["norma.verdict"] == verdict
    assert attributes["norma.violations.count"] == violations
    assert attributes["norma.rules.count"] == len(BUILTIN_RULES) > 10
    assert attributes["norma.audit.context"] == "technical"
    assert "norma.output" not in attributes
    assert not any("FlowShaper" in text for text in _texts(spans))


def test_the_audited_output_is_in_the_span_only_when_asked(
    spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CONTENT_ENV, "true")
    data = _case("fail_english_should")
    analyze(data["request"], EXAMPLES / "audit" / "docs", data["config"])  # type: ignore[arg-type]
    [audit] = finished(spans, "norma.audit")
    assert (audit.attributes or {})["norma.output"] == data["request"]["output"]  # type: ignore[index]


CARDS = Rule(
    id="cards",
    condition_text="customer asks about their card",
    checks=[
        {"id": "short", "kind": "max_words", "limit": 50},
        {"id": "no-card", "kind": "no_pii", "kinds": ["card"], "when": "always"},
        {"id": "blocked", "kind": "contains", "terms": ["blocked"]},
    ],
)
LEAKY = "Your card 4111 1111 1111 1111 is fine."


def test_checks_are_one_span_per_rule_with_counts_and_no_output(spans: InMemorySpanExporter) -> None:
    evaluate_checks(CARDS, LEAKY, matched=True)  # short passes, no-card and blocked fail
    evaluate_checks(CARDS, LEAKY, matched=False)  # only no-card applies
    matched, unmatched = finished(spans, "norma.checks")
    assert dict(matched.attributes or {}) == {
        "norma.rule.id": "cards",
        "norma.checks.count": 3,
        "norma.checks.failed": 2,
        "norma.checks.skipped": 0,
    }
    assert (unmatched.attributes or {})["norma.checks.count"] == 1
    assert (unmatched.attributes or {})["norma.checks.failed"] == 1
    assert not any("4111" in text for text in _texts(spans))


def test_checks_carry_the_output_only_when_asked(spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CONTENT_ENV, "1")
    evaluate_checks(CARDS, LEAKY, matched=True)
    [checks] = finished(spans, "norma.checks")
    assert (checks.attributes or {})["norma.output"] == LEAKY


def test_a_rubric_evaluation_is_one_span_with_the_reward(spans: InMemorySpanExporter) -> None:
    rubric = {
        "version": "1",
        "criteria": [
            {"id": "a", "description": "first", "weight": 3.0},
            {"id": "b", "description": "second", "weight": 1.0, "required": True},
        ],
    }
    evaluate_rubric(rubric, outcome={"a": 1.0, "b": 0.0}, pass_threshold=0.5)
    [span] = finished(spans, "norma.rubric")
    assert dict(span.attributes or {}) == {
        "norma.rubric.aggregation": "weighted_sum",
        "norma.rubric.criteria.count": 2,
        "norma.rubric.reward": 0.75,  # (3 * 1.0 + 1 * 0.0) / 4
        "norma.rubric.passed": True,
    }


def test_names_scoring_is_one_span_without_the_names(spans: InMemorySpanExporter) -> None:
    record = json.loads((EXAMPLES / "names" / "records.jsonl").read_text(encoding="utf-8").splitlines()[0])
    result = score_record(record)
    [span] = finished(spans, "norma.names.score")
    attributes = dict(span.attributes or {})
    assert attributes["norma.names.compat"] == "miid"
    assert attributes["norma.names.variations.count"] == 10
    assert attributes["norma.names.final"] == pytest.approx(result["final"])
    assert not any("Smith" in text for text in _texts(spans))


def test_scoring_over_seeds_is_one_span_not_one_per_seed(spans: InMemorySpanExporter) -> None:
    record = json.loads((EXAMPLES / "names" / "records.jsonl").read_text(encoding="utf-8").splitlines()[0])
    result = score_over_seeds(record, [0, 1, 2])
    [span] = finished(spans, "norma.names.score")
    attributes = dict(span.attributes or {})
    assert attributes["norma.names.seeds.count"] == 3
    assert attributes["norma.names.final"] == pytest.approx(sum(result["finals"]) / 3)


# -- without OpenTelemetry --------------------------------------------------------------------------------------------


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_importing_norma_its_traced_modules_and_the_cli_does_not_import_opentelemetry() -> None:
    """Imported at the first span only. (The service imports it anyway: FastAPI 0.142+ depends on it.)"""
    out = _python(
        "import contextlib, io, sys, norma\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry'))\n"
        "import norma.matching._matcher, norma.audit, norma.checks, norma.rubrics, norma.names._batch\n"
        "from norma.cli import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--help'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry'))\n"
        "import norma._trace\n"
        "norma._trace.span('first')\n"
        "print('opentelemetry.trace' in sys.modules)\n"
    )
    assert out.split() == ["[]", "[]", "True"]


def test_without_opentelemetry_norma_matches_audits_and_checks() -> None:
    code = f"""
import sys
sys.modules["opentelemetry"] = None  # as if it were not installed: importing it raises ImportError
import norma._trace
from norma.matching import file_matcher
from norma.checks import evaluate_checks
from norma.rules import Rule
result = file_matcher({str(RULEBOOK)!r}).match({STOLEN!r})
rule = Rule(id="r", condition_text="x", checks=[{{"id": "c", "kind": "max_words", "limit": 2}}])
checks = evaluate_checks(rule, "one two three", matched=True)
print(result[0].rule.id, checks[0].status.value, norma._trace.span("x") is norma._trace.OFF)
"""
    assert _python(code).split() == ["lost-card", "fail", "True"]


# -- a turn check ----------------------------------------------------------------------------------------------------


def test_a_turn_check_is_one_parent_span_over_match_checks_and_rubric(spans: InMemorySpanExporter) -> None:
    from norma.turns import open as open_rules

    checker = open_rules(EXAMPLES / "rulebooks" / "banking-support.yaml", judge=None)
    report = checker.check("my pin is 1234 can you check it", "Sure, tell me your full PIN and I will check it.")
    [turn] = finished(spans, "norma.turn")
    assert turn.parent is None  # the caller opened no span
    attributes = dict(turn.attributes or {})
    assert attributes["norma.turns.count"] == 1
    assert attributes["norma.turn.verdict"] == report.verdict.value == "fail"
    children = [s for s in spans.get_finished_spans() if s.parent is not None]
    assert {s.name for s in children} >= {"norma.match", "norma.checks", "norma.rubric"}
    for name in ("norma.match", "norma.checks", "norma.rubric"):
        for child in finished(spans, name):
            assert child.parent is not None, name
            assert child.parent.span_id == turn.context.span_id, name
