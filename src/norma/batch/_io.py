"""Batch inputs and outputs: JSON Lines or Parquet records in, JSON Lines or Parquet rows out.

Parquet needs ``pyarrow`` (installed with ``pip install 'norma-rules[ray]'``); without it the readers and writers raise
:class:`~norma.errors.MissingDependencyError` with that command.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from norma._safety import InputLimits, bounded_lines, load_json
from norma.batch._job import BatchRecord
from norma.errors import InvalidInputError, MissingDependencyError, NormaError

__all__ = ["MAX_LINE_BYTES", "is_parquet", "json_records", "parquet_bytes", "parquet_rows", "text_lines", "write_rows"]

MAX_LINE_BYTES = 1024 * 1024
"""Longest JSON Lines record read by :func:`json_records`."""

_INSTALL = "pip install 'norma-rules[ray]'"


def is_parquet(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a Parquet file (by its suffix ``.parquet`` / ``.pq``)."""
    return Path(path).suffix.lower() in (".parquet", ".pq")


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError("Parquet input and output", install=_INSTALL, extra="ray") from None
    return pa, pq


def require_parquet() -> None:
    """Raise the :class:`MissingDependencyError` reading or writing Parquet would raise, before any work is done."""
    _pyarrow()


def parquet_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a Parquet file as plain records (one mapping per row, nested values as lists and mappings).

    Raises:
        InvalidInputError: the file cannot be read as Parquet.
    """
    _, pq = _pyarrow()
    try:
        table = pq.read_table(os.fspath(path))
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"cannot read it as Parquet: {exc}", source=os.fspath(path)) from None
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def text_lines(handle: IO[bytes], name: str, max_bytes: int) -> Iterator[tuple[int, str]]:
    """(line number, text without its line end) of each non-blank line of a stream of UTF-8 text.

    Raises:
        LimitExceededError: a line over ``max_bytes`` (the lines before it have been yielded).
        InvalidInputError: a line that is not UTF-8.
    """
    yield from bounded_lines(handle, source=name, max_bytes=max_bytes)


def parquet_bytes(rows: Iterable[Mapping[str, Any]]) -> bytes:
    """``rows`` as the bytes of a Parquet file (columns inferred), for a caller that writes them atomically."""
    pa, pq = _pyarrow()
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist([dict(row) for row in rows]), sink)
    data: bytes = sink.getvalue().to_pybytes()
    return data


def write_rows(path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]]) -> None:
    """Write ``rows`` as JSON Lines, or as Parquet when ``path`` ends in ``.parquet`` (columns inferred)."""
    target = Path(path)
    if is_parquet(target):
        target.write_bytes(parquet_bytes(rows))
        return
    with target.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def json_records(source: str | os.PathLike[str], *, max_bytes: int = MAX_LINE_BYTES) -> list[BatchRecord]:
    """The records of a JSON Lines file (``"-"``: stdin) or a Parquet file, each parsed with the bounded JSON
    parser; a line that is not JSON is a record whose payload is its :class:`InvalidInputError`.

    Raises:
        LimitExceededError: a line over ``max_bytes``; InvalidInputError: a file that cannot be read.
    """
    name = os.fspath(source)
    if name != "-" and is_parquet(name):
        return [BatchRecord(index, f"{name}:row {index + 1}", row) for index, row in enumerate(parquet_rows(name))]
    bounds = InputLimits(max_bytes=4 * (max_bytes + 1))
    records: list[BatchRecord] = []

    def read(handle: IO[bytes], label: str) -> None:
        for number, text in text_lines(handle, label, max_bytes):
            where = f"{label}:{number}"
            payload: Any
            try:
                payload = load_json(text, source=label, limits=bounds, line=number)
            except NormaError as exc:
                payload = exc
            records.append(BatchRecord(len(records), where, payload))

    if name == "-":
        read(sys.stdin.buffer, "<stdin>")
        return records
    try:
        with open(name, "rb") as handle:
            read(handle, name)
    except OSError as exc:
        raise InvalidInputError(f"cannot read it: {exc.strerror or exc}", source=name) from None
    return records
