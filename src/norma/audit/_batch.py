"""Many audits: JSON Lines in, one report (or one error) per record, in worker processes.

Each worker process loads the documents and the configuration once (and the embedding model on first need);
records are sent in chunks and results come back in input order. A bad record does not stop the batch: its item
carries the error, naming the record's line. A line longer than ``limits.max_record_bytes`` is refused without
being held in memory whole, and each record is parsed with the bounded JSON parser (depth and size limits).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from norma._safety import InputLimits, load_json
from norma.audit._config import AuditConfig
from norma.audit._documents import DocumentSet, load_documents
from norma.audit._limits import DEFAULT_AUDIT_LIMITS, AuditLimits, limit_error
from norma.audit._models import AuditReport
from norma.audit._pipeline import analyze
from norma.errors import InvalidInputError, NormaError

__all__ = ["BatchItem", "analyze_batch", "read_request", "read_requests"]

_SKIP_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class BatchItem:
    """The result of one record: a report, or the error that stopped it."""

    index: int
    """0-based position in the input."""
    source: str
    """Where the record came from (``file:line``)."""
    report: AuditReport | None = None
    error: str | None = None


def read_request(source: str | Path | IO[str] | IO[bytes], *, limits: AuditLimits = DEFAULT_AUDIT_LIMITS) -> Any:
    """One request document (a JSON file, or a stream such as stdin), read no further than
    ``limits.max_record_bytes`` and parsed with the bounded JSON parser.

    Raises:
        LimitExceededError: the request is larger than ``limits.max_record_bytes``.
        InvalidInputError: it cannot be read or is not JSON.
    """
    limit = limits.max_record_bytes
    data: str | bytes
    if isinstance(source, str | Path):
        name = str(source)
        try:
            with open(source, "rb") as handle:
                data = handle.read(limit + 1)
        except OSError as exc:
            raise InvalidInputError(f"cannot read the request: {exc.strerror or exc}", source=name) from None
    else:
        name = getattr(source, "name", "<stdin>")
        data = source.read(limit + 1)
    if len(data) > limit:
        raise limit_error("request", None, "bytes", "max_record_bytes", limit, source=name)
    return load_json(data, source=name, limits=InputLimits(max_bytes=4 * (limit + 1)))


def read_requests(
    source: str | Path | IO[str] | IO[bytes], *, limits: AuditLimits = DEFAULT_AUDIT_LIMITS
) -> Iterator[tuple[str, Any]]:
    """(``file:line``, parsed JSON or the :class:`InvalidInputError` of that line) for each non-blank line of a
    JSON Lines input (a path, or an open text or binary stream); lines over ``limits.max_record_bytes`` are refused."""
    if isinstance(source, str | Path):
        with open(source, "rb") as handle:
            yield from _lines(handle, str(source), limits.max_record_bytes)
    else:
        yield from _lines(source, getattr(source, "name", "<stdin>"), limits.max_record_bytes)


def _lines(handle: IO[str] | IO[bytes], name: str, limit: int) -> Iterator[tuple[str, Any]]:
    bounds = InputLimits(max_bytes=4 * (limit + 1))  # the line's length is checked here; the parser bounds depth
    number = 0
    while True:
        line: str | bytes = handle.readline(limit + 1)
        if not line:
            return
        number += 1
        where = f"{name}:{number}"
        if len(line) > limit and not _ends_line(line):
            while line and not _ends_line(line):  # skip the rest of the line, chunk by chunk
                line = handle.readline(_SKIP_CHUNK)
            yield where, limit_error("record", None, "bytes", "max_record_bytes", limit, source=where)
            continue
        if not line.strip():
            continue
        try:
            # its line end is not in the record (an error at the end of the record is on this line)
            record = line.rstrip("\r\n") if isinstance(line, str) else line.rstrip(b"\r\n")
            yield where, load_json(record, source=name, limits=bounds, line=number)
        except InvalidInputError as exc:
            yield where, exc


def _ends_line(line: str | bytes) -> bool:
    return line.endswith("\n") if isinstance(line, str) else line.endswith(b"\n")


_WORKER: dict[str, Any] = {}
"""A pool worker process's documents and configuration, set once by :func:`_init_worker` in that process (never in
the process that calls :func:`analyze_batch`)."""


def _init_worker(documents: str | None, config: dict[str, Any]) -> None:
    cfg = AuditConfig.parse(config)
    _WORKER["documents"] = (
        load_documents(documents, limits=cfg.limits, norms=cfg.norms) if documents is not None else None
    )
    _WORKER["config"] = cfg


def _audit_in_worker(task: tuple[int, str, Any]) -> BatchItem:
    return _audit_one(task, _WORKER.get("documents"), _WORKER.get("config"))


def _audit_one(task: tuple[int, str, Any], documents: DocumentSet | None, config: AuditConfig | None) -> BatchItem:
    index, where, record = task
    if isinstance(record, Exception):
        return BatchItem(index, where, error=str(record))
    try:
        report = analyze(record, documents, config)
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
        docs = (
            documents
            if isinstance(documents, DocumentSet) or documents is None
            else load_documents(documents, limits=cfg.limits, norms=cfg.norms)
        )
        for task in tasks:
            item = _audit_one(task, docs, cfg)
            results.append(item)
            if on_item is not None:
                on_item(item)
        return results
    if isinstance(documents, DocumentSet):
        raise InvalidInputError("analyze_batch with workers > 1 needs the documents folder, not a DocumentSet")
    folder = os.fspath(documents) if documents is not None else None
    if folder is not None:  # fail here, with norma's error, rather than as a broken pool when every worker fails
        load_documents(folder, limits=cfg.limits, norms=cfg.norms)
    chunk = max(1, min(32, len(tasks) // (workers * 4) or 1))
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),  # no fork of a process that may run onnxruntime threads
        initializer=_init_worker,
        initargs=(folder, cfg.model_dump(mode="json")),
    ) as pool:
        for item in pool.map(_audit_in_worker, tasks, chunksize=chunk):
            results.append(item)
            if on_item is not None:
                on_item(item)
    return results
