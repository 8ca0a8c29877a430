"""Importing a rulebook whose texts are embedded by a batch engine (a large corpus of rule examples on Ray)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from norma.batch._embed import EmbedJob, rule_text_payloads, rule_vectors
from norma.batch._job import BatchRecord, BatchResult, Job
from norma.errors import BackendError, InvalidInputError
from norma.rules import Rulebook, load_rulebook
from norma.store import RuleStore

__all__ = ["import_rulebook_with"]

Runner = Callable[[Job, Sequence[BatchRecord]], list[BatchResult]]
"""Runs a job over records (:func:`norma.batch.run_job` with an engine chosen)."""


def import_rulebook_with(
    store: RuleStore,
    source: str | os.PathLike[str] | Mapping[str, Any] | Sequence[Any],
    run: Runner,
    *,
    tenant_id: str | None = None,
    job: EmbedJob | None = None,
    prune: bool = False,
) -> tuple[Rulebook, int]:
    """:func:`norma.store.import_rulebook`, with every text of every rule embedded by ``run`` (an :class:`EmbedJob`
    over :func:`rule_text_payloads`) and given to the store as precomputed vectors; ``prune=True`` makes the tenant
    exactly the rulebook (``RuleStore.upsert_rules(..., prune=True)``).

    Raises:
        RulebookError: an invalid rulebook (nothing written); InvalidInputError: no tenant.
        BackendError: a text the workers could not embed.
    """
    book = load_rulebook(source, tenant_id=tenant_id)
    if book.tenant_id is None:
        raise InvalidInputError(
            "the rulebook names no tenant", hint="pass --tenant (or tenant_id=), or add `tenant:` to the file"
        )
    rules = list(book.rules)
    texts = rule_text_payloads(rules)
    results = run(
        job or EmbedJob(), [BatchRecord(index, f"text {index + 1}", text) for index, text in enumerate(texts)]
    )
    failed = next((item for item in results if item.result is None), None)
    if failed is not None:
        raise BackendError(f"could not embed {failed.where}: {failed.error}")
    version = store.upsert_rules(book.tenant_id, rules, vectors=rule_vectors(rules, results), prune=prune)
    return book, version
