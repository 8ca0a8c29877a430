"""``norma rules doctor`` and the benchmarks' machine line name the encoder in use: identity, fp32 / int8, encoder
version, batch independence, and the onnxruntime kernel it runs on this CPU (issue #58, item 2)."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from norma.embeddings import get_embedder
from norma.embeddings._identity import cpu_features, int8_kernel
from norma.matching import RuleMatcher, diagnose_rulebook, load_rules
from norma.store import open_store
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.model

RULES = EXAMPLES / "matching" / "support_rules.yaml"
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.parametrize("int8", [False, True])
def test_the_diagnosis_names_the_encoder(int8: bool) -> None:
    embedder = get_embedder(quantize=int8)
    diagnosis = diagnose_rulebook(RuleMatcher(load_rules(RULES), embedder=embedder))
    assert diagnosis.encoder == embedder.encoder
    data = diagnosis.to_dict()["encoder"]
    assert (data["model_id"], data["precision"], data["version"], data["batch_independent"]) == (
        embedder.model_id, "int8" if int8 else "fp32", 2 if int8 else 1, True
    )  # fmt: skip
    assert data["cpu"] == list(cpu_features())


def test_the_doctor_prints_the_encoder_and_its_kernel(
    run_cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    table = run_cli("rules", "doctor", "--rules", str(RULES))
    assert table.code == 0, table.err
    text = " ".join(line.strip() for line in table.out.splitlines())  # the line wraps at 80 columns
    assert "encoder: sentence-transformers/all-MiniLM-L6-v2: fp32, encoder version 1, batches of up to 32" in text
    assert max(len(line.rstrip()) for line in table.out.splitlines()) <= 80
    monkeypatch.setenv("NORMA_EMBEDDINGS_INT8", "1")
    result = run_cli("rules", "doctor", "--rules", str(RULES), "--format", "json")
    assert result.code == 0, result.err
    encoder = json.loads(result.out)["encoder"]
    assert encoder["model_id"] == "sentence-transformers/all-MiniLM-L6-v2#int8.2"
    assert (encoder["precision"], encoder["version"], encoder["batch_independent"]) == ("int8", 2, True)
    assert encoder["batching"] == "one text per forward pass, unpadded (batch-independent, bit for bit)"
    assert encoder["kernel"].endswith(f"int8 kernel: {int8_kernel()}")
    assert "avx512_vnni" in encoder["cpu"] or "VNNI (vpdpbusds" not in encoder["kernel"]


def test_the_doctor_of_a_tenant_names_the_encoder_it_embedded_with(
    run_cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = f"sqlite:///{tmp_path / 'norma.db'}"
    store = open_store(db)
    try:
        store.upsert_rules("acme", load_rules(RULES), embedder=get_embedder(quantize=False))
    finally:
        store.close()
    monkeypatch.setenv("NORMA_EMBEDDINGS_INT8", "1")
    with caplog.at_level(logging.WARNING, logger="norma.store"):
        result = run_cli("rules", "doctor", "--tenant", "acme", "--db", db, "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["encoder"]["model_id"].endswith("#int8.2")
    said = [r.getMessage() for r in caplog.records if r.name == "norma.store"]
    assert len(said) == 1
    assert "sentence-transformers/all-MiniLM-L6-v2 (6 rules) are never mixed" in said[0]
    store = open_store(db)
    try:  # the doctor only reads: the int8 vectors were computed in memory, not kept
        assert store.vector_encoders("acme") == {"sentence-transformers/all-MiniLM-L6-v2": 6}  # type: ignore[attr-defined]
    finally:
        store.close()


def test_the_machine_line_names_both_encoders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import _docs

    line = _docs.machine_line()
    fp32, int8 = get_embedder(quantize=False).encoder, get_embedder(quantize=True).encoder
    assert f"encoder (default): {fp32.describe()}; the other: {int8.describe()}" in line
    monkeypatch.setenv("NORMA_EMBEDDINGS_INT8", "yes")
    assert _docs.encoders_line() == f"encoder (default): {int8.describe()}; the other: {fp32.describe()}"
    del sys.modules["_docs"]
