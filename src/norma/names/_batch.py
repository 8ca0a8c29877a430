"""Scoring many records: a pure function for one record and an ordered, parallel runner over a JSON Lines file.

A record is one JSON object per line: ``{"name": ..., "variations": [...], "labels": {...}}`` where ``labels`` is
what the query builder returns (``variation_count``, ``phonetic_similarity``, ``orthographic_similarity`` and
optionally ``rule_based``). :func:`score_record` is the function to map over Ray or Dask partitions;
:func:`score_jsonl` runs it in a local process pool.

In ``compat="miid"`` the phonetic weights come from ``hash()``: with ``hash_seed`` given every worker computes the
hash of that ``PYTHONHASHSEED`` itself, so the scores are the same in any process. With ``hash_seed=None`` each
process uses its own ``hash()``: workers are started with ``fork`` where the platform has it, so they share the
parent's salt (a pool of freshly spawned interpreters would give each worker other weights); where ``fork`` is
missing, set ``PYTHONHASHSEED`` or pass ``hash_seed``.

:func:`score_over_seeds` scores one record under many hash seeds: the validator draws a new salt at every start
unless ``PYTHONHASHSEED`` is set, so the same answer gets another score after a restart; its mean, minimum and
spread say what a miner faces across restarts. ``score_jsonl(..., hash_seeds=[...])`` runs it over a file.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from norma._safety import bounded_lines, check_unicode
from norma._trace import span
from norma.errors import InvalidInputError, LimitExceededError, NormaError
from norma.names._compat import check_compat
from norma.names._from_labels import quality_from_labels
from norma.names._pyhash import check_hash_seed

__all__ = [
    "MAX_HASH_SEEDS",
    "NameScore",
    "MAX_RECORD_BYTES",
    "ScoreOptions",
    "ScoredRecord",
    "count_records",
    "read_lines",
    "score_jsonl",
    "score_over_seeds",
    "score_record",
    "seed_summary",
]

_CHUNK = 32


@dataclass(frozen=True)
class ScoredRecord:
    """The score of one record of a JSON Lines file."""

    line: int
    """1-based line number of the record in its file."""
    result: dict[str, Any]
    """What :func:`score_record` returned for it."""


def _absent(value: object) -> bool:
    """An optional key left out of the JSON (absent, not null) when it was not given."""
    return value is None


class NameScore(BaseModel):
    """The JSON of :func:`score_record` (one result row of ``norma names score``): what the service's
    ``POST /v1/names/score`` answers, and the MCP tool ``score_name_variations`` with ``compat`` and ``hash_seed``
    first. The optional keys are absent unless given."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    compat: str | None = Field(default=None, exclude_if=_absent)
    """The scoring compatibility (``miid`` or ``stable``), when the answer says it."""
    hash_seed: int | None = Field(default=None, exclude_if=_absent)
    """The validator's PYTHONHASHSEED scored under, when the answer says it."""
    name: str
    final: float
    """The validator's final score."""
    base: float
    """The score before the rule-compliance part."""
    rule_compliance: float | None
    variations: int
    rule_compliant: int
    """How many variations follow one of the selected rules."""
    metrics: dict[str, Any] | None = Field(default=None, exclude_if=_absent)
    """With ``metrics``: every metric of the scorer."""


def score_record(
    record: Mapping[str, Any],
    *,
    compat: str = "miid",
    transliterate: bool = False,
    metrics: bool = False,
    hash_seed: int | None = None,
) -> dict[str, Any]:
    """Score one ``{name, variations, labels}`` record; returns name, final, base, rule compliance and counts.

    With ``metrics=True`` the full metrics dict of ``variation_quality`` is included under ``"metrics"``.
    ``hash_seed``: the validator's ``PYTHONHASHSEED`` to score under (see :func:`norma.names.variation_quality`;
    ``None``: this process's own ``hash()``).

    Raises:
        InvalidInputError: the record is not a mapping, lacks a key, or holds a bad value (a non-string name, a
            NaN percentage, an unknown similarity level...).
    """
    with span("norma.names.score", {"norma.names.compat": compat}) as traced:
        result = _score(record, compat, transliterate, metrics, hash_seed)
        if traced.recording:
            traced.set({"norma.names.variations.count": result["variations"], "norma.names.final": result["final"]})
    return result


