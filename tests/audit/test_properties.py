"""Properties of analyze over arbitrary texts: it never crashes, the verdict follows the violations, lines exist."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from norma.audit import AuditConfig, DocumentSet, analyze, load_documents
from norma.rules import Severity, Verdict
from tests.audit.conftest import AUDIT

DOCS: DocumentSet = load_documents(AUDIT / "docs")
CHEAP = AuditConfig(embeddings=False)
PIECES = st.sampled_from(
    [
        "Implementa", "la clase", "FlowShaper", "DNS §2.01", "R2.01", "DR R9.99", "según DNS §3.01,", "```", "csharp",
        "public sealed class X { }", "using System;", "- ", "\n", "\n\n", "debería", "robusto", "FAIL", "Hola",
        "gracias", "como mencioné", "[turno 2]", "Sugerencia no-normativa:", "`QueueThing`", "¿qué es?", "red", " ",
        "dice que", '"El camino de datos no usa lock"', "en otras palabras", "é", "\t", "—",
    ]
)  # fmt: skip
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=30).map("".join)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(TEXTS, TEXTS, st.sampled_from([None, "technical", "conversational", "mixed"]))
def test_report_invariants(prompt: str, output: str, context: str | None) -> None:
    report = analyze({"input": prompt, "output": output, "context_type": context}, DOCS, CHEAP)
    has_error = any(v.severity is Severity.ERROR for v in report.violations)
    assert (report.result is Verdict.FAIL) == has_error
    lines = len(output.split("\n"))
    for violation in report.violations:
        assert violation.severity in (Severity.ERROR, Severity.WARNING)
        assert violation.line is None or 1 <= violation.line <= lines
    assert len(report.rules) == 13
    ratio = report.metrics.coverage_ratio
    assert ratio is None or ratio >= 0
    assert analyze({"input": prompt, "output": output, "context_type": context}, DOCS, CHEAP) == report
