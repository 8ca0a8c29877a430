"""Many audits: JSON Lines in, one report (or one error) per record, in worker processes.

Each worker process loads the documents and the configuration once (and the embedding model on first need);
records are sent in chunks and results come back in input order. A bad record does not stop the batch: its item
carries the error, naming the record's line.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from norma.audit._config import AuditConfig
from norma.audit._documents import DocumentSet, load_documents
from norma.audit._models import AuditReport
from norma.audit._pipeline import analyze
from norma.errors import InvalidInputError, NormaError

__all__ = ["BatchItem", "analyze_batch", "read_requests"]

MAX_LINE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class BatchItem:
    """The result of one record: a report, or the error that stopped it."""

    index: int
    """0-based position in the input."""
    source: str
    """Where the record came from (``file:line``)."""
    report: AuditReport | None = None
    error: str | None = None


def read_requests(source: str | Path | IO[str]) -> Iterator[tuple[str, Any]]:
    """(``file:line``, parsed JSON or an :class:`InvalidInputError`) for each non-blank line of a JSON Lines input."""
    if isinstance(source, str | Path):
        name = str(source)
        with open(source, encoding="utf-8") as handle:
            yield from _lines(handle, name)
    else:
        yield from _lines(source, getattr(source, "name", "<stdin>"))


def _lines(handle: IO[str], name: str) -> Iterator[tuple[str, Any]]:
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        if len(line) > MAX_LINE_BYTES:
            yield where, InvalidInputError(f"record longer than {MAX_LINE_BYTES:,} characters", source=where)
            continue
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as exc:
            yield where, InvalidInputError(f"not valid JSON: {exc.msg} (column {exc.colno})", source=where)


_WORKER: dict[str, Any] = {}


def _init_worker(documents: str | None, config: dict[str, Any]) -> None:
    _WORKER["documents"] = load_documents(documents) if documents is not None else None
    _WORKER["config"] = AuditConfig.parse(config)


def _audit_one(task: tuple[int, str, Any]) -> BatchItem:
    index, where, record = task
    if isinstance(record, Exception):
        return BatchItem(index, where, error=str(record))
    try:
        report = analyze(record, _WORKER.get("documents"), _WORKER.get("config"))
    except NormaError as exc:
        exc.source = exc.source or where
        return BatchItem(index, where, error=str(exc))
    return BatchItem(index, where, report=report)


def analyze_batch(
    records: Iterable[tuple[str, Any]],
    documents: str | Path | DocumentSet | None = None,
    config: AuditConfig | None = None,
    *,
    workers: int = 1,
    on_item: Callable[[BatchItem], None] | None = None,
) -> list[BatchItem]:
    """Audit every record (pairs of source name and request mapping, as :func:`read_requests` yields).

    ``workers`` > 1 runs them in that many processes (``documents`` must then be a folder path or ``None``, so
    each process can load it); ``on_item`` is called as each result arrives (for a progress bar).
    """
    cfg = config or AuditConfig()
    tasks = [(index, where, record) for index, (where, record) in enumerate(records)]
    results: list[BatchItem] = []
    if workers <= 1 or len(tasks) <= 1:
        docs = documents if isinstance(documents, DocumentSet) or documents is None else load_documents(documents)
        _WORKER.update(documents=docs, config=cfg)
        for task in tasks:
            item = _audit_one(task)
            results.append(item)
            if on_item is not None:
                on_item(item)
        return results
    if isinstance(documents, DocumentSet):
        raise InvalidInputError("analyze_batch with workers > 1 needs the documents folder, not a DocumentSet")
    folder = os.fspath(documents) if documents is not None else None
    chunk = max(1, min(32, len(tasks) // (workers * 4) or 1))
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),  # no fork of a process that may run onnxruntime threads
        initializer=_init_worker,
        initargs=(folder, cfg.model_dump(mode="json")),
    ) as pool:
        for item in pool.map(_audit_one, tasks, chunksize=chunk):
            results.append(item)
            if on_item is not None:
                on_item(item)
    return results
