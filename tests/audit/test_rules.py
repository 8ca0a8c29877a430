"""Rule internals: references, decisions, claims, concepts, fuzzy ratio, segmentation, priority, inputs."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.audit import (
    AuditConfig,
    ContextType,
    DocumentSet,
    RuleStatus,
    analyze,
    best_window_ratio,
    extract_concepts,
)
from norma.audit._documents import parse_document
from norma.audit._lexicon import get_lexicon
from norma.audit._references import find_claims, find_decisions, find_references
from norma.audit._segments import segment_output
from norma.audit._text import parse_text
from norma.errors import ConfigError, InvalidInputError
from norma.rules import Severity, Verdict

CHEAP = AuditConfig(embeddings=False)


def test_references_follow_the_spec_pattern() -> None:
    parsed = parse_text("Ver DNS §2.03, DR R2.01, ICR 9.01 y R1.02; IR.3.01 no es una referencia; la red 3 tampoco.")
    found = [(r.document, r.section) for r in find_references(parsed)]
    assert found == [("DNS", "2.03"), ("DR", "R2.01"), ("ICR", "9.01"), (None, "R1.02")]


def test_references_inside_code_do_not_count() -> None:
    parsed = parse_text("```\n// DNS §2.03\n```\nTexto DNS §3.01")
    assert [r.line for r in find_references(parsed)] == [4]


def test_decisions_heuristic() -> None:
    text = (
        "Implemento `FlowShaper`.\n"  # major statement
        "- Usa la cola acotada.\n"  # minor bullet
        "Esto es una explicación.\n"  # no design verb
        "```csharp\nusing System;\nnamespace NetShaper;\npublic sealed class FlowShaper { }\n"
        "public interface IClock { }\n```"
    )
    decisions = find_decisions(parse_text(text), get_lexicon())
    assert [(d.line, d.major, d.kind) for d in decisions] == [
        (1, True, "statement"),
        (2, False, "statement"),
        (8, True, "type"),
    ]


def test_claims_extract_quote_or_rest_and_reformulation() -> None:
    text = (
        'Según DNS §3.01, "El camino de datos no usa lock".\n'
        "DR R2.01 dice que la tasa nunca es negativa.\n"
        "En otras palabras, según DNS §3.01 no bloqueamos nada aquí."
    )
    claims = find_claims(parse_text(text), get_lexicon())
    assert [(c.document, c.section, c.quoted, c.literal, c.reformulation) for c in claims] == [
        ("DNS", "3.01", "El camino de datos no usa lock", True, False),
        ("DR", "R2.01", "la tasa nunca es negativa", False, False),
        ("DNS", "3.01", "no bloqueamos nada aquí", False, True),
    ]


def test_concepts_by_shape() -> None:
    text = (
        "Usa `TokenBucketPolicy` con maxBurst, max_burst, DSCP y QoS; según DNS §2.03.\n```csharp\n"
        "using System.Threading;\n"
        "public sealed class FlowShaper : IShapingPolicy { public long BurstBytes { get; } public void Run() { } }\n```"
    )
    concepts = extract_concepts(parse_text(text))
    assert sorted(c.term for c in concepts) == sorted(
        ["TokenBucketPolicy", "maxBurst", "max_burst", "DSCP", "QoS", "FlowShaper", "IShapingPolicy", "BurstBytes"]
    )
    assert {c.term: c.line for c in concepts}["FlowShaper"] == 4


AUTOJUNK_A = (
    "y con lock datos se usa con y se actualiza camino lock usa se compartido paquete datos el usa actualiza lock "
    "usa estado usa datos lock con interlocked compartido lock de compartido cola flujo paquete y camino estado se "
    "con no se se paquete usa flujo datos paquete no no"
)


def test_fuzzy_ratio_is_correct_where_difflib_autojunk_breaks() -> None:
    changed = "x" + AUTOJUNK_A[1:]  # one character differs in a 269-character text
    assert len(AUTOJUNK_A) > 200
    assert difflib.SequenceMatcher(None, AUTOJUNK_A, changed).ratio() < 0.10  # the spec's algorithm, broken
    assert difflib.SequenceMatcher(None, AUTOJUNK_A, changed, autojunk=False).ratio() > 0.99
    assert best_window_ratio(changed, AUTOJUNK_A) > 0.99


@given(st.text(alphabet="abcde ", min_size=1, max_size=60), st.text(alphabet="abcde ", max_size=60))
def test_fuzzy_ratio_range_and_identity(quote: str, other: str) -> None:
    value = best_window_ratio(quote, other + quote + other)
    assert 0.0 <= best_window_ratio(quote, other) <= 1.0
    if quote.strip():
        assert value == pytest.approx(1.0)


def test_fuzzy_ratio_equals_difflib_on_short_equal_length_texts() -> None:
    a, b = "el camino de datos no usa lock", "el camino de datos no usa mutex"
    window = best_window_ratio(a, b)
    assert window >= difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() - 1e-9


def test_segments_of_a_mixed_output() -> None:
    output = "¡Hola! Encantado.\n\nCreo `FlowShaper` según DNS §2.01.\n\n```csharp\nclass A { }\n```\n\nGracias."
    segments = segment_output(parse_text(output), ContextType.MIXED, get_lexicon())
    assert [s.kind for s in segments] == [
        ContextType.CONVERSATIONAL,
        ContextType.TECHNICAL,
        ContextType.TECHNICAL,
        ContextType.CONVERSATIONAL,
    ]


def test_document_priority_order_and_bare_rule_resolution(docs: DocumentSet) -> None:
    assert docs.acronyms == ("DNS", "DR", "ICR", "RED")
    assert [s.document for s in docs.resolve(None, "R2.01")] == ["DR"]
    assert docs.resolve("DNS", "3.1")[0].label == "3.01"  # 3.01 and 3.1 are one section


def test_priority_tie_is_an_unresolved_conflict_and_fails() -> None:
    a = parse_document("---\nsigla: ABC\n---\n# A\n### R9.01 Uno\nTexto uno.\n", "a.md")
    b = parse_document("---\nsigla: XYZ\n---\n# B\n### R9.01 Otro\nTexto otro.\n", "b.md")
    report = analyze(
        {"input": "Implementa la clase X", "output": "Uso la cola según R9.01."}, DocumentSet([a, b]), CHEAP
    )
    assert report.result is Verdict.FAIL
    assert [v.rule for v in report.violations] == ["IR.0.03", "IR.8.01"]  # + the meta rule: a solution anyway
    assert "conflicto no resuelto" in report.violations[0].description


def test_duplicate_acronyms_are_rejected() -> None:
    a = parse_document("---\nsigla: DNS\n---\n# A\n", "a.md")
    b = parse_document("---\nsigla: DNS\n---\n# B\n", "b.md")
    with pytest.raises(InvalidInputError, match="two documents declare the acronym DNS"):
        DocumentSet([a, b])


@pytest.mark.parametrize(
    ("request_data", "message"),
    [
        ({"output": "x"}, "input: Field required"),
        ({"input": "x", "output": "y", "context_type": "casual"}, "unknown context_type"),
        ({"input": "x", "output": "y", "active_documents": ["Nope.md"]}, "Nope.md"),
        ({"input": "x", "output": "y", "document_versions": {"ZZZ": "1.0"}}, "ZZZ"),
        ({"input": "x", "output": "y", "extra": 1}, "extra"),
    ],
)
def test_bad_requests_are_input_errors(request_data: dict[str, object], message: str, docs: DocumentSet) -> None:
    with pytest.raises(InvalidInputError, match=message):
        analyze(request_data, docs, CHEAP)


def test_active_documents_without_documents_is_an_input_error() -> None:
    with pytest.raises(InvalidInputError, match="no documents were given"):
        analyze({"input": "x", "output": "y", "active_documents": ["Domain_Rules.md"]})


def test_without_documents_the_document_rules_are_not_evaluated() -> None:
    report = analyze(
        {"input": "Implementa la clase FlowShaper", "output": "Creo `PacketQueue` según DNS §2.01."}, None, CHEAP
    )
    status = {o.rule: o.status for o in report.rules}
    assert status["IR.0.03"] is RuleStatus.NOT_EVALUATED
    assert status["IR.3.01"] is RuleStatus.NOT_EVALUATED  # embeddings off, never a silent pass
    assert "IR.0.03 no evaluada" in report.notes  # a Spanish input: Spanish notes


def test_inactive_document_citation_is_flagged(docs: DocumentSet) -> None:
    request = {
        "input": "Implementa la clase FlowShaper",
        "output": "Creo `FlowShaper` según DR R1.01.",
        "active_documents": ["Documento_Normativo_Superior.md"],
    }
    report = analyze(request, docs, CHEAP)
    assert [v.rule for v in report.violations] == ["IR.0.03", "IR.8.01"]


def test_severity_override_to_info_moves_findings_out_of_violations(docs: DocumentSet) -> None:
    request = {"input": "Implementa la clase FlowShaper", "output": "Creo `FlowShaper` según DNS §2.01: robusto."}
    plain = analyze(request, docs, CHEAP)
    assert [v.rule for v in plain.violations] == ["IR.7.02"]
    demoted = analyze(request, docs, AuditConfig(embeddings=False, severity_overrides={"IR.7.02": Severity.INFO}))
    assert demoted.violations == ()
    assert [i.rule for i in demoted.info] == ["IR.7.02"]


def test_disabled_rules_are_reported_not_evaluated(docs: DocumentSet) -> None:
    request = {"input": "Implementa la clase FlowShaper", "output": "Creo `FlowShaper`: robusto."}
    report = analyze(request, docs, AuditConfig(embeddings=False, disabled_rules=("IR.7.02", "IR.0.01")))
    assert "IR.7.02" not in {v.rule for v in report.violations}
    assert {o.rule: o.status for o in report.rules}["IR.7.02"] is RuleStatus.NOT_EVALUATED


def test_specificity_ir_0_01_overrides_ir_5_02(docs: DocumentSet) -> None:
    request = {"input": "Implementa la clase FlowShaper", "output": "Creo `FlowShaper`.\n- Usa la cola."}
    report = analyze(request, docs, CHEAP)
    rules = {v.rule for v in report.violations}
    assert "IR.0.01" in rules
    assert "IR.5.02" not in rules
    assert "anulada(s) por IR.0.01" in report.notes


def test_formality_tolerance(docs: DocumentSet) -> None:
    request = {"input": "Hola, gracias", "output": "Le informo que sí."}
    assert [v.rule for v in analyze(request, docs, AuditConfig(ir_7_02_formality_tolerance="low")).violations] == [
        "IR.7.02"
    ]
    assert analyze(request, docs, AuditConfig(ir_7_02_formality_tolerance="medium")).violations == ()


def test_coverage_threshold_is_configurable(docs: DocumentSet) -> None:
    request = {"input": "Refactoriza el FlowShaper", "output": "- Usa la cola (DNS §2.04).\n- Valida el tamaño."}
    assert analyze(request, docs, CHEAP).violations == ()
    stricter = analyze(request, docs, AuditConfig(embeddings=False, ir_5_02_coverage_ratio=0.75))
    assert [v.rule for v in stricter.violations] == ["IR.5.02"]
    assert stricter.metrics.coverage_ratio == 0.5


def test_empty_technical_output_passes_and_says_why(docs: DocumentSet) -> None:
    report = analyze({"input": "Implementa la clase FlowShaper", "output": ""}, docs, CHEAP)
    assert report.result is Verdict.PASS
    assert {o.rule: o.reason for o in report.rules}["IR.0.01"] == "output vacío"


def test_a_missing_embedding_model_folder_is_a_config_error() -> None:
    request = {"input": "Implementa la clase X", "output": "Creo `QuantumCache`."}
    with pytest.raises(ConfigError, match="nonexistent-model"):
        analyze(request, None, {"embedding_model": "/nonexistent-model"})


@pytest.mark.model
def test_drift_score_counts_novel_concepts(docs: DocumentSet) -> None:
    request = {
        "input": "Implementa la clase FlowShaper",
        "output": "Creo `FlowShaper` con una `QuantumEntanglementCache` (DNS §2.01).",
    }
    report = analyze(request, docs)
    assert report.metrics.technical_concepts == 2
    assert report.metrics.novel_concepts == ("QuantumEntanglementCache",)
    assert report.metrics.drift_score == 0.5
    assert [i.rule for i in report.info] == ["§7.03"]  # above the 0.10 optimum: INFO, not a violation


def test_drift_score_is_literal_without_embeddings(docs: DocumentSet) -> None:
    request = {"input": "Implementa la clase FlowShaper", "output": "Creo `FlowShaper` y `QuantumCache` (DNS §2.01)."}
    report = analyze(request, docs, CHEAP)
    assert report.metrics.drift_score == 0.5
    assert {o.rule: o.status for o in report.rules}["IR.4.01"] is RuleStatus.NOT_EVALUATED


def test_methods_are_not_concepts() -> None:
    text = (
        "`TryRelease` llama a `Decide()` y usa `PacketQueue`.\n```csharp\n"
        "public bool TryRelease(Packet packet) => _policy.Decide(packet);\nvar q = new PacketQueue(8);\n```"
    )
    terms = {c.term for c in extract_concepts(parse_text(text))}
    assert terms == {"PacketQueue", "Packet"}


@pytest.mark.parametrize(
    "output",
    [
        "El paquete previamente encolado sale primero (DNS §2.04).",  # not a reference to an earlier turn
        "La cubeta alcanza el valor óptimo de ráfaga (DR R2.02).",  # a technical statement, not an adornment
        "La red del cliente se satura (DNS §1.01).",  # 'red' is the network
    ],
)
def test_ordinary_technical_prose_is_clean(output: str, docs: DocumentSet) -> None:
    report = analyze({"input": "Audita la cola del Engine de NetShaper", "output": output}, docs, CHEAP)
    assert report.violations == ()
    assert report.result is Verdict.PASS


def test_numeric_document_versions_are_read_as_text(docs: DocumentSet) -> None:
    request = {"input": "Hola", "output": "Hola", "document_versions": {"DNS": 1.0, "ICR": 2}}
    report = analyze({**request, "context_type": "technical"}, docs, CHEAP)
    assert [v.description for v in report.violations] == [
        "document_versions pide ICR 2 pero IA_Context_Rules.md es la versión 2.0"
    ]
