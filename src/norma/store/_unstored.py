"""Embedding the rules a store keeps no vectors for with the encoder in use: said once when it is a change of
encoder, with progress while it runs.

A store files every vector under the identity of the encoder that made it (``model_id``) and reads back only that
encoder's, so a store written with one encoder (fp32, say) and opened with another (int8) has no vectors for it:
every rule is embedded again, once. That takes a while on a large tenant (about 3 ms a text), so it is logged on
the ``norma.store`` logger (WARNING: the command line prints it on stderr when nothing configured logging, the
service writes it to its log): one line naming both encoders, then a line every :data:`PROGRESS_SECONDS` while it
lasts. Where the vectors go (saved by a service's tenant matchers, kept in memory by read-only tools) is the
caller's business.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence

import numpy as np

from norma.embeddings import Embedder
from norma.rules import Rule, rule_texts
from norma.store._base import embed_rules
from norma.store._protocol import RuleStore, VectorEncoders

__all__ = ["PROGRESS_SECONDS", "embed_unstored"]

PROGRESS_SECONDS = 5.0
"""Seconds between two progress lines of a long embedding."""
_CHUNK_TEXTS = 256  # texts per embedding call (between two looks at the clock)
_LOG = logging.getLogger("norma.store")


def _chunks(rules: Sequence[Rule]) -> Iterator[list[Rule]]:
    chunk: list[Rule] = []
    texts = 0
    for rule in rules:
        chunk.append(rule)
        texts += len(rule_texts(rule))
        if texts >= _CHUNK_TEXTS:
            yield chunk
            chunk, texts = [], 0
    if chunk:
        yield chunk


def embed_unstored(
    store: RuleStore, tenant_id: str, rules: Sequence[Rule], embedder: Embedder
) -> dict[str, np.ndarray]:
    """The vectors of ``rules`` (the tenant's rules the store has no fresh vectors of ``embedder``'s for), embedded
    now: rule id -> matrix. Logs a line when the store holds vectors of other encoders (see the module docstring)."""
    if not rules:
        return {}
    model = embedder.model_id
    texts = sum(len(rule_texts(rule)) for rule in rules)
    others = store.vector_encoders(tenant_id) if isinstance(store, VectorEncoders) else {}
    others.pop(model, None)
    if others:
        held = ", ".join(f"{other} ({count} rules)" for other, count in sorted(others.items()))
        _LOG.warning(
            "norma: tenant %r: %d rules have no vectors of encoder %s, the one in use; the store's vectors of %s are "
            "never mixed with its own: embedding %d texts",
            tenant_id, len(rules), model, held, texts,
        )  # fmt: skip
    out: dict[str, np.ndarray] = {}
    started = shown = time.monotonic()
    for chunk in _chunks(rules):
        out.update((rule_id, matrix) for rule_id, _, matrix in embed_rules(chunk, embedder))
        now = time.monotonic()
        if now - shown >= PROGRESS_SECONDS and len(out) < len(rules):
            _LOG.warning(
                "norma: tenant %r: embedded %d of %d rules with %s (%.0f s)",
                tenant_id, len(out), len(rules), model, now - started,
            )  # fmt: skip
            shown = now
    if shown != started:
        _LOG.warning(
            "norma: tenant %r: embedded %d rules with %s in %.0f s",
            tenant_id, len(rules), model, time.monotonic() - started,
        )  # fmt: skip
    return out
