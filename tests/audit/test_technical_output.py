"""Issue 21, items 1 and 2: IR.0.01 on every technical output (code, decisions, an audit verdict) whatever its
decision count, the decision heuristics for code (members, blocks), and SKIP only for conversational turns — each
in English and in Spanish, PASS and FAIL."""

from __future__ import annotations

import pytest

from norma.audit import AuditConfig, DocumentSet, RuleStatus, analyze
from norma.audit._lexicon import get_lexicon
from norma.audit._references import find_claims, find_decisions
from norma.audit._text import parse_text
from norma.rules import Verdict

CHEAP = AuditConfig(embeddings=False)

METHOD = (
    "```csharp\n"
    "public bool Decide(Packet packet, long nowTicks)\n"  # line 2
    "{\n"
    "    return packet.Length <= Interlocked.Read(ref _tokens);\n"
    "}\n"
    "```"
)
CODE_ONLY = {
    "en": (
        "Write the Decide method of the token bucket policy in C#",
        METHOD + "\n\nThis method lets a packet through when it fits in the bucket{ref}.",
    ),
    "es": (
        "Escribe el método Decide de la política de cubeta de tokens en C#",
        METHOD + "\n\nEste método deja pasar un paquete cuando cabe en la cubeta{ref}.",
    ),
}
VERDICT = {
    "en": (
        "Audit this NetShaper code: lock (_gate) { _tokens -= packet.Length; }",
        "The code violates the norms{ref}: the data path takes a lock.",
    ),
    "es": (
        "Audita este código de NetShaper: lock (_gate) { _tokens -= packet.Length; }",
        "El código viola la normativa{ref}: el camino de datos toma un lock.",
    ),
}
IN_WORDS = {
    "en": (
        "Implement the FlowShaper class of NetShaper",
        "```csharp\n// As the Superior Normative Document says, section two point zero one\n"
        "public sealed class FlowShaper { }\n```",
    ),
    "es": (
        "Implementa la clase FlowShaper de NetShaper",
        "```csharp\n// Según el Documento Normativo Superior, sección dos punto cero uno\n"
        "public sealed class FlowShaper { }\n```",
    ),
}
MIXED = {
    "en": ("Hi, can you explain the code? Thanks", "Sure! Give me a second and we'll go through it together."),
    "es": ("Hola, explica el código, gracias", "¡Claro! Dame un momento y lo vemos juntos."),
}


def _rules(report: object) -> set[str]:
    return {v.rule for v in report.violations}  # type: ignore[attr-defined]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_code_only_answer_without_references_fails_at_its_first_technical_line(docs: DocumentSet, lang: str) -> None:
    prompt, output = CODE_ONLY[lang]
    report = analyze({"input": prompt, "output": output.replace("{ref}", "")}, docs, CHEAP)
    assert report.result is Verdict.FAIL
    [violation] = [v for v in report.violations if v.rule == "IR.0.01"]
    assert violation.line == 2  # the method's declaration, inside the code block
    assert report.metrics.technical_decisions >= 1  # the method is a decision (it was 0 before issue 21)
    assert report.lang == lang


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_same_answer_with_one_valid_reference_passes_ir_0_01(docs: DocumentSet, lang: str) -> None:
    prompt, output = CODE_ONLY[lang]
    report = analyze({"input": prompt, "output": output.replace("{ref}", " (DNS §2.03)")}, docs, CHEAP)
    assert "IR.0.01" not in _rules(report), report.violations
    assert report.result is Verdict.PASS, report.violations


@pytest.mark.parametrize("lang", ["en", "es"])
def test_an_audit_verdict_without_references_fails(docs: DocumentSet, lang: str) -> None:
    prompt, output = VERDICT[lang]
    report = analyze({"input": prompt, "output": output.format(ref="")}, docs, CHEAP)
    assert report.result is Verdict.FAIL
    assert "IR.0.01" in _rules(report)
    [violation] = [v for v in report.violations if v.rule == "IR.0.01"]
    assert violation.line == 1


