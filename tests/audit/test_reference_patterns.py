"""Configured reference patterns (``reference_patterns``): compiled with RE2 only, refused when RE2 cannot run them
in linear time, and counted as citations by IR.0.01, IR.0.03 and the metrics."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from norma.audit import AuditConfig, DocumentSet, analyze, load_config, load_documents
from norma.audit._lexicon import get_lexicon
from norma.audit._models import ContextType
from norma.audit._references import find_references
from norma.audit._segments import segment_output
from norma.audit._text import parse_text
from norma.errors import ConfigError
from tests.conftest import CliResult

Run = Callable[..., CliResult]
POLICY = r"(?P<doc>POL-\d+)\s*§\s*(?P<sec>\d+(?:\.\d+)*)"
REQUEST = {
    "input": "Implementa la clase FlowShaper",
    "output": "Creo la clase `FlowShaper` según POL-12 §3.\n\n```csharp\npublic sealed class FlowShaper\n{\n}\n```",
}


@pytest.fixture(scope="module")
def policies(tmp_path_factory: pytest.TempPathFactory) -> DocumentSet:
    folder = tmp_path_factory.mktemp("policies")
    (folder / "Politica_Cifrado.md").write_text(
        "---\nsigla: POL-12\nversion: '1'\n---\n# Política de cifrado\n\n## §3 Cifrado en tránsito\n"
        "Todo flujo que gestione `FlowShaper` se cifra con TLS 1.3.\n",
        encoding="utf-8",
    )
    return load_documents(folder)


def _config(*patterns: str) -> AuditConfig:
    return AuditConfig.parse({"embeddings": False, "reference_patterns": list(patterns)})


def test_catastrophic_pattern_does_not_stall_an_audit() -> None:
    config = _config(r"(?P<sec>(a+)+)$")  # exponential with a backtracking engine on 'aaaa…!'
    assert type(config.reference_regexes[0]).__module__.startswith("re2")
    request = {"input": "Implementa la clase FlowShaper", "output": "a" * 50_000 + "!", "context_type": "technical"}
    started = time.perf_counter()
    report = analyze(request, None, config)
    elapsed = time.perf_counter() - started
    assert report.metrics.references == 0
    assert elapsed < 2.0, f"a catastrophic pattern took {elapsed:.1f} s"  # a bound, not a benchmark


def test_configured_pattern_makes_a_citation_count(policies: DocumentSet) -> None:
    plain = analyze(REQUEST, policies, _config())
    assert plain.metrics.references == 0
    assert "IR.0.01" in [v.rule for v in plain.violations]
    cited = analyze(REQUEST, policies, _config(POLICY))
    assert cited.metrics.references == 1
    assert cited.metrics.rules_referenced == 1
    assert cited.violations == ()
    assert cited.model_dump(mode="json")["result"] == "PASS"


def test_configured_reference_is_resolved_against_the_documents(policies: DocumentSet) -> None:
    hallucinated = {**REQUEST, "output": REQUEST["output"].replace("POL-12 §3", "POL-12 §9")}
    report = analyze(hallucinated, policies, _config(POLICY))
    ir_0_03 = [v for v in report.violations if v.rule == "IR.0.03"]
    assert len(ir_0_03) == 1
    assert ir_0_03[0].evidence == "POL-12 §9"
    other_document = {**REQUEST, "output": REQUEST["output"].replace("POL-12", "POL-7")}
    assert "IR.0.03" in [v.rule for v in analyze(other_document, policies, _config(POLICY)).violations]


def test_document_group_is_optional_and_upper_cased() -> None:
    parsed = parse_text("ver pol-12 §3.1, y la sección 4 de la política")
    patterns = _config(r"(?i)(?P<doc>pol-\d+)\s*§\s*(?P<sec>\d+(?:\.\d+)*)", r"sección (?P<sec>\d+)").reference_regexes
    found = [(r.document, r.section, r.text) for r in find_references(parsed, patterns=patterns)]
    assert found == [("POL-12", "3.1", "pol-12 §3.1"), (None, "4", "sección 4")]


def test_text_matched_by_two_patterns_counts_once() -> None:
    parsed = parse_text("Según DNS §2.03 y R2.01, el motor limita el flujo.")
    spec_only = find_references(parsed)
    overlapping = _config(r"(?P<doc>DNS)\s+§(?P<sec>\d+\.\d+)", r"(?P<sec>R\d+\.\d+)").reference_regexes
    assert [r.text for r in find_references(parsed, patterns=overlapping)] == [r.text for r in spec_only]
    assert len(spec_only) == 2


def test_configured_reference_makes_a_mixed_paragraph_technical() -> None:
    parsed = parse_text("Hola, gracias por tu paciencia.\n\nEso queda como dice POL-12 §3.")
    kinds = [
        [s.kind for s in segment_output(parsed, ContextType.MIXED, get_lexicon(), patterns)]
        for patterns in ((), _config(POLICY).reference_regexes)
    ]
    assert kinds == [[ContextType.CONVERSATIONAL] * 2, [ContextType.CONVERSATIONAL, ContextType.TECHNICAL]]


def test_patterns_never_look_inside_code() -> None:
    parsed = parse_text("```\nPOL-12 §3\n```\nPOL-12 §4")
    assert [r.section for r in find_references(parsed, patterns=_config(POLICY).reference_regexes)] == ["4"]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        (r"(?P<sec>a)\1", "is not accepted"),  # back-reference
        (r"(?=POL)(?P<sec>\d+)", "is not accepted"),  # look-ahead
        (r"(?<=POL )(?P<sec>\d+)", "is not accepted"),  # look-behind
        (r"(?P<sec>\d+", "is not accepted"),  # malformed
        (r"POL-\d+ §\d+", "no named group 'sec'"),
        (r"(?P<doc>POL)(?P<section>\d+)", "unknown named group"),
        ("", "at least 1 character"),
    ],
)
def test_unsupported_pattern_is_a_config_error_naming_it(tmp_path: Path, pattern: str, message: str) -> None:
    path = tmp_path / "audit.json"
    path.write_text(json.dumps({"reference_patterns": [POLICY, pattern]}), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    text = str(info.value)
    assert info.value.source == str(path)
    assert "reference_patterns.1" in text
    assert message in text
    if pattern:
        assert repr(pattern) in text


def test_pattern_count_and_length_are_bounded() -> None:
    with pytest.raises(ConfigError, match="at most 32"):
        AuditConfig.parse({"reference_patterns": [POLICY] * 33})
    with pytest.raises(ConfigError, match="at most 1000"):
        AuditConfig.parse({"reference_patterns": ["(?P<sec>" + "a" * 1000 + ")"]})


def test_patterns_survive_the_batch_workers() -> None:
    from norma.audit import analyze_batch

    config = _config(POLICY)
    items = analyze_batch([("a:1", REQUEST), ("a:2", REQUEST)], None, config, workers=2)
    assert [item.report.metrics.references if item.report else None for item in items] == [1, 1]


def test_cli_config_with_a_pattern(run_cli: Run, tmp_path: Path, policies: DocumentSet) -> None:
    folder = next(iter(policies)).path
    assert folder is not None
    request = tmp_path / "request.json"
    request.write_text(json.dumps(REQUEST), encoding="utf-8")
    config = tmp_path / "audit.json"
    base = ("audit", str(request), "--docs", str(folder.parent), "--no-embeddings", "--format", "json")
    assert run_cli(*base).code == 1
    config.write_text(json.dumps({"reference_patterns": [POLICY]}), encoding="utf-8")
    passed = run_cli(*base, "--config", str(config))
    assert passed.code == 0, passed.err
    assert json.loads(passed.out)["metrics"]["references"] == 1
    config.write_text(json.dumps({"reference_patterns": [r"(a)\1"]}), encoding="utf-8")
    refused = run_cli(*base, "--config", str(config))
    assert refused.code == 2
    assert "reference_patterns.0" in refused.err
    assert refused.err.count("\n") == 1
