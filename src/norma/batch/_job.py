"""What every batch job is: picklable options that start a worker, and the records and results it handles."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from norma.errors import NormaError

__all__ = ["BatchRecord", "BatchResult", "Job", "Outcome", "StreamWorker", "Worker", "per_record"]

Outcome = tuple[Any, str | None]
"""What a worker returns for one record: ``(result, None)``, or ``(None, error message)``; a result is plain JSON
values, or a picklable typed value the writer serialises (the check job's :class:`~norma.batch.CheckedTurn`)."""

Worker = Callable[[Sequence[Any]], list[Outcome]]
"""A started job: payloads in, one :data:`Outcome` per payload out, in the same order."""


class StreamWorker:
    """A :data:`Worker` whose outcomes can also be taken one at a time, each as soon as its record is done
    (:attr:`stream`): the local engine hands each result on at once, so that a batch interrupted inside a chunk keeps
    the records it finished (``norma check --batch`` writes each turn as it is checked). Called, it returns the
    whole list, as every worker does (process pools and Ray send lists)."""

    def __init__(self, stream: Callable[[Sequence[Any]], Iterator[Outcome]]) -> None:
        self.stream = stream
        """Payloads in, an iterator of one :data:`Outcome` per payload out, in the same order."""

    def __call__(self, payloads: Sequence[Any]) -> list[Outcome]:
        return list(self.stream(payloads))


@runtime_checkable
class Job(Protocol):
    """One kind of batch work (score names, audit, match, evaluate a rubric, embed texts).

    A job is a frozen value of plain options, picklable, with no state of its own: :meth:`start` loads whatever
    is heavy (documents, a rulebook's matcher, the embedding model) once per worker, in the worker, and returns
    the function that maps a list of payloads to outcomes. Running the same job in this process, in a process pool
    or in Ray actors gives the same outcomes, because the outcome of a record depends on the job's options and the
    record only (the names hash seed is one of the options).
    """

    @property
    def fork_safe(self) -> bool:
        """Whether a process pool may fork this process to run it (no model threads to inherit)."""
        ...

    @property
    def uses_all_cores(self) -> bool:
        """Whether one worker already keeps every core busy (the embedding model runs multi-threaded)."""
        ...

    @property
    def batch_size(self) -> int:
        """Records per call of the worker (the embedding model works on batches)."""
        ...

    @property
    def record_seconds(self) -> float:
        """A rough cost of one record on one core, for ``workers="auto"``."""
        ...

    def check(self) -> None:
        """Raise the :class:`~norma.errors.NormaError` a worker would raise at start, here and now."""
        ...

    def start(self) -> Worker:
        """Load what the job needs and return its worker function."""
        ...


@dataclass(frozen=True)
class BatchRecord:
    """One input record: where it came from and what the job gets."""

    index: int
    """0-based position in the whole input (not in a shard)."""
    where: str
    """Its place in the input for messages (``file:line``, ``line 3``, ``row 7``)."""
    payload: Any
    """What the job's worker receives (plain JSON values), or the :class:`NormaError` of reading it."""


@dataclass(frozen=True)
class BatchResult:
    """The outcome of one record."""

    index: int
    """0-based position in the whole input."""
    where: str
    """As in :class:`BatchRecord`."""
    result: Any = None
    """What the job returned (plain JSON values, or a typed value such as a
    :class:`~norma.batch.CheckedTurn`), or ``None`` after an error."""
    error: str | None = None
    """Why the record has no result (its :class:`NormaError` as text)."""


def per_record(function: Callable[[Any], dict[str, Any]]) -> Worker:
    """A worker that calls ``function`` on each payload; a :class:`NormaError` becomes that record's error."""

    def work(payloads: Sequence[Any]) -> list[Outcome]:
        out: list[Outcome] = []
        for payload in payloads:
            try:
                out.append((function(payload), None))
            except NormaError as exc:
                out.append((None, str(exc)))
        return out

    return work
