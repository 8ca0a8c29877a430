"""Issue 21, item 3: titles and messages in English or Spanish (``lang``, ``--lang``; default: the input's
language, a deterministic guess), with rule ids, severities and lines unchanged."""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.audit import BUILTIN_RULES, AuditConfig, DocumentSet, analyze, guess_language
from norma.audit._messages import MESSAGES
from norma.errors import ConfigError
from tests.audit.conftest import AUDIT
from tests.conftest import CliResult

Run = Callable[..., CliResult]
CHEAP = AuditConfig(embeddings=False)
FAILING = {
    "input": "Implementa la clase FlowShaper de NetShaper",
    "output": (
        "Creo una `FlowShaper` robusta. Deberías usar lock.\n\n```csharp\npublic sealed class FlowShaper { }\n```"
    ),
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("How do I implement a retry policy?", "en"),
        ("Write the Decide method of the token bucket policy in C#", "en"),
        ("¿Cómo implemento una política de reintentos?", "es"),
        ("Implementa la clase FlowShaper de NetShaper", "es"),
        ("Hola, gracias", "es"),
        ("Hi, thanks for the help!", "en"),
        ("Revisa el código del Engine", "es"),
    ],
)
def test_guess_language(text: str, expected: str) -> None:
    assert guess_language(text) == expected


def test_a_tie_falls_back_to_the_other_text_then_english() -> None:
    assert guess_language("FlowShaper", "Creo la clase") == "es"
    assert guess_language("FlowShaper", "I create the class") == "en"
    assert guess_language("FlowShaper") == "en"
    assert guess_language("") == "en"


@given(st.text(max_size=300))
def test_the_guess_is_total_and_deterministic(text: str) -> None:
    first = guess_language(text)
    assert first in ("en", "es")
    assert guess_language(text) == first


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_message_has_both_languages_with_the_same_fields() -> None:
    for key, (english, spanish) in MESSAGES.items():
        assert english, key
        assert spanish, key
        assert _fields(english) == _fields(spanish), key


def test_every_builtin_rule_has_an_english_title() -> None:
    for rule in BUILTIN_RULES:
        assert rule.title_in("en") != rule.title, rule.id  # the built-in title is the spec's Spanish one
        assert rule.title_in("es") == rule.title


def test_default_language_is_the_inputs(docs: DocumentSet) -> None:
    spanish = analyze(FAILING, docs, CHEAP)
    english = analyze({**FAILING, "input": "Implement the FlowShaper class of NetShaper"}, docs, CHEAP)
    assert (spanish.lang, english.lang) == ("es", "en")
    assert {o.rule: o.title for o in spanish.rules}["IR.0.01"] == "Referencia obligatoria (técnico)"
    assert {o.rule: o.title for o in english.rules}["IR.0.01"] == "Mandatory reference (technical)"
    assert spanish.violations[0].description.startswith("Output técnico sin referencias")
    assert english.violations[0].description.startswith("Technical output without normative references")


@pytest.mark.parametrize("lang", ["en", "es"])
def test_configured_language_changes_only_the_words(docs: DocumentSet, lang: str) -> None:
    other = "es" if lang == "en" else "en"
    report = analyze(FAILING, docs, AuditConfig(embeddings=False, lang=lang))
    control = analyze(FAILING, docs, AuditConfig(embeddings=False, lang=other))
    assert report.lang == lang
    shape = [(v.rule, v.severity, v.line, v.location, v.evidence) for v in report.violations]
    assert shape == [(v.rule, v.severity, v.line, v.location, v.evidence) for v in control.violations]
    assert {"IR.0.01", "IR.7.01", "IR.7.02", "IR.8.01"} <= {v.rule for v in report.violations}
    assert [v.description for v in report.violations] != [v.description for v in control.violations]
    assert [(o.rule, o.status, o.severity) for o in report.rules] == [
        (o.rule, o.status, o.severity) for o in control.rules
    ]
    assert report.model_dump().keys() == control.model_dump().keys()


def test_info_and_reasons_follow_the_language(docs: DocumentSet) -> None:
    output = "I create `FlowShaper` (DNS §2.01)\n- use a queue\n- add a counter\n- limit the rate"
    request = {"input": "Implement the FlowShaper class", "output": output}
    report = analyze(request, docs, CHEAP)
    assert report.lang == "en"
    assert any("below the optimum" in i.description for i in report.info)
    assert "IR.6.02 not evaluated: no re-runs" in report.notes
    spanish = analyze(request, docs, AuditConfig(embeddings=False, lang="es"))
    assert any("por debajo del óptimo" in i.description for i in spanish.info)
    assert "IR.6.02 no evaluada: sin re-ejecuciones" in spanish.notes


@pytest.mark.parametrize(("value", "expected"), [("auto", None), ("", None), ("EN", "en"), (None, None)])
def test_lang_config_values(value: str | None, expected: str | None) -> None:
    assert AuditConfig.parse({"lang": value}).lang == expected


def test_an_unknown_lang_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="lang"):
        AuditConfig.parse({"lang": "fr"})


def test_cli_lang_option(run_cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(FAILING), encoding="utf-8")
    docs = str(AUDIT / "docs")
    auto = run_cli("audit", str(path), "--docs", docs, "--no-embeddings", "--format", "json")
    english = run_cli("audit", str(path), "--docs", docs, "--no-embeddings", "--format", "json", "--lang", "en")
    assert (auto.code, english.code) == (1, 1)
    assert json.loads(auto.out)["lang"] == "es"
    report = json.loads(english.out)
    assert report["lang"] == "en"
    assert report["violations"][0]["description"].startswith("Technical output without normative references")
    bad = run_cli("audit", str(path), "--docs", docs, "--lang", "fr")
    assert bad.code == 2
