"""Embedding many texts as a batch job (:class:`EmbedJob`): a corpus, or the texts of a rulebook's rules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from norma.batch._job import Outcome, Worker
from norma.batch._stable import embed_stable
from norma.embeddings import get_embedder
from norma.errors import InvalidInputError
from norma.rules import Rule, rule_texts

__all__ = ["EmbedJob", "rule_text_payloads", "rule_vectors"]


@dataclass(frozen=True)
class EmbedJob:
    """Embed texts with the default embedder (:func:`norma.embeddings.get_embedder`), loaded once per worker.

    A payload is a text; its result is ``{"vector": [...]}`` (float32 values as JSON numbers, unit length).
    """

    quantize: bool | None = None
    """The int8 model instead of fp32 (``None``: as ``NORMA_EMBEDDINGS_INT8`` says)."""

    fork_safe = False
    uses_all_cores = True
    batch_size = 64
    record_seconds = 0.005

    def check(self) -> None:
        """Load the model here (a missing model is one error)."""
        get_embedder(quantize=self.quantize)

    def start(self) -> Worker:
        """Load the model, then embed each batch in one call."""
        embedder = get_embedder(quantize=self.quantize)

        def work(payloads: Sequence[Any]) -> list[Outcome]:
            texts = [text for text in payloads if isinstance(text, str)]
            vectors = iter(embed_stable(embedder, texts))
            error = str(InvalidInputError("a text to embed must be a string"))
            return [
                ({"vector": [float(x) for x in next(vectors)]}, None) if isinstance(text, str) else (None, error)
                for text in payloads
            ]

        return work


def rule_vectors(rules: Sequence[Rule], results: Sequence[Any]) -> dict[str, np.ndarray]:
    """The vectors of each rule (one row per text of :func:`norma.rules.rule_texts`, in that order) from the
    results of an :class:`EmbedJob` run over :func:`rule_text_payloads`' texts (in the same order)."""
    out: dict[str, np.ndarray] = {}
    position = 0
    for rule in rules:
        count = len(rule_texts(rule))
        rows = [results[position + k].result["vector"] for k in range(count)]
        out[rule.id] = np.asarray(rows, dtype=np.float32)
        position += count
    return out


def rule_text_payloads(rules: Sequence[Rule]) -> list[str]:
    """Every text of every rule, rule after rule (what an :class:`EmbedJob` embeds for a rulebook import)."""
    return [text for rule in rules for text in rule_texts(rule)]
