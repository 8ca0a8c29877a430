"""Stores know their encoder (issue #58, item 3), on a real SQLite file and the real PostgreSQL server: a store written
with fp32 and opened with int8 (and the other way round) never reads one encoder's vectors as the other's; the rules
are embedded again with the encoder in use (a service saves them, read-only tools keep them in memory), said on the
``norma.store`` log; a store of an earlier norma, with the batch-dependent int8's vectors, keeps working."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from norma.embeddings import DEFAULT_MODEL_ID, BertEmbedder, get_embedder
from norma.errors import ConfigError
from norma.matching import Rule, snapshot_matcher, tenant_matcher
from norma.rules import rule_fingerprint, rule_texts
from norma.store import SQLiteRuleStore, VectorEncoders, open_store
from tests._encoders import OLD_INT8_ID, batched_int8
from tests.store.conftest import CountingEmbedder
from tests.store.test_tenant_matchers import RULES  # the three rules the store tests share

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[2]

TEXTS = sorted(t for r in RULES for t in rule_texts(r))
INT8_ID = f"{DEFAULT_MODEL_ID}#int8.2"


def _encoder(name: str) -> BertEmbedder:
    return get_embedder(quantize=name == "int8")


def _switches(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "norma.store" and "never mixed" in r.getMessage()]


@pytest.mark.parametrize(("written", "opened"), [("fp32", "int8"), ("int8", "fp32")])
def test_a_store_written_with_one_encoder_is_opened_with_the_other(
    store_url: str, written: str, opened: str, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = _encoder(written), _encoder(opened)
    assert first.model_id != second.model_id
    writer = open_store(store_url)
    try:
        writer.upsert_rules("acme", RULES, embedder=first)
        kept = writer.load_vectors("acme", first.model_id)
        assert isinstance(writer, VectorEncoders)
        assert writer.vector_encoders("acme") == {first.model_id: 3}
    finally:
        writer.close()
    counting = CountingEmbedder(second)
    store = open_store(store_url)  # a service (or norma match --tenant) started with the other encoder
    try:
        with caplog.at_level(logging.WARNING, logger="norma.store"):
            matcher = tenant_matcher(store, "acme", embedder=counting)
        assert sorted(counting.texts) == TEXTS  # every rule embedded again, with the encoder in use
        (line,) = _switches(caplog)
        assert f"tenant 'acme': 3 rules have no vectors of encoder {second.model_id}" in line
        assert f"the store's vectors of {first.model_id} (3 rules) are never mixed with its own" in line
        for rule in RULES:  # the matcher's vectors are the new encoder's, none of the old one's
            mine = matcher.vectors_for(rule.id)
            assert np.abs(mine - second.embed(rule_texts(rule))).max() <= 1e-6  # (the matcher normalises again)
            assert np.abs(mine - kept[rule.id]).max() > 1e-3
        # saved under the new encoder's identity, the old encoder's left as they were
        assert store.vector_encoders("acme") == {first.model_id: 3, second.model_id: 3}
        after = store.load_vectors("acme", first.model_id)
        assert all(np.array_equal(after[i], kept[i]) for i in kept)
    finally:
        store.close()
    for encoder in (first, second):  # each encoder now reads its own vectors: nothing embedded, nothing said
        counting = CountingEmbedder(encoder)
        caplog.clear()
        again = open_store(store_url)
        try:
            with caplog.at_level(logging.WARNING, logger="norma.store"):
                tenant_matcher(again, "acme", embedder=counting)
        finally:
            again.close()
        assert counting.texts == []
        assert _switches(caplog) == []


def test_read_only_tools_embed_in_memory_and_write_nothing(store_url: str, caplog: pytest.LogCaptureFixture) -> None:
    fp32, int8 = _encoder("fp32"), _encoder("int8")
    store = open_store(store_url)
    try:
        store.upsert_rules("acme", RULES, embedder=fp32)
        with caplog.at_level(logging.WARNING, logger="norma.store"):
            matcher = snapshot_matcher(store, "acme", embedder=int8)  # norma rules doctor / eval --tenant
        assert len(_switches(caplog)) == 1
        assert np.abs(matcher.vectors_for("refund") - int8.embed(rule_texts(RULES[0]))).max() <= 1e-6
        assert store.vector_encoders("acme") == {fp32.model_id: 3}
    finally:
        store.close()


def test_only_fresh_vectors_count_for_an_encoder(store_url: str) -> None:
    fp32 = _encoder("fp32")
    store = open_store(store_url)
    try:
        assert store.vector_encoders("acme") == {}
        store.upsert_rules("acme", RULES, embedder=fp32)
        edited = RULES[0].model_copy(update={"tenant_id": "acme", "condition_text": "customer wants a refund now"})
        store.upsert_rules("acme", [edited], embedder=fp32)
        assert store.vector_encoders("acme") == {fp32.model_id: 3}  # re-embedded with the edit
        store.save_vectors(
            "acme", OLD_INT8_ID, {r.id: (rule_fingerprint(r), fp32.embed(rule_texts(r))) for r in RULES[1:]}
        )
        assert store.vector_encoders("acme") == {fp32.model_id: 3, OLD_INT8_ID: 2}
        store.delete_rules("acme", ["hello"])
        assert store.vector_encoders("acme") == {fp32.model_id: 2, OLD_INT8_ID: 1}
        assert store.vector_encoders("globex") == {}
    finally:
        store.close()


def test_a_store_of_an_earlier_norma_keeps_working(store_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """An earlier norma kept fp32 vectors under the model id (as today) and its int8 ones, batch-dependent, under
    ``...#int8``: fp32 reads its vectors as they are, int8 never reads the old ones (it embeds and saves its own)."""
    fp32, int8 = _encoder("fp32"), _encoder("int8")
    writer = open_store(store_url)
    try:
        writer.upsert_rules("acme", RULES, embedder=fp32)
        companion = "a longer companion text in the same batch " * 4  # moves the others' int8 vectors
        old = {r.id: batched_int8(int8, [*rule_texts(r), companion])[:-1] for r in RULES}
        writer.save_vectors("acme", OLD_INT8_ID, {r.id: (rule_fingerprint(r), old[r.id]) for r in RULES})
        if isinstance(writer, SQLiteRuleStore):
            assert writer.migrations() == [1, 2]  # no migration: the schema is the one earlier norma wrote
    finally:
        writer.close()
    store = open_store(store_url)
    try:
        counting = CountingEmbedder(fp32)
        fp32_matcher = tenant_matcher(store, "acme", embedder=counting)
        assert counting.texts == []  # fp32's identity never changed: its stored vectors serve
        assert fp32_matcher.match("I want my money back please")[0].rule.id == "refund"
        counting = CountingEmbedder(int8)
        with caplog.at_level(logging.WARNING, logger="norma.store"):
            matcher = tenant_matcher(store, "acme", embedder=counting)
        assert sorted(counting.texts) == TEXTS
        assert f"{OLD_INT8_ID} (3 rules)" in _switches(caplog)[0]
        for rule in RULES:
            alone = np.stack([int8.embed([text])[0] for text in rule_texts(rule)])
            assert np.abs(matcher.vectors_for(rule.id) - alone).max() <= 1e-6
        assert max(float(np.abs(matcher.vectors_for(i) - old[i]).max()) for i in old) > 1e-3
        assert store.vector_encoders("acme") == {fp32.model_id: 3, OLD_INT8_ID: 3, INT8_ID: 3}
    finally:
        store.close()


