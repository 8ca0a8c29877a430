"""Scoring many records: a pure function for one record and an ordered, parallel runner over a JSON Lines file.

A record is one JSON object per line: ``{"name": ..., "variations": [...], "labels": {...}}`` where ``labels`` is
what the query builder returns (``variation_count``, ``phonetic_similarity``, ``orthographic_similarity`` and
optionally ``rule_based``). :func:`score_record` is the function to map over Ray or Dask partitions;
:func:`score_jsonl` runs it in a local process pool.

Workers are started with ``fork`` where the platform has it, so they share the parent's string hash salt: in
``compat="miid"`` the phonetic weights come from ``hash()``, and a pool of freshly spawned interpreters would give
each worker other weights. Where ``fork`` is missing, set ``PYTHONHASHSEED`` to get the same scores from every
worker.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections import deque
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from norma.errors import InvalidInputError, NormaError
from norma.names._compat import check_compat
from norma.names._quality import variation_quality

__all__ = ["ScoredRecord", "count_records", "score_jsonl", "score_record"]

_CHUNK = 32


@dataclass(frozen=True)
class ScoredRecord:
    """The score of one record of a JSON Lines file."""

    line: int
    """1-based line number of the record in its file."""
    result: dict[str, Any]
    """What :func:`score_record` returned for it."""


def score_record(
    record: Mapping[str, Any], *, compat: str = "miid", transliterate: bool = False, metrics: bool = False
) -> dict[str, Any]:
    """Score one ``{name, variations, labels}`` record; returns name, final, base, rule compliance and counts.

    With ``metrics=True`` the full metrics dict of ``variation_quality`` is included under ``"metrics"``.

    Raises:
        InvalidInputError: the record is not a mapping, lacks a key, or holds a bad value (a non-string name, a
            NaN percentage, an unknown similarity level...).
    """
    if not isinstance(record, Mapping):
        raise InvalidInputError(
            f"a record must be a JSON object, not {type(record).__name__}",
            hint='write {"name": ..., "variations": [...], "labels": {...}}',
        )
    missing = [key for key in ("name", "variations", "labels") if key not in record]
    if missing:
        raise InvalidInputError(
            f"the record lacks {', '.join(missing)}", hint="every record needs name, variations and labels"
        )
    labels = record["labels"]
    if not isinstance(labels, Mapping):
        raise InvalidInputError(f"labels must be an object, not {type(labels).__name__}", location="labels")
    if "variation_count" not in labels:
        raise InvalidInputError("labels lack variation_count", location="labels.variation_count")
    try:
        final, base, details = variation_quality(
            record["name"],
            record["variations"],
            labels.get("phonetic_similarity"),
            labels.get("orthographic_similarity"),
            labels["variation_count"],
            labels.get("rule_based"),
            compat=check_compat(compat),
            transliterate=transliterate,
        )
    except InvalidInputError as exc:
        raise _in_record_terms(exc) from exc
    rule = details.get("rule_compliance")
    result: dict[str, Any] = {
        "name": record["name"],
        "final": final,
        "base": base,
        "rule_compliance": rule["score"] if isinstance(rule, Mapping) else None,
        "variations": details.get("variation_count", len(record["variations"])),
        "rule_compliant": details.get("rule_compliant_variations_count", 0),
    }
    if metrics:
        result["metrics"] = details
    return result


_RECORD_PATHS = (
    ("expected_count", "labels.variation_count"),
    ("phonetic_similarity", "labels.phonetic_similarity"),
    ("orthographic_similarity", "labels.orthographic_similarity"),
    ("rule_based", "labels.rule_based"),
)


def _in_record_terms(exc: InvalidInputError) -> InvalidInputError:
    """The scorer's error with argument names turned into the record's field paths."""
    message, location = exc.message, exc.location
    for argument, path in _RECORD_PATHS:
        message = message.replace(argument, path)
        if location and location.startswith(argument):
            location = path + location[len(argument) :]
    return InvalidInputError(message, location=location, hint=exc.hint)


def count_records(path: str | os.PathLike[str]) -> int:
    """How many records (non-blank lines) ``path`` holds."""
    with open(path, encoding="utf-8") as handle:
        return sum(1 for line in handle if line.strip())


def _score_lines(
    chunk: list[tuple[int, str]], compat: str, transliterate: bool, metrics: bool
) -> list[tuple[int, dict[str, Any] | None, str | None]]:
    """Score a chunk of (line number, text); a bad record yields its error message instead of a result."""
    out: list[tuple[int, dict[str, Any] | None, str | None]] = []
    for line, text in chunk:
        try:
            record = json.loads(text)
            out.append((line, score_record(record, compat=compat, transliterate=transliterate, metrics=metrics), None))
        except json.JSONDecodeError as exc:
            out.append((line, None, f"not valid JSON ({exc.msg} at column {exc.colno})"))
        except NormaError as exc:
            out.append((line, None, str(exc)))
    return out


def _chunks(path: Path) -> Iterator[list[tuple[int, str]]]:
    chunk: list[tuple[int, str]] = []
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                chunk.append((number, text))
                if len(chunk) == _CHUNK:
                    yield chunk
                    chunk = []
    if chunk:
        yield chunk


def _unpack(path: Path, scored: list[tuple[int, dict[str, Any] | None, str | None]]) -> Iterator[ScoredRecord]:
    for line, result, error in scored:
        if result is None:
            raise InvalidInputError(f"bad record: {error}", source=str(path), location=f"line {line}")
        yield ScoredRecord(line, result)


def score_jsonl(
    path: str | os.PathLike[str],
    *,
    workers: int = 1,
    compat: str = "miid",
    transliterate: bool = False,
    metrics: bool = False,
) -> Iterator[ScoredRecord]:
    """Score every record of a JSON Lines file, yielding results in file order as they are ready.

    With ``workers > 1`` chunks of records are scored in a process pool (a bounded number in flight, so memory
    stays flat on large files). The first bad record stops the run: everything before it has been yielded, then
    :class:`~norma.errors.InvalidInputError` names the file and the line.
    """
    source = Path(path)
    mode = check_compat(compat)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidInputError(f"workers must be an integer >= 1, not {workers!r}", location="workers")
    if not source.is_file():
        raise InvalidInputError("no such file", source=str(source), hint="pass a JSON Lines file of records")
    if workers == 1:
        for chunk in _chunks(source):
            yield from _unpack(source, _score_lines(chunk, mode, transliterate, metrics))
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: deque[Future[list[tuple[int, dict[str, Any] | None, str | None]]]] = deque()
        chunks = _chunks(source)
        try:
            for chunk in chunks:
                pending.append(pool.submit(_score_lines, chunk, mode, transliterate, metrics))
                if len(pending) >= 4 * workers:
                    yield from _unpack(source, pending.popleft().result())
            while pending:
                yield from _unpack(source, pending.popleft().result())
        finally:
            for future in pending:
                future.cancel()
