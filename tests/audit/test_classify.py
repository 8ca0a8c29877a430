"""§4.01 classification and the count_keywords decisions (docs/design/060-audit.md)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.audit import ContextType, classify_context, count_keywords


@pytest.mark.parametrize(
    ("text", "keywords", "expected"),
    [
        ("Revisa el código", ["código"], 1),
        ("Revisa el codigo", ["código"], 1),  # accents folded
        ("CÓDIGO y Código", ["código"], 2),  # case folded, repeats count
        ("codigos", ["código"], 0),  # whole words only
        ("no entiendo nada", ["no entiendo"], 1),  # phrases
        ("no   entiendo", ["no entiendo"], 1),
        ("la red está caída", ["RED"], 0),  # Spanish word, not the document
        ("según RED §2.01", ["RED"], 1),  # acronym in capitals
        ("según red §2.01", ["RED"], 1),  # any case when a section follows
        ("el servidor DNS", ["DNS"], 1),
        ("¿Qué es un namespace?", ["¿qué es?"], 1),
        ("Hola, ¿qué es esto?", ["¿qué es?"], 1),
        ("lo que es importante", ["¿qué es?"], 0),  # not opening a question
    ],
)
def test_count_keywords(text: str, keywords: list[str], expected: int) -> None:
    assert count_keywords(text, keywords) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hola, gracias", ContextType.CONVERSATIONAL),
        ("Implementa la clase FlowShaper según DNS §2.01", ContextType.TECHNICAL),
        ("Hola, implementa la clase", ContextType.MIXED),  # 2 technical, 1 conversational: not > 2x
        ("Buenas tardes", ContextType.MIXED),  # no keywords at all: the spec's else branch
        ("La red se satura, ¿por qué?", ContextType.CONVERSATIONAL),
        ("Refactor the Engine class", ContextType.TECHNICAL),
        ("Hi, thanks! What is a token bucket?", ContextType.CONVERSATIONAL),
    ],
)
def test_classify_context(text: str, expected: ContextType) -> None:
    assert classify_context(text) is expected


@given(st.text(max_size=200))
def test_classification_is_total_and_stable(text: str) -> None:
    first = classify_context(text)
    assert first in set(ContextType)
    assert classify_context(text) is first
    assert count_keywords(text, ["código", "DNS"]) >= 0
