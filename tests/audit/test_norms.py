"""Issue 21, item 4: the norms of any organisation — acronyms, priority, file names, rule-id prefixes and
keywords come from configuration; the spec's NetShaper set is only the default."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from norma.audit import (
    DEFAULT_NORMS,
    AuditConfig,
    ContextType,
    NormsConfig,
    analyze,
    classify_context,
    load_config,
    load_documents,
)
from norma.audit._lexicon import get_lexicon
from norma.audit._references import citation_syntax, find_references
from norma.audit._text import parse_text
from norma.errors import ConfigError, InvalidInputError
from norma.rules import Verdict
from tests.audit.conftest import AUDIT
from tests.conftest import CliResult

Run = Callable[..., CliResult]
POLICIES = AUDIT / "policies"


def _norms(**fields: object) -> NormsConfig:
    return NormsConfig.model_validate(fields)


def test_the_default_is_the_specs_set() -> None:
    assert DEFAULT_NORMS.priority == ("DNS", "DR", "ICR", "RED", "IRA")
    assert DEFAULT_NORMS.rule_prefixes == ("R",)
    assert DEFAULT_NORMS.file_names["domain_rules"] == "DR"
    assert AuditConfig().norms == DEFAULT_NORMS


def test_references_use_the_configured_acronyms_and_rule_prefixes() -> None:
    text = "SEC §2.1, SEC 4.2 and POL-12; DNS 2.03 and R2.01 are another organisation's; POL-12a is not one."
    found = find_references(parse_text(text), syntax=citation_syntax(("SEC", "POL"), ("POL-",)))
    assert [(r.document, r.section) for r in found] == [("SEC", "2.1"), ("SEC", "4.2"), (None, "POL-12")]
    spec = find_references(parse_text(text))
    assert [(r.document, r.section) for r in spec] == [("SEC", "2.1"), ("DNS", "2.03"), (None, "R2.01")]
    # with §, any acronym cites a norm: an unknown one is a reference IR.0.03 reports (issue 40)
    unknown = find_references(parse_text("DNS §2.03 and ISO 27001"), syntax=citation_syntax(("SEC",), ()))
    assert [(r.document, r.section) for r in unknown] == [("DNS", "2.03")]


def test_a_letter_prefix_needs_a_dotted_number() -> None:
    syntax = citation_syntax(("DNS",), ("R",))
    assert [r.section for r in find_references(parse_text("Cloudflare R2 y R2.01"), syntax=syntax)] == ["R2.01"]


def test_configured_priority_resolves_a_bare_rule_id(tmp_path: Path) -> None:
    for name, acronym in (("a.md", "AAA"), ("b.md", "BBB")):
        (tmp_path / name).write_text(f"---\nsigla: {acronym}\n---\n# {acronym}\n\n## POL-3 Colas\nUsa colas.\n")
    request = {"input": "Implementa la cola", "output": "Implemento la cola acotada (POL-3)."}
    ranked = AuditConfig(embeddings=False, norms=_norms(priority=["BBB", "AAA"], rule_prefixes=["POL-"]))
    assert analyze(request, tmp_path, ranked).result is Verdict.PASS
    unranked = AuditConfig(embeddings=False, norms=_norms(priority=["XYZ"], rule_prefixes=["POL-"]))
    report = analyze(request, tmp_path, unranked)  # two unlisted documents rank equal: an unresolved conflict
    assert report.result is Verdict.FAIL
    assert {v.rule for v in report.violations} == {"IR.0.03", "IR.8.01"}
    assert "AAA, BBB" in report.violations[0].description


def test_documents_loaded_for_other_norms_are_reparsed_for_the_audits(tmp_path: Path) -> None:
    (tmp_path / "policies.md").write_text("---\nsigla: POL\n---\n# Policies\n\n## POL-12 Retries\nRetry 3 times.\n")
    norms = _norms(priority=["POL"], rule_prefixes=["POL-"])
    loaded_for_the_spec = load_documents(tmp_path)  # "POL-12" is no section heading for the spec's norms
    assert loaded_for_the_spec.by_acronym("POL").sections == ()  # type: ignore[union-attr]
    configured = loaded_for_the_spec.configured(norms)
    assert [s.label for s in configured.by_acronym("POL").sections] == ["POL-12"]  # type: ignore[union-attr]
    assert configured is loaded_for_the_spec.configured(norms)  # built once
    assert loaded_for_the_spec.configured(DEFAULT_NORMS) is loaded_for_the_spec
    request = {"input": "Implement the retry policy", "output": "I implement retries as POL-12 says (POL-12)."}
    report = analyze(request, loaded_for_the_spec, AuditConfig(embeddings=False, norms=norms))
    assert report.result is Verdict.PASS, report.violations


def test_a_document_without_an_acronym_points_to_file_names() -> None:
    with pytest.raises(InvalidInputError, match="declares no acronym") as caught:
        load_documents(POLICIES / "docs")  # Acme's documents are named in its configuration only
    assert "norms.file_names" in str(caught.value)


def test_file_names_and_keywords_come_from_the_configuration() -> None:
    config = load_config(POLICIES / "config.json")
    assert load_documents(POLICIES / "docs", norms=config.norms).acronyms == ("SEC", "POL")
    acme = get_lexicon(None, config.norms.technical_keywords)
    assert classify_context("Review the PaymentsGateway against SEC", acme) is ContextType.TECHNICAL
    assert classify_context("Review the PaymentsGateway against SEC") is ContextType.MIXED  # not NetShaper's words
    assert classify_context("Review the NetShaper Engine") is ContextType.TECHNICAL
    assert classify_context("Review the NetShaper Engine", acme) is ContextType.MIXED


@pytest.mark.parametrize(
    ("norms", "where"),
    [
        ({"priority": ["sec"]}, "norms.priority.0"),
        ({"priority": []}, "norms.priority"),
        ({"rule_prefixes": ["P(L"]}, "norms.rule_prefixes.0"),
        ({"file_names": {"x": "not an acronym"}}, "norms.file_names.x"),
        ({"acronyms": ["SEC"]}, "norms.acronyms"),
    ],
)
def test_bad_norms_are_config_errors_naming_the_field(norms: dict[str, object], where: str) -> None:
    with pytest.raises(ConfigError, match=where.replace(".", r"\.")):
        AuditConfig.parse({"norms": norms})


def test_concepts_never_include_the_norms_own_names() -> None:
    config = load_config(POLICIES / "config.json").model_copy(update={"embeddings": False})
    docs = load_documents(POLICIES / "docs", norms=config.norms)
    request = {"input": "Review the RetryPolicy", "output": "The `RetryPolicy` complies with POL-12 and SEC §3.1."}
    report = analyze(request, docs, config)
    assert report.result is Verdict.PASS
    assert report.metrics.technical_concepts == 1  # RetryPolicy; not SEC, not POL


def test_batch_and_reports_with_the_english_norms(run_cli: Run) -> None:
    args = ["--docs", str(POLICIES / "docs"), "--config", str(POLICIES / "config.json"), "--no-embeddings"]
    batch = str(POLICIES / "requests.jsonl")
    result = run_cli("audit", "--batch", batch, *args, "--format", "json")
    assert result.code == 1, result.err  # the batch holds FAIL records
    verdicts = [item["result"] for item in json.loads(result.out)["reports"]]
    assert verdicts == ["PASS", "FAIL", "PASS", "FAIL", "SKIP"]
    sarif = json.loads(run_cli("audit", "--batch", batch, *args, "--format", "sarif").out)
    assert {r["ruleId"] for r in sarif["runs"][0]["results"] if r["kind"] == "fail"} >= {"IR.0.01"}
    names = {rule["id"]: rule.get("name") for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert names["IR.0.01"] == "Mandatory reference (technical)"  # English reports, English rule names
    junit = run_cli("audit", "--batch", batch, *args, "--format", "junit").out
    assert "<testsuites" in junit
    assert "IR.0.01" in junit