@pytest.mark.parametrize("lang", ["en", "es"])
def test_an_audit_verdict_citing_the_norm_passes(docs: DocumentSet, lang: str) -> None:
    prompt, output = VERDICT[lang]
    report = analyze({"input": prompt, "output": output.format(ref=" (DNS §3.01)")}, docs, CHEAP)
    assert report.result is Verdict.PASS, report.violations


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_reference_written_in_words_is_not_a_reference(docs: DocumentSet, lang: str) -> None:
    prompt, output = IN_WORDS[lang]
    report = analyze({"input": prompt, "output": output}, docs, CHEAP)
    assert report.result is Verdict.FAIL
    assert "IR.0.01" in _rules(report)
    assert report.metrics.references == 0


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_mixed_turn_without_technical_content_passes_with_the_rules_not_applicable(
    docs: DocumentSet, lang: str
) -> None:
    prompt, output = MIXED[lang]
    report = analyze({"input": prompt, "output": output}, docs, CHEAP)
    assert report.context_type_applied.value == "mixed"
    assert report.result is Verdict.PASS  # §2: SKIP is for context_type=conversational only
    outcomes = {o.rule: o for o in report.rules}
    for rule in ("IR.0.01", "IR.4.02", "IR.5.02", "IR.8.01"):
        assert outcomes[rule].status is RuleStatus.NOT_APPLICABLE
        assert outcomes[rule].reason == {"en": "mixed turn without technical segments",
                                         "es": "turno mixto sin segmentos técnicos"}[lang]  # fmt: skip


@pytest.mark.parametrize(
    ("prompt", "output"),
    [("Hi, thanks!", "You're welcome."), ("Hola, gracias", "De nada, un placer.")],
)
def test_a_conversational_turn_is_still_skip(docs: DocumentSet, prompt: str, output: str) -> None:
    assert analyze({"input": prompt, "output": output}, docs, CHEAP).result is Verdict.SKIP


def test_a_declared_conversational_turn_is_skip_even_with_a_mixed_looking_input(docs: DocumentSet) -> None:
    report = analyze(
        {"input": "Hola, explica el código", "output": "Claro.", "context_type": "conversational"}, docs, CHEAP
    )
    assert report.result is Verdict.SKIP


@pytest.mark.parametrize(
    ("prompt", "output"),
    [
        ("Genera el encabezado del archivo de código", "```csharp\nusing System;\nnamespace NetShaper.Engine;\n```"),
        ("Explain the code of the Engine", "The engine keeps one queue per flow and never blocks the data path."),
    ],
)
def test_obvious_syntax_and_explanations_without_decisions_are_not_technical_output(
    docs: DocumentSet, prompt: str, output: str
) -> None:
    report = analyze({"input": prompt, "output": output}, docs, CHEAP)
    assert "IR.0.01" not in _rules(report)
    assert report.result is Verdict.PASS


def _decisions(text: str) -> list[tuple[int, str, bool]]:
    return [(d.line, d.kind, d.major) for d in find_decisions(parse_text(text), get_lexicon())]


def test_code_decisions_are_types_top_level_members_or_the_block() -> None:
    assert _decisions(METHOD) == [(2, "member", True)]  # a method snippet
    members_of_a_type = (
        "```csharp\npublic sealed class A\n{\n    public int B { get; }\n    public void C() { }\n}\n```"
    )
    assert _decisions(members_of_a_type) == [(2, "type", True)]  # its members belong to the type's decision
    properties = "```csharp\npublic long BurstBytes { get; }\npublic long Rate => _rate;\n```"
    assert _decisions(properties) == [(2, "member", True), (3, "member", True)]
    statements = "```csharp\nvar x = Compute(a);\nConsole.WriteLine(x);\n```"
    assert _decisions(statements) == [(2, "code", True)]  # a code block is at least one decision
    python = "```python\ndef decide(packet):\n    return packet.size < LIMIT\n```"
    assert _decisions(python) == [(2, "member", True)]
    calls_only = "```csharp\nreturn Foo(x);\nawait Bar(y);\nif (z) { Baz(); }\n```"
    assert _decisions(calls_only) == [(2, "code", True)]  # statements and calls are not declarations


def test_a_declaration_announced_in_prose_is_one_decision_not_two() -> None:
    text = "I create `FlowShaper` per flow.\n\n```csharp\npublic sealed class FlowShaper { }\n```"
    assert _decisions(text) == [(1, "statement", True)]
    announced_block = "Uso `Interlocked.Exchange` para el estado.\n\n```csharp\nInterlocked.Exchange(ref _x, 1);\n```"
    assert _decisions(announced_block) == [(1, "statement", False)]


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("Create a RetryPolicy class that wraps the call.", True),
        ("Use exponential backoff with jitter.", False),
        ("I implemented the queue as a ring buffer.", True),
        ("Implementé la cola como un búfer circular.", True),
        ("Añadí un contador por flujo.", False),
        ("The queue is bounded.", None),
    ],
)
def test_prose_decisions_in_both_languages(sentence: str, kind: bool | None) -> None:
    found = _decisions(sentence)
    assert (found[0][2] if found else None) == kind


