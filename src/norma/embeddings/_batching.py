"""Concurrent ``embed`` calls from many threads joined into one model call (dynamic batching).

A service answers many requests at once, each embedding one short message. One forward pass over a batch of N
messages costs much less than N passes of one, so :class:`BatchingEmbedder` lets the calls that arrive while the
model is busy wait, then embeds all of them together: the first caller to find the model idle runs the batch
(its own texts and everything queued), the others wait for their rows. Nothing waits on a timer: a call that
finds the model idle runs at once, so a lone request pays no latency, and under load the batches grow by
themselves. Results are the rows the wrapped embedder gives for the same texts (batching changes nothing beyond
float rounding, as the :class:`~norma.embeddings.Embedder` protocol promises; nothing at all with the int8 encoder,
which runs each text alone inside the joined call, so joining calls saves it only the waiting).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from norma.embeddings._protocol import Embedder, EmbedderWrapper

__all__ = ["BatchingEmbedder"]


class _Call:
    __slots__ = ("done", "error", "result", "texts")

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.result: np.ndarray | None = None
        self.error: BaseException | None = None
        self.done = False


class BatchingEmbedder(EmbedderWrapper):
    """Wraps an embedder; concurrent :meth:`embed` calls share model calls of up to ``max_texts`` texts.

    Attributes other than ``embed`` (``model_id``, ``dim``, ``token_counts``, ``max_seq_length``, ...) are the
    wrapped embedder's.
    """

    def __init__(self, embedder: Embedder, *, max_texts: int = 64) -> None:
        if max_texts < 1:
            raise ValueError("max_texts must be at least 1")
        super().__init__(embedder)
        self.max_texts = max_texts
        self._cond = threading.Condition()
        self._queue: list[_Call] = []
        self._running = False
        self.batches = 0
        """Model calls made so far (for tests and metrics)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The rows ``self.inner.embed(texts)`` gives, computed in one batch with other threads' texts."""
        call = _Call(list(texts))
        if not call.texts:
            return self.inner.embed([])
        with self._cond:
            self._queue.append(call)
            while not call.done and self._running:
                self._cond.wait()
            if call.done:
                return self._result(call)
            self._running = True  # this thread runs the next batch, which includes its own call
            batch = self._take()
        try:
            self._run(batch)
        finally:
            with self._cond:
                self._running = False
                self._cond.notify_all()
        return self._result(call)

    def _take(self) -> list[_Call]:
        """The queued calls, oldest first, up to ``max_texts`` texts (always at least the first one)."""
        batch: list[_Call] = []
        count = 0
        while self._queue and (not batch or count + len(self._queue[0].texts) <= self.max_texts):
            call = self._queue.pop(0)
            batch.append(call)
            count += len(call.texts)
        return batch

    def _run(self, batch: list[_Call]) -> None:
        """Embed the batch; if that fails, each call alone, so only a call that fails by itself gets an error."""
        try:
            vectors = self.inner.embed([text for call in batch for text in call.texts])
            self.batches += 1
            start = 0
            for call in batch:
                call.result = vectors[start : start + len(call.texts)]
                start += len(call.texts)
        except Exception:
            if len(batch) == 1:
                raise
            for call in batch:
                try:
                    call.result = self.inner.embed(call.texts)
                    self.batches += 1
                except Exception as exc:
                    call.error = exc
        except BaseException as exc:  # KeyboardInterrupt and the like: every waiting caller is released with it
            for call in batch:
                call.error = exc
            raise
        finally:
            for call in batch:
                call.done = True

    @staticmethod
    def _result(call: _Call) -> np.ndarray:
        if call.error is not None:
            raise call.error
        assert call.result is not None
        return call.result
