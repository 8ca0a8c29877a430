"""§10: analyze is stateless and re-entrant — 8 threads x 200 audits give exactly the sequential results."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from norma.audit import AuditConfig, DocumentSet, analyze, load_documents
from tests.audit.conftest import AUDIT

CASES = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((AUDIT / "cases").glob("*.json"))]


def _dump(report: Any) -> str:
    return json.dumps(report.model_dump(mode="json"), sort_keys=True)


def _hammer(docs: DocumentSet, config: AuditConfig, total: int) -> None:
    requests = [CASES[i % len(CASES)]["request"] for i in range(total)]
    sequential = [_dump(analyze(r, docs, config)) for r in requests]
    with ThreadPoolExecutor(max_workers=8) as pool:
        concurrent = list(pool.map(lambda r: _dump(analyze(r, docs, config)), requests))
    assert concurrent == sequential


def test_8_threads_x_200_deterministic_audits() -> None:
    docs = load_documents(AUDIT / "docs")  # fresh: lazily built caches are raced for too
    _hammer(docs, AuditConfig(embeddings=False), 8 * 200)


@pytest.mark.model
def test_8_threads_with_embedding_rules() -> None:
    docs = load_documents(AUDIT / "docs")
    _hammer(docs, AuditConfig(), 8 * 15)