@pytest.mark.parametrize(
    ("text", "document", "section", "reformulation"),
    [
        ("According to RED, every counter is exposed per flow and never reset.", "RED", None, False),
        ("The DNS says that the data path never takes a lock.", "DNS", None, False),
        ("As stated in DNS §3.01, the data path never takes a lock.", "DNS", "3.01", False),
        ('DNS §3.01 states: "the data path never takes a lock".', "DNS", "3.01", False),
        ("In other words, according to DNS §3.01 nothing blocks here.", "DNS", "3.01", True),
        ("Según RED, cada contador se expone por flujo.", "RED", None, False),
        ("O sea, según DNS §3.01 aquí no se bloquea nada.", "DNS", "3.01", True),
    ],
)
def test_claims_about_the_norms_in_both_languages(
    text: str, document: str, section: str | None, reformulation: bool
) -> None:
    [claim] = find_claims(parse_text(text), get_lexicon())
    assert (claim.document, claim.section, claim.reformulation) == (document, section, reformulation)


@pytest.mark.parametrize(
    ("matcher", "english", "spanish"),
    [
        ("modals", "You should add a cache.", "Deberías añadir una caché."),
        ("modals", "I suggest a bounded queue.", "Te sugiero una cola acotada."),
        ("requirements", "Don't forget to rotate the keys.", "No olvides rotar las claves."),
        ("requirements", "You'll also need a circuit breaker.", "También necesitarás un cortacircuitos."),
        ("evaluative", "A robust, seamless design.", "Un diseño robusto y elegante."),
        ("history", "As I explained, the queue is bounded.", "Como ya expliqué, la cola es acotada."),
        ("reformulation", "That is to say, no lock.", "Dicho de otra forma, sin lock."),
        ("suggestion_markers", "Non-normative suggestion: add metrics.", "Sugerencia no-normativa: añade métricas."),
        ("frustration", "That's not what I wanted!", "¡No es eso!"),
        ("fail_markers", "RESULT: FAIL", "RESULTADO: FAIL"),
        ("verdicts", "The handler violates SEC §4.2.", "El manejador incumple SEC §4.2."),
    ],
)
def test_every_detection_list_speaks_both_languages(matcher: str, english: str, spanish: str) -> None:
    phrases = getattr(get_lexicon(), matcher)
    assert phrases.search(english) is not None, english
    assert phrases.search(spanish) is not None, spanish


IMPLEMENT_EN = "Implement the FlowShaper class of NetShaper"
IMPLEMENT_ES = "Implementa la clase FlowShaper de NetShaper"


@pytest.mark.parametrize(
    ("prompt", "output", "rule"),
    [
        (IMPLEMENT_EN, "I create `FlowShaper` (DNS §2.01). You should also add a cache.", "IR.7.01"),
        (IMPLEMENT_ES, "Creo `FlowShaper` (DNS §2.01). También necesitarás una caché.", "IR.7.01"),
        (IMPLEMENT_EN, "As I explained, I create `FlowShaper` (DNS §2.01).", "IR.3.02"),
        (IMPLEMENT_ES, "Como ya expliqué, creo `FlowShaper` (DNS §2.01).", "IR.3.02"),
        (IMPLEMENT_EN, "I create a seamless `FlowShaper` (DNS §2.01).", "IR.7.02"),
    ],
)
def test_english_and_spanish_answers_are_judged_alike(docs: DocumentSet, prompt: str, output: str, rule: str) -> None:
    assert rule in _rules(analyze({"input": prompt, "output": output}, docs, CHEAP))


def test_frustration_in_english_makes_a_declared_fail_ir_8_03(docs: DocumentSet) -> None:
    request = {
        "input": "That's not what I wanted! I asked for the FlowShaper class",
        "output": "FAIL: request rejected (DNS §2.01).",
    }
    assert _rules(analyze(request, docs, CHEAP)) == {"IR.8.03"}
