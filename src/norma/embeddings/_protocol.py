"""The one interface every embedding backend has."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "EmbedderWrapper"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors.

    Implementations are safe to call from several threads at once, and give the same vector for the same text
    whatever else is in the call (batching never changes a result beyond float rounding).
    """

    @property
    def model_id(self) -> str:
        """Names the encoder: the model and any variant with its version (``"sentence-transformers/all-MiniLM-L6-v2"``,
        ``"...#int8.2"``).

        Two embedders with the same ``model_id`` give the same vectors, so stores, snapshots and caches key on it.
        """
        ...

    @property
    def dim(self) -> int:
        """Length of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A float32 array of shape ``(len(texts), dim)``, each row L2-normalised, in the order of ``texts``."""
        ...


class EmbedderWrapper:
    """Base of embedders that wrap another one (a cache, a batcher, a counter): ``model_id`` and ``dim`` are the
    wrapped embedder's, so vectors and caches keyed on the model id stay interchangeable."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def model_id(self) -> str:
        """The wrapped embedder's model id."""
        return self.inner.model_id

    @property
    def dim(self) -> int:
        """The wrapped embedder's vector length."""
        return self.inner.dim
