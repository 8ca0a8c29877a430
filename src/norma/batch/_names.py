"""Scoring name-variation records as a batch job (:class:`NamesJob`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from norma._safety import check_unicode
from norma.batch._job import Worker, per_record
from norma.names import ScoreOptions

__all__ = ["NamesJob"]


@dataclass(frozen=True)
class NamesJob:
    """Score ``{name, variations, labels}`` records given as JSON text (one JSON Lines line each).

    The result of a record is :func:`norma.names.score_record`'s (or :func:`~norma.names.score_over_seeds`'s with
    ``hash_seeds``); a line that is not JSON or a bad record is that record's error. The hash seed is part of the
    options, so every worker scores under the same one. With ``hash_seed=None`` (each process's own ``hash()``)
    results differ between processes: use it with the ``local`` engine only.
    """

    options: ScoreOptions
    """The checked scoring options (:meth:`norma.names.ScoreOptions.make`)."""

    fork_safe = True
    uses_all_cores = False
    batch_size = 256
    record_seconds = 0.00015  # about 8,000 records a second on one core

    @classmethod
    def make(cls, *, hash_seed: int | None = 0, hash_seeds: Sequence[int] | None = None, **options: Any) -> NamesJob:
        """A job with checked options: the keywords of :meth:`norma.names.ScoreOptions.make` (``compat``,
        ``transliterate``, ``metrics``), the hash seed defaulting to 0 (and unused with ``hash_seeds``)."""
        seed = None if hash_seeds is not None else hash_seed
        return cls(ScoreOptions.make(hash_seed=seed, hash_seeds=hash_seeds, **options))

    def check(self) -> None:
        """Nothing to load: the options were checked when made."""

    def start(self) -> Worker:
        """Score each payload: a record's JSON text (:meth:`~norma.names.ScoreOptions.score_text`), or the record
        itself (a row of a Ray Dataset)."""
        options = self.options

        def score(payload: Any) -> dict[str, Any]:
            if isinstance(payload, str):
                return options.score_text(payload)
            check_unicode(payload)
            return options.score(payload)

        return per_record(score)