def _score(
    record: Mapping[str, Any], compat: str, transliterate: bool, metrics: bool, hash_seed: int | None
) -> dict[str, Any]:
    _check_record(record)
    try:
        final, base, details = quality_from_labels(
            record["name"],
            record["variations"],
            record["labels"],
            compat=compat,
            transliterate=transliterate,
            hash_seed=hash_seed,
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


MAX_HASH_SEEDS = 10_000
"""Most hash seeds :func:`score_over_seeds` takes (each one is a full scoring of the record)."""


def _check_hash_seeds(hash_seeds: object) -> list[int]:
    if isinstance(hash_seeds, (str, bytes)) or not isinstance(hash_seeds, Sequence):
        raise InvalidInputError(
            f"hash_seeds must be a list of integers, not {type(hash_seeds).__name__}", location="hash_seeds"
        )
    seeds = [check_hash_seed(seed, f"hash_seeds[{index}]") for index, seed in enumerate(hash_seeds)]
    if not seeds or None in seeds:
        raise InvalidInputError(
            "hash_seeds must hold at least one integer seed (None is not one)",
            location="hash_seeds",
            hint="pass PYTHONHASHSEED values such as range(100)",
        )
    if len(seeds) > MAX_HASH_SEEDS:
        raise LimitExceededError(
            f"{len(seeds):,} hash seeds is over the limit of {MAX_HASH_SEEDS:,}", location="hash_seeds"
        )
    return [seed for seed in seeds if seed is not None]


def seed_summary(finals: Sequence[float]) -> dict[str, float]:
    """``{"mean", "min", "max", "spread"}`` of final scores over hash seeds (``spread = max - min``)."""
    if not finals:
        raise InvalidInputError("no scores to summarise", location="finals")
    low, high = min(finals), max(finals)
    return {"mean": math.fsum(finals) / len(finals), "min": low, "max": high, "spread": high - low}


def score_over_seeds(
    record: Mapping[str, Any], hash_seeds: Sequence[int], *, compat: str = "miid", transliterate: bool = False
) -> dict[str, Any]:
    """Score one record under each of ``hash_seeds`` (``PYTHONHASHSEED`` values of the validator).

    Returns ``{"name", "hash_seeds", "finals", "mean", "min", "max", "spread"}``: ``finals`` holds the final score
    per seed, in the order given, and the rest is their :func:`seed_summary`. In compat="stable" every seed scores
    the same.

    Raises:
        InvalidInputError: a bad record (as :func:`score_record`), or ``hash_seeds`` empty or holding a value that
            is not an integer 0..4294967295.
        LimitExceededError: more than :data:`MAX_HASH_SEEDS` seeds.
    """
    seeds = _check_hash_seeds(hash_seeds)
    with span("norma.names.score", {"norma.names.compat": compat, "norma.names.seeds.count": len(seeds)}) as traced:
        results = [_score(record, compat, transliterate, False, seed) for seed in seeds]  # one span, not one a seed
        finals = [result["final"] for result in results]
        summary = seed_summary(finals)
        traced.set({"norma.names.variations.count": results[0]["variations"], "norma.names.final": summary["mean"]})
    return {"name": record["name"], "hash_seeds": seeds, "finals": finals, **summary}


def _check_record(record: object) -> None:
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


def _in_record_terms(exc: InvalidInputError) -> InvalidInputError:
    """The scorer's error with the location it names in the record's terms.

    Bad labels are already named ``labels.<field>`` (:meth:`norma.names.Labels.from_mapping`); what is left is the
    scoring error of an expected count of 0 in compat="miid", located at the scorer's ``expected_count`` argument.
    """
    location = exc.location
    if location and location.startswith("expected_count"):
        location = "labels.variation_count" + location[len("expected_count") :]
    return InvalidInputError(exc.message, location=location, hint=exc.hint)


MAX_RECORD_BYTES = 1024 * 1024
"""Longest JSON Lines record read (a MIID record is a few kilobytes); ``max_record_bytes=`` changes it."""


def read_lines(path: str | os.PathLike[str], max_bytes: int = MAX_RECORD_BYTES) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line of a JSON Lines file, never reading more than ``max_bytes`` + 1
    bytes of one line.

    Raises:
        LimitExceededError: a line over ``max_bytes`` (the lines before it have been yielded).
        InvalidInputError: a line that is not UTF-8.
    """
    with Path(path).open("rb") as handle:
        yield from bounded_lines(
            handle,
            source=os.fspath(path),
            max_bytes=max_bytes,
            what="record",
            hint="split the record (from Python, max_record_bytes= raises the limit)",
        )


def count_records(path: str | os.PathLike[str], *, max_record_bytes: int = MAX_RECORD_BYTES) -> int:
    """How many records (non-blank lines) ``path`` holds."""
    return sum(1 for _ in read_lines(Path(path), max_record_bytes))


@dataclass(frozen=True)
class ScoreOptions:
    """How to score each record of a batch (checked once; plain values, so it pickles for any worker)."""

    compat: str = "miid"
    """``miid`` or ``stable``."""
    transliterate: bool = False
    """Transliterate non-Latin names and variations first."""
    metrics: bool = False
    """Include the full metrics dict of each record."""
    hash_seed: int | None = None
    """The validator's ``PYTHONHASHSEED`` to score under (``None``: this process's own ``hash()``)."""
    hash_seeds: tuple[int, ...] | None = None
    """Score under each of these seeds instead (:func:`score_over_seeds`)."""

    @classmethod
    def make(
        cls,
        *,
        compat: str = "miid",
        transliterate: bool = False,
        metrics: bool = False,
        hash_seed: int | None = None,
        hash_seeds: Sequence[int] | None = None,
    ) -> ScoreOptions:
        """Checked options.

        Raises:
            InvalidInputError: an unknown compat, a bad hash seed, or ``hash_seeds`` with ``hash_seed`` or
                ``metrics``.
            LimitExceededError: more than :data:`MAX_HASH_SEEDS` seeds.
        """
        mode = check_compat(compat)
        seed = check_hash_seed(hash_seed)
        seeds = None if hash_seeds is None else tuple(_check_hash_seeds(hash_seeds))
        if seeds is not None and (seed is not None or metrics):
            raise InvalidInputError(
                "hash_seeds cannot be combined with hash_seed or metrics",
                location="hash_seeds",
                hint="score under one hash seed with hash_seed (and metrics), or over several with hash_seeds",
            )
        return cls(mode, bool(transliterate), bool(metrics), seed, seeds)

    def score(self, record: Any) -> dict[str, Any]:
        """:func:`score_record` (or :func:`score_over_seeds` with ``hash_seeds``) of one parsed record."""
        if self.hash_seeds is not None:
            return score_over_seeds(record, self.hash_seeds, compat=self.compat, transliterate=self.transliterate)
        return score_record(
            record,
            compat=self.compat,
            transliterate=self.transliterate,
            metrics=self.metrics,
            hash_seed=self.hash_seed,
        )

    def score_text(self, text: str) -> dict[str, Any]:
        """:meth:`score` of one JSON Lines record as text.

        Raises:
            InvalidInputError: the text is not JSON (``not valid JSON (...)``) or the record is bad.
        """
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise InvalidInputError("not valid JSON (nested too deeply)") from None
        check_unicode(record)
        return self.score(record)


def _score_lines(
    chunk: list[tuple[int, str]], options: ScoreOptions
) -> list[tuple[int, dict[str, Any] | None, str | None]]:
    """Score a chunk of (line number, text); a bad record yields its error message instead of a result."""
    out: list[tuple[int, dict[str, Any] | None, str | None]] = []
    for line, text in chunk:
        try:
            out.append((line, options.score_text(text), None))
        except NormaError as exc:
            out.append((line, None, str(exc)))
    return out


def _chunks(path: Path, max_bytes: int) -> Iterator[list[tuple[int, str]]]:
    """Records in chunks; on a line that cannot be read, the records before it are yielded, then the error raised."""
    chunk: list[tuple[int, str]] = []
    try:
        for number, text in read_lines(path, max_bytes):
            chunk.append((number, text))
            if len(chunk) == _CHUNK:
                yield chunk
                chunk = []
    except NormaError:
        if chunk:
            yield chunk
        raise
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
    max_record_bytes: int = MAX_RECORD_BYTES,
    hash_seed: int | None = None,
    hash_seeds: Sequence[int] | None = None,
) -> Iterator[ScoredRecord]:
    """Score every record of a JSON Lines file, yielding results in file order as they are ready.

    With ``workers > 1`` chunks of records are scored in a process pool (a bounded number in flight, so memory
    stays flat on large files). The first bad record stops the run: everything before it has been yielded, then
    :class:`~norma.errors.InvalidInputError` names the file and the line. A line over ``max_record_bytes`` is a
    :class:`~norma.errors.LimitExceededError`, raised before it is read whole.

    Each result is :func:`score_record`'s under ``hash_seed``; with ``hash_seeds`` (a list of ``PYTHONHASHSEED``
    values; not with ``hash_seed`` or ``metrics``) it is :func:`score_over_seeds`'s.
    """
    source = Path(path)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidInputError(f"workers must be an integer >= 1, not {workers!r}", location="workers")
    options = ScoreOptions.make(
        compat=compat, transliterate=transliterate, metrics=metrics, hash_seed=hash_seed, hash_seeds=hash_seeds
    )
    if not source.is_file():
        raise InvalidInputError("no such file", source=str(source), hint="pass a JSON Lines file of records")
    if workers == 1:
        for chunk in _chunks(source, max_record_bytes):
            yield from _unpack(source, _score_lines(chunk, options))
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: deque[Future[list[tuple[int, dict[str, Any] | None, str | None]]]] = deque()
        chunks = _chunks(source, max_record_bytes)
        unreadable: NormaError | None = None
        try:
            while unreadable is None:
                try:
                    chunk = next(chunks)
                except StopIteration:
                    break
                except NormaError as exc:  # a line that cannot be read: score what came before it, then raise
                    unreadable = exc
                    break
                pending.append(pool.submit(_score_lines, chunk, options))
                if len(pending) >= 4 * workers:
                    yield from _unpack(source, pending.popleft().result())
            while pending:
                yield from _unpack(source, pending.popleft().result())
            if unreadable is not None:
                raise unreadable
        finally:
            for future in pending:
                future.cancel()