def test_push_down_refuses_an_encoder_the_store_has_no_vectors_of(pg_server_url: str) -> None:
    from tests._pgserver import fresh_database

    fp32, int8 = _encoder("fp32"), _encoder("int8")
    store = open_store(fresh_database(pg_server_url))
    try:
        store.upsert_rules("acme", RULES, embedder=fp32)
        query = int8.embed(["I want my money back please"])[0]
        with pytest.raises(ConfigError) as refused:
            store.search("acme", query, model_id=int8.model_id)  # type: ignore[attr-defined]
        assert str(refused.value).startswith(
            f"{store.url}:acme: tenant 'acme' has no vectors of encoder {int8.model_id} to search (its vectors: "
            f"{fp32.model_id} (3 rules))"
        )
        assert "tenant_matcher" in (refused.value.hint or "")
        assert store.search("nobody", query, model_id=int8.model_id) == []  # type: ignore[attr-defined]
        tenant_matcher(store, "acme", embedder=int8)  # embeds and saves the int8 vectors
        found = store.search("acme", query, model_id=int8.model_id)  # type: ignore[attr-defined]
        assert found[0][0] == "refund"
    finally:
        store.close()


def test_the_command_line_says_it_re_embeds_on_stderr(tmp_path: Path) -> None:
    """``norma match --tenant`` on a store written with fp32, run with the int8 encoder: one line on stderr, once."""
    db = f"sqlite:///{tmp_path / 'norma.db'}"
    store = open_store(db)
    try:
        store.upsert_rules("acme", RULES, embedder=_encoder("fp32"))
    finally:
        store.close()
    env = {**os.environ, "NORMA_EMBEDDINGS_INT8": "1"}
    command = [sys.executable, "-m", "norma", "match", "--tenant", "acme", "--db", db, "my card was stolen"]
    runs = [subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, timeout=300, check=False)
            for _ in range(2)]  # fmt: skip
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr
    assert "lost-card" in runs[0].stdout
    lines = [line for line in runs[0].stderr.splitlines() if "never mixed" in line]
    assert lines == [
        f"norma: tenant 'acme': 3 rules have no vectors of encoder {INT8_ID}, the one in use; the store's vectors of "
        f"{DEFAULT_MODEL_ID} (3 rules) are never mixed with its own: embedding 6 texts"
    ]
    assert "never mixed" not in runs[1].stderr  # saved the first time


def test_a_long_re_embedding_shows_its_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from norma.store import _unstored

    monkeypatch.setattr(_unstored, "PROGRESS_SECONDS", 0.0)  # a line after every call of 256 texts
    rules = [
        Rule(id=f"rule-{n}", condition_text=f"customer asks about topic {n}", examples=[f"question {k} on {n}"
             for k in range(4)])
        for n in range(60)
    ]  # fmt: skip
    store = open_store(f"sqlite:///{tmp_path / 'norma.db'}")
    try:
        store.upsert_rules("acme", rules, embedder=_encoder("fp32"))
        with caplog.at_level(logging.WARNING, logger="norma.store"):
            matcher = tenant_matcher(store, "acme", embedder=_encoder("int8"))
        assert len(matcher) == 60
    finally:
        store.close()
    said = [r.getMessage() for r in caplog.records if r.name == "norma.store"]
    assert said[0].startswith("norma: tenant 'acme': 60 rules have no vectors of encoder ")
    assert said[0].endswith("embedding 300 texts")
    assert said[1].startswith(f"norma: tenant 'acme': embedded 52 of 60 rules with {INT8_ID} (")  # 260 texts
    assert said[2].startswith(f"norma: tenant 'acme': embedded 60 rules with {INT8_ID} in ")
    assert len(said) == 3
