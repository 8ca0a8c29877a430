"""Issue 40, section 2: the audit read by English users — rule texts in both languages, what IR.8.01 means,
identifiers an output defines, declared acronyms, English modal verbs and audit verdicts in both languages."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from norma.audit import (
    BUILTIN_RULES,
    AuditConfig,
    DocumentSet,
    RuleStatus,
    analyze,
    load_config,
    load_documents,
    required_bump,
    ruleset_snapshot,
)
from norma.audit._references import declared_names
from norma.audit._text import parse_text
from norma.errors import InvalidInputError
from norma.rules import Verdict
from tests.audit.conftest import AUDIT
from tests.conftest import EXAMPLES, CliResult

Run = Callable[..., CliResult]
CHEAP = AuditConfig(embeddings=False)
DOCS = str(AUDIT / "docs")
SPANISH_MARKS = set("ñáéíóú¿¡")
SPANISH_WORDS = {"el", "la", "los", "las", "de", "del", "que", "y", "en", "un", "una", "con", "sin", "por", "es"}


def _case(name: str) -> dict[str, object]:
    request: dict[str, object] = json.loads((AUDIT / "cases" / f"{name}.json").read_text(encoding="utf-8"))["request"]
    return request


def _words(text: str) -> set[str]:
    """The words of a text outside quotes (quoted markers such as 'en otras palabras' are in both languages)."""
    unquoted = re.sub(r"'[^']*'", " ", text)
    return {w.strip(".,;:()/").lower() for w in unquoted.split()}


# --- every rule text in English and Spanish


@pytest.mark.parametrize("rule", BUILTIN_RULES, ids=lambda r: r.id)
def test_every_rule_text_exists_in_english_and_spanish(rule: object) -> None:
    from norma.audit import AuditRule

    assert isinstance(rule, AuditRule)
    english, spanish = rule.text_in("en"), rule.text_in("es")
    assert spanish.title == rule.title  # the built-ins are written in the spec's Spanish
    assert (spanish.condition, spanish.detection, spanish.exceptions) == (
        rule.condition,
        rule.detection,
        rule.exceptions,
    )
    assert len(english.exceptions) == len(spanish.exceptions)
    for en, es in [
        (english.title, spanish.title),
        (english.condition, spanish.condition),
        (english.detection, spanish.detection),
        *zip(english.exceptions, spanish.exceptions, strict=True),
    ]:
        assert en, rule.id
        assert es, rule.id
        assert en != es, rule.id
        assert not SPANISH_MARKS & set(en), en  # no Spanish letters in an English text
        assert not SPANISH_WORDS & _words(en), en
    assert SPANISH_WORDS & _words(f"{spanish.condition} {spanish.detection}"), rule.id


def test_rules_command_is_english_by_default_and_spanish_on_request(run_cli: Run, tmp_path: Path) -> None:
    english = json.loads(run_cli("audit", "rules", "--format", "json").out)
    assert english["lang"] == "en"
    assert english["rules"]["IR.0.01"]["title"] == "Mandatory reference (technical)"
    assert english["rules"]["IR.0.01"]["condition"] == (
        "technical output (code generation / audit): code, technical decisions or an audit verdict"
    )
    assert english["rules"]["IR.3.01"]["exceptions"] == [
        "standard C#/.NET knowledge (ICR §9.01)",
        "GoF patterns",
        "SOLID principles",
        "names the output introduces: its own code declares them and neither the input nor the norms use them",
    ]
    spanish = json.loads(run_cli("audit", "rules", "--lang", "es", "--format", "json").out)
    assert spanish["lang"] == "es"
    assert spanish["rules"]["IR.0.01"]["title"] == "Referencia obligatoria (técnico)"
    assert spanish["rules"]["IR.3.01"]["exceptions"][1] == "patrones GoF"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"lang": "es"}), encoding="utf-8")
    from_config = json.loads(run_cli("audit", "rules", "--config", str(config), "--format", "json").out)
    assert from_config["rules"]["IR.0.01"]["title"] == "Referencia obligatoria (técnico)"
    table = run_cli("audit", "rules")
    assert table.code == 0
    assert "Mandatory reference (technical)" in table.out


def test_bump_refuses_snapshots_in_two_languages(run_cli: Run, tmp_path: Path) -> None:
    english, spanish = ruleset_snapshot(lang="en"), ruleset_snapshot(lang="es")
    with pytest.raises(InvalidInputError) as caught:
        required_bump(spanish, english)
    assert str(caught.value) == (
        "the old snapshot's rule texts are in 'es' and the new one's in 'en': a different wording would count as a "
        "changed algorithm (take both with the same language: `norma audit rules --lang es --format json`)"
    )
    assert required_bump(english, ruleset_snapshot(lang="en")).reasons == ()
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(spanish), encoding="utf-8")
    new.write_text(json.dumps(english), encoding="utf-8")
    result = run_cli("audit", "bump", str(old), str(new))
    assert result.code == 2
    assert "take both with the same language" in result.err


@pytest.mark.parametrize(
    ("case", "title", "full"),
    [
        (
            "fail_english_no_references",
            "Mandatory reference (technical)",
            "technical output (code generation / audit): code, technical decisions or an audit verdict. references",
        ),
        (
            "fail_no_references",
            "Referencia obligatoria (técnico)",
            "output técnico (generación de código / auditoría): código, decisiones técnicas o un veredicto de "
            "auditoría. referencias",
        ),
    ],
)
def test_sarif_rule_texts_follow_the_report_language(
    run_cli: Run, tmp_path: Path, case: str, title: str, full: str
) -> None:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(_case(case)), encoding="utf-8")
    log = json.loads(run_cli("audit", str(path), "--docs", DOCS, "--no-embeddings", "--format", "sarif").out)
    rule = log["runs"][0]["tool"]["driver"]["rules"][0]
    assert rule["id"] == "IR.0.01"
    assert rule["name"] == rule["shortDescription"]["text"] == title
    assert rule["fullDescription"]["text"].startswith(full)


def test_the_demo_reports_in_english() -> None:
    from norma.cli._audit import _demo_section
    from norma.cli._demo import SECTIONS

    assert SECTIONS["audit"] is _demo_section
    summary, render = _demo_section(EXAMPLES)
    assert summary == {
        "pass_referenced_policy.json": "PASS",
        "fail_no_references.json": "FAIL",
        "skip_greeting.json": "SKIP",
    }
    console = Console(record=True, width=200)
    render(console)
    text = console.export_text()
    assert "Technical output without normative references: 1 technical decision(s) and not one reference" in text
    assert "Output técnico" not in text
    assert "IR.6.02 not evaluated: no re-runs" in text


# --- IR.8.01 says what it means


def test_ir_8_01_says_what_it_asks_for(docs: DocumentSet) -> None:
    report = analyze(_case("fail_no_references"), docs, AuditConfig(embeddings=False, lang="en"))
    assert [(v.rule, v.description) for v in report.violations if v.rule == "IR.8.01"] == [
        (
            "IR.8.01",
            "the output delivers code or technical decisions that break the norms (IR.0.01): an answer that cannot "
            "follow them should say which norm stops it instead of delivering a non-compliant solution (fixing "
            "IR.0.01 clears this too)",
        )
    ]
    spanish = analyze(_case("fail_no_references"), docs, CHEAP)
    assert [v.description for v in spanish.violations if v.rule == "IR.8.01"] == [
        "el output entrega código o decisiones técnicas que incumplen la normativa (IR.0.01): una respuesta que no "
        "puede cumplirla debe decir qué norma se lo impide en lugar de entregar una solución que la incumple "
        "(corregir IR.0.01 también elimina esta)"
    ]
    assert "FAIL explícito" not in spanish.violations[-1].description


# --- identifiers the output introduces are neither implicit context nor drift

POLICIES = AUDIT / "policies"
FARE_INPUT = "Write a Python function that returns the fare of a route from the PaymentsGateway"
GET_FARE = (
    "I define `get_fare`, which asks the PaymentsGateway for the fare of a route with a timeout of 2 seconds "
    "(POL-12).\n\n```python\ndef get_fare(route_id):\n    return gateway.fare(route_id, timeout=2)\n```\n\n"
    "`get_fare` takes the `route_id` of the route."
)
CHARGE_ONCE = (
    "I create `ChargeOnce`, which sends the PaymentRequest with its idempotency key (POL-15).\n\n```csharp\n"
    "public Task<Receipt> ChargeOnce(PaymentRequest request)\n{\n    return _gateway.SendAsync(request);\n}\n\n"
    "private static string KeyOf(PaymentRequest request) => request.IdempotencyKey;\n```\n\n"
    "`KeyOf` gives the key the PaymentsGateway knows a repeated request by (POL-15)."
)


@pytest.fixture(scope="module")
def policies() -> tuple[AuditConfig, DocumentSet]:
    config = load_config(POLICIES / "config.json")
    return config, load_documents(POLICIES / "docs", norms=config.norms)


def test_declared_names_of_python_and_csharp_code() -> None:
    code = (
        "```python\nMAX_RETRIES = 3\nclass FareClient:\n    def get_fare(self, route_id: str, retries=MAX_RETRIES):\n"
        "        fare = fetch(route_id)\n        return fare\n```\n"
        "```csharp\npublic sealed class Charger\n{\n    public int MaxAttempts { get; } = 3;\n"
        "    public Task<Receipt> ChargeOnce(PaymentRequest request, CancellationToken token = default) => Send();\n"
        "    return Send(request);\n}\n```\nThe `prose_name` is not code."
    )
    assert declared_names(parse_text(code)) == {
        "MAX_RETRIES", "FareClient", "get_fare", "self", "route_id", "retries", "fare",
        "Charger", "MaxAttempts", "ChargeOnce", "request", "token",
    }  # fmt: skip


@pytest.mark.parametrize("embeddings", [True, False])
def test_a_function_the_code_defines_is_not_implicit_context_nor_drift(
    policies: tuple[AuditConfig, DocumentSet], embeddings: bool
) -> None:
    config, documents = policies
    report = analyze(
        {"input": FARE_INPUT, "output": GET_FARE}, documents, config.model_copy(update={"embeddings": embeddings})
    )
    assert report.result is Verdict.PASS, report.violations
    assert report.violations == ()
    statuses = {o.rule: o.status for o in report.rules}
    assert statuses["IR.3.01"] is RuleStatus.PASSED  # without embeddings too: nothing is left to compare
    assert statuses["IR.4.01"] is RuleStatus.PASSED
    assert report.metrics.novel_concepts == ()


def test_a_csharp_method_and_helper_the_code_defines_pass(policies: tuple[AuditConfig, DocumentSet]) -> None:
    config, documents = policies
    request = {
        "input": "Write the C# method that charges a PaymentRequest through the PaymentsGateway",
        "output": CHARGE_ONCE,
    }
    report = analyze(request, documents, config)
    assert report.result is Verdict.PASS, report.violations


def test_a_type_the_code_only_uses_still_needs_context(policies: tuple[AuditConfig, DocumentSet]) -> None:
    config, documents = policies
    output = (
        "I define `get_fare`, which reads the fare of a route from a `FareCache` (POL-12).\n\n"
        "```python\ndef get_fare(route_id):\n    return FareCache.lookup(route_id)\n```"
    )
    report = analyze({"input": FARE_INPUT, "output": output}, documents, config)
    assert report.result is Verdict.FAIL
    assert [(v.rule, v.evidence) for v in report.violations] == [
        ("IR.3.01", "FareCache"),
        ("IR.4.01", "FareCache"),
        ("IR.8.01", "IR.3.01, IR.4.01"),
    ]


# --- declared acronyms are citable; an unknown norm's citation says what would make it known

PLATFORM = (
    "---\nacronym: PLT\nversion: 1.0\n---\n# Platform Rules\n\n## §2 Services\n\n"
    "### §2.1 Health checks\nEvery service exposes a health check.\n"
)
HEALTH = {
    "input": "Implement the health check of the PaymentsGateway",
    "output": (
        "I implement `HealthCheck`, the health check (PLT §2.1).\n\n```csharp\npublic sealed class HealthCheck { }\n```"
    ),
}


@pytest.fixture
def platform_docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "platform.md").write_text(PLATFORM, encoding="utf-8")
    (folder / "security.md").write_text("---\nacronym: SEC\n---\n# Security\n\n## §1 Scope\nAll.\n", encoding="utf-8")
    return folder


def test_a_declared_acronym_is_citable_without_norms_priority(platform_docs: Path) -> None:
    config = AuditConfig(embeddings=False, norms={"priority": ["SEC"], "file_names": {}})
    report = analyze(HEALTH, load_documents(platform_docs, norms=config.norms), config)
    assert report.result is Verdict.PASS, report.violations
    assert report.metrics.references == 1
    assert "PLT" not in report.metrics.novel_concepts
    statuses = {o.rule: o.status for o in report.rules}
    assert (statuses["IR.0.01"], statuses["IR.0.03"]) == (RuleStatus.PASSED, RuleStatus.PASSED)


def test_a_citation_of_an_unknown_norm_says_what_would_make_it_known(platform_docs: Path) -> None:
    config = AuditConfig(embeddings=False, lang="en", norms={"priority": ["SEC"], "file_names": {}})
    documents = load_documents(platform_docs, norms=config.norms)
    output = HEALTH["output"].replace("PLT §2.1", "OPS §2.1")
    report = analyze({**HEALTH, "output": output}, documents, config)
    assert [(v.rule, v.line, v.description) for v in report.violations if v.rule == "IR.0.03"] == [
        (
            "IR.0.03",
            1,
            "OPS §2.1 cites OPS, a norm no document declares and norms.priority does not list: declare "
            "'acronym: OPS' in the front matter of the document it names (or map the document's file name to OPS "
            "in norms.file_names), or list OPS in norms.priority",
        )
    ]
    assert report.result is Verdict.FAIL
    spanish = analyze({**HEALTH, "output": output}, documents, config.model_copy(update={"lang": "es"}))
    assert [v.description for v in spanish.violations if v.rule == "IR.0.03"] == [
        "OPS §2.1 cita OPS, una norma que ningún documento declara y que norms.priority no incluye: declare "
        "'sigla: OPS' en el front matter del documento al que se refiere (o asocie el nombre de archivo del "
        "documento a OPS en norms.file_names), o incluya OPS en norms.priority"
    ]


def test_a_citation_of_an_inactive_document_names_active_documents(platform_docs: Path) -> None:
    config = AuditConfig(embeddings=False, lang="en", norms={"priority": ["SEC"], "file_names": {}})
    documents = load_documents(platform_docs, norms=config.norms)
    report = analyze({**HEALTH, "active_documents": ["SEC"]}, documents, config)
    assert [(v.rule, v.description) for v in report.violations if v.rule == "IR.0.03"] == [
        (
            "IR.0.03",
            "PLT §2.1 cites PLT, which is not among the active documents (add it to active_documents, or give its "
            "document in the documents folder)",
        )
    ]


# --- "must" marks a normative statement; a verdict is a technical decision whichever way it concludes

QUEUE = "Implement the PacketQueue class in NetShaper"


@pytest.mark.parametrize(
    ("request_input", "sentence", "phrase"),
    [
        (QUEUE, "The queue must drop the oldest packet when it is full.", "must"),
        (QUEUE, "The queue has to drop the oldest packet when it is full.", "has to"),
        ("Implementa la clase PacketQueue de NetShaper", "La cola debe descartar el paquete más antiguo.", "debe"),
    ],
)
def test_must_is_an_unrequested_inference(docs: DocumentSet, request_input: str, sentence: str, phrase: str) -> None:
    output = (
        f"I implement `PacketQueue` (DNS §2.01). {sentence}\n\n```csharp\npublic sealed class PacketQueue {{ }}\n```"
    )
    report = analyze({"input": request_input, "output": output}, docs, AuditConfig(embeddings=False, lang="en"))
    assert [(v.rule, v.line, v.description) for v in report.violations if v.rule == "IR.7.01"] == [
        ("IR.7.01", 1, f"unrequested inference ('{phrase}') without the mark 'Non-normative suggestion:'")
    ]
    asked = analyze({"input": f"{request_input}; it {phrase} drop", "output": output}, docs, CHEAP)
    assert "IR.7.01" not in {v.rule for v in asked.violations}  # the input used the word


@pytest.mark.parametrize(
    ("request_input", "verdict", "cited"),
    [
        (
            "Audita la clase FlowShaper de NetShaper",
            "No se detecta ninguna violación: la implementación se mantiene.",
            "No se detecta ninguna violación de DNS §2.03: la implementación se mantiene.",
        ),
        (
            "Audita la clase FlowShaper de NetShaper",
            "Veredicto: no hay violaciones; la implementación se mantiene.",
            "Veredicto: no hay violaciones de DNS §2.03; la implementación se mantiene.",
        ),
        (
            "Audit the FlowShaper class of NetShaper",
            "No violation found: the implementation stays as it is.",
            "No violation of DNS §2.03 found: the implementation stays as it is.",
        ),
        (
            "Audit the FlowShaper class of NetShaper",
            "The FlowShaper class does not violate the norms; the implementation stays.",
            "The FlowShaper class does not violate DNS §2.03; the implementation stays.",
        ),
    ],
)
def test_a_verdict_of_no_violation_needs_a_reference(
    docs: DocumentSet, request_input: str, verdict: str, cited: str
) -> None:
    report = analyze({"input": request_input, "output": verdict}, docs, CHEAP)
    assert report.result is Verdict.FAIL
    assert [(v.rule, v.line) for v in report.violations] == [("IR.0.01", 1)]
    assert report.violations[0].description.endswith(
        ("an audit verdict and not one reference", "un veredicto de auditoría y ninguna referencia")
    )
    assert analyze({"input": request_input, "output": cited}, docs, CHEAP).result is Verdict.PASS


# --- English outputs whose verdicts are known, run with the embedding checks


@pytest.mark.parametrize(
    ("audited", "verdict", "rules"),
    [
        ({"input": FARE_INPUT, "output": GET_FARE}, Verdict.PASS, []),
        (
            {
                "input": "Write the C# method that charges a PaymentRequest through the PaymentsGateway",
                "output": CHARGE_ONCE,
            },
            Verdict.PASS,
            [],
        ),
        (
            {"input": FARE_INPUT, "output": GET_FARE.replace(" (POL-12)", "")},
            Verdict.FAIL,
            ["IR.0.01", "IR.8.01"],
        ),
        (
            {"input": FARE_INPUT, "output": GET_FARE.replace("takes the", "must take the")},
            Verdict.FAIL,
            ["IR.7.01", "IR.8.01"],
        ),
        (
            {"input": FARE_INPUT, "output": GET_FARE.replace("POL-12", "POL-99")},
            Verdict.FAIL,
            ["IR.0.03", "IR.8.01"],
        ),
        (
            {
                "input": "Audit this handler: logger.LogInformation(request.CardNumber);",
                "output": "No violation found: the handler stays as it is.",
            },
            Verdict.FAIL,
            ["IR.0.01"],
        ),
        (
            {
                "input": "Audit this handler: logger.LogInformation(request.CardNumber);",
                "output": "The handler violates SEC §4.2: it writes the card number to the log.",
            },
            Verdict.PASS,
            [],
        ),
        ({"input": "Thanks, that helps!", "output": "You're welcome."}, Verdict.SKIP, []),
    ],
)
def test_english_outputs_with_known_verdicts(
    policies: tuple[AuditConfig, DocumentSet], audited: dict[str, str], verdict: Verdict, rules: list[str]
) -> None:
    config, documents = policies
    report = analyze(audited, documents, config)
    assert report.lang == "en"
    assert report.result is verdict, report.violations
    assert sorted({v.rule for v in report.violations}) == rules
