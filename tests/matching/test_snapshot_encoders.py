"""A rulebook snapshot knows its encoder (issue #58, item 3): one written with fp32 is never read with int8 nor the
other way round, and one written by the batch-dependent int8 encoder of earlier norma (``...#int8``) is never read
by today's (real files, the real model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from norma.embeddings import BertEmbedder, EmbeddingCache, get_embedder
from norma.matching import load_rules
from norma.matching._snapshot import _file_key, _name, file_matcher
from norma.rules import rule_texts
from tests._encoders import OLD_INT8_ID, batched_int8
from tests.conftest import EXAMPLES
from tests.matching.conftest import Counting

pytestmark = pytest.mark.model

BANKING = EXAMPLES / "rulebooks" / "banking-support.yaml"


@pytest.fixture(scope="module")
def encoders() -> dict[str, BertEmbedder]:
    """Both encoders, built before the cache folder moves (the int8 model is not quantised again)."""
    return {"fp32": get_embedder(quantize=False), "int8": get_embedder(quantize=True)}


@pytest.fixture(autouse=True)
def _encoders_first(encoders: dict[str, BertEmbedder]) -> None:
    """Both encoders are built before ``cache_dir`` moves the cache folder (the int8 model is not quantised again)."""


def _texts(book: Path) -> list[str]:
    return sorted(t for rule in load_rules(book) for t in rule_texts(rule))


def _models(cache_dir: Path) -> list[str]:
    folders = (p for p in (cache_dir / "rulebooks").iterdir() if not p.name.startswith("."))
    return sorted(json.loads((p / "rules.json").read_text(encoding="utf-8"))["model"] for p in folders)


def test_a_snapshot_of_one_encoder_is_never_read_by_the_other(
    book: Path, cache_dir: Path, encoders: dict[str, BertEmbedder]
) -> None:
    fp32, int8 = Counting(encoders["fp32"]), Counting(encoders["int8"])
    first = file_matcher(book, embedder=fp32)
    assert sorted(fp32.texts) == _texts(book)
    second = file_matcher(book, embedder=int8)
    assert sorted(int8.texts) == _texts(book)  # the fp32 snapshot (and fp32's cached vectors) not read
    assert _models(cache_dir) == sorted([fp32.model_id, int8.model_id])  # one snapshot per encoder
    for rule in second.rules:
        assert np.abs(second.vectors_for(rule.id) - int8.inner.embed(rule_texts(rule))).max() <= 1e-6
    assert max(float(np.abs(first.vectors_for(r.id) - second.vectors_for(r.id)).max()) for r in first.rules) > 1e-3
    fp32.texts.clear()
    int8.texts.clear()
    for counting, matcher in ((fp32, first), (int8, second)):  # each reads its own snapshot back
        again = file_matcher(book, embedder=counting)
        assert counting.texts == []
        assert all(np.array_equal(again.vectors_for(r.id), matcher.vectors_for(r.id)) for r in matcher.rules)


def test_a_snapshot_of_the_batch_dependent_int8_is_never_read(
    book: Path, cache_dir: Path, encoders: dict[str, BertEmbedder]
) -> None:
    """What earlier norma left in the cache folder: a snapshot filed under ``...#int8`` and the rule texts' int8
    vectors in the embedding cache, both made in batches. Today's int8 reads neither; nor a snapshot copied under
    its own name that says it was made by the old encoder."""
    int8 = Counting(encoders["int8"])
    file_matcher(book, embedder=int8)  # a snapshot to dress up as the old encoder's
    rules = load_rules(book)
    texts = [t for rule in rules for t in rule_texts(rule)]
    old_vectors = batched_int8(encoders["int8"], texts)
    (snapshot,) = (cache_dir / "rulebooks").iterdir()
    meta = json.loads((snapshot / "rules.json").read_text(encoding="utf-8"))
    meta["model"] = OLD_INT8_ID
    (snapshot / "rules.json").write_text(json.dumps(meta), encoding="utf-8")
    np.save(snapshot / "vectors.npy", old_vectors)
    old_name = _name(_file_key(book.read_bytes()), OLD_INT8_ID)
    shutil.copytree(snapshot, snapshot.parent / old_name)  # filed as the old encoder filed it
    cache = EmbeddingCache.in_user_cache()
    try:
        cache.put_many(OLD_INT8_ID, texts, old_vectors)
    finally:
        cache.close()
    for _ in range(2):  # the first: the copy under today's name says "#int8", so it is written again; then read
        int8.texts.clear()
        matcher = file_matcher(book, embedder=int8)
        for rule in rules:
            assert np.abs(matcher.vectors_for(rule.id) - int8.inner.embed(rule_texts(rule))).max() <= 1e-6
    assert int8.texts == []  # the second read today's snapshot back
    assert _models(cache_dir) == sorted([OLD_INT8_ID, int8.model_id])
    assert float(np.abs(np.concatenate([matcher.vectors_for(r.id) for r in rules]) - old_vectors).max()) > 1e-3
