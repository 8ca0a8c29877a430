"""Fuzzing the parsers of the newer capabilities: audit requests and configs, rulebooks, rules.

Same property as test_fuzz_parsers: whatever the input, only NormaError escapes. Audits run with the embedding
checks off here (they read the same parsed structures; the model's cost would only slow the fuzzer down).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from norma.audit import AuditConfig, DocumentSet, analyze, load_documents
from norma.errors import NormaError
from norma.matching import Rule
from norma.store import load_rulebook
from tests.conftest import EXAMPLES
from tests.fuzz._strategies import FUZZ, json_values

AUDIT_KEYS = ["input", "output", "context_type", "active_documents", "document_versions", "reruns"]
RULE_KEYS = [
    "id", "tenant_id", "condition_text", "action_text", "scope", "scenario_id", "step_id", "priority", "enabled",
    "max_fires_per_session", "cooldown_turns", "tags", "examples", "metadata",
]  # fmt: skip
RULEBOOK_KEYS = ["format", "tenant", "tenant_id", "description", "rules", *RULE_KEYS]

# Pieces that steer the analyzer into its interesting branches: references, quotes, code, markers, acronyms.
_PIECES = [
    "Según §3.2 del Documento_Normativo_Superior", "IR.4.02", "Domain_Rules §2.1", "```csharp\nclass X {}\n```",
    '"el motor DEBE limitar el ancho de banda"', "FAIL: no puedo", "como dijiste antes", "deberías", "RED", "red",
    "DNS", "hola, gracias", "¿qué es?", "- Implementar el TokenBucket", "Sugerencia:", "En otras palabras,",
    "\n\n", "\r\n", "\x00", "", "é" * 3, "IR.", "§", "[Domain_Rules §9.9.9]", "v1.0", "turno 3",
]  # fmt: skip
_TEXT = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=20)), max_size=12).map(" ".join)


@pytest.fixture(scope="module")
def documents() -> DocumentSet:
    return load_documents(EXAMPLES / "audit" / "docs")


_REQUESTS = st.one_of(
    json_values(AUDIT_KEYS),
    st.fixed_dictionaries(
        {"input": _TEXT, "output": _TEXT},
        optional={
            "context_type": st.sampled_from(["technical", "conversational", "mixed", "auto", "TECHNICAL", "x", ""]),
            "active_documents": st.lists(
                st.sampled_from(["Domain_Rules.md", "IA_Context_Rules.md", "../etc/passwd", "/etc/passwd", "x\x00"]),
                max_size=3,
            ),
            "document_versions": st.dictionaries(st.sampled_from(["Domain_Rules.md", "nope.md"]), st.text(max_size=5)),
            "reruns": st.lists(_TEXT, max_size=3),
        },
    ),
)


@FUZZ
@given(_REQUESTS)
def test_audit_requests(documents: DocumentSet, request: Any) -> None:
    with contextlib.suppress(NormaError):
        analyze(request, documents, AuditConfig(embeddings=False))


_CONFIG_KEYS = [
    "embeddings", "disabled_rules", "severity_overrides", "ir_4_02_fuzzy_match_threshold", "reference_patterns",
    "limits", "max_input_chars", "max_output_chars", "max_documents", "max_document_bytes", "max_record_bytes",
]  # fmt: skip
# Patterns users might configure, hostile ones included: catastrophic backtracking, back-references, look-arounds.
_PATTERNS = st.lists(
    st.one_of(
        st.sampled_from([
            r"(?P<doc>POL)-(?P<sec>\d+)", r"(?P<sec>(a+)+)$", r"(?P<sec>x)\1", r"(?<=a)(?P<sec>b)", r"(?P<sec>",
            r"(?P<other>x)", r"(?P<sec>[", "", r"(?P<sec>\d+)" * 40,
        ]),
        st.text(max_size=30),
    ),
    max_size=4,
)  # fmt: skip


@FUZZ
@given(st.one_of(json_values(_CONFIG_KEYS), st.fixed_dictionaries({"reference_patterns": _PATTERNS})))
def test_audit_configs(value: Any) -> None:
    with contextlib.suppress(NormaError):
        AuditConfig.parse(value)


@FUZZ
@given(_PATTERNS, _TEXT)
def test_audits_with_configured_patterns(documents: DocumentSet, patterns: list[str], output: str) -> None:
    try:
        config = AuditConfig.parse({"embeddings": False, "reference_patterns": patterns})
    except NormaError:
        return
    with contextlib.suppress(NormaError):
        analyze({"input": "Implementa POL-12", "output": output + " POL-12 §3 aaaa!"}, documents, config)


@FUZZ
@given(json_values(RULE_KEYS))
def test_rules(value: Any) -> None:
    with contextlib.suppress(NormaError):
        Rule.from_mapping(value)


_RULEBOOKS = st.one_of(
    st.dictionaries(st.sampled_from(RULEBOOK_KEYS), json_values(RULE_KEYS), max_size=5),
    st.lists(json_values(RULE_KEYS), max_size=4),
    st.fixed_dictionaries(
        {"rules": st.lists(st.dictionaries(st.sampled_from(RULE_KEYS), json_values([])), max_size=4)}
    ),
)


@FUZZ
@given(_RULEBOOKS)
def test_rulebooks(value: Any) -> None:
    with contextlib.suppress(NormaError):
        load_rulebook(value, tenant_id="fuzz")


@pytest.fixture(scope="module")
def rulebook_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rulebooks")


@FUZZ
@given(
    st.one_of(st.binary(max_size=300), _RULEBOOKS.map(lambda v: yaml.safe_dump(v).encode())),
    st.sampled_from([".yaml", ".json"]),
)
def test_rulebook_files(rulebook_dir: Path, data: bytes, suffix: str) -> None:
    path = rulebook_dir / f"book{suffix}"
    path.write_bytes(data)
    with contextlib.suppress(NormaError):
        load_rulebook(path, tenant_id="fuzz")
