"""Store fixtures: one real PostgreSQL (pgvector) per session, a fresh database or SQLite file per test."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from norma.embeddings import Embedder, EmbedderWrapper, get_embedder
from norma.store import RuleStore, open_store
from tests._pgserver import fresh_database

BACKENDS = ["sqlite", "postgres"]


def make_url(backend: str, request: pytest.FixtureRequest, tmp_path: object) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path}/norma.db"
    return fresh_database(request.getfixturevalue("pg_server_url"))


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: object) -> str:
    """The URL of an empty store, once per backend."""
    return make_url(request.param, request, tmp_path)


@pytest.fixture
def store(store_url: str) -> Iterator[RuleStore]:
    opened = open_store(store_url)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return get_embedder()


class CountingEmbedder(EmbedderWrapper):
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed(texts)


@pytest.fixture
def counting(embedder: Embedder) -> CountingEmbedder:
    return CountingEmbedder(embedder)
