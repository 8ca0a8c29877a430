"""Running a job over records: in this process, in a local process pool, or on Ray; one result list either way.

:func:`run_job` sends the records in chunks, collects one :class:`BatchResult` per record and returns them in
input order, whatever the engine. A record whose payload is already an error (it could not be read) is not sent:
its result carries that error.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Literal

from norma.batch._job import BatchRecord, BatchResult, Job, Outcome, StreamWorker, Worker
from norma.errors import InvalidInputError, NormaError

__all__ = ["ENGINES", "Engine", "check_engine", "run_job"]

Engine = Literal["local", "pool", "ray"]
ENGINES: tuple[Engine, ...] = ("local", "pool", "ray")
"""``local``: this process; ``pool``: a local process pool; ``ray``: Ray Data actors (``pip install
'norma-rules[ray]'``)."""

_STARTED: dict[str, Worker] = {}


def check_engine(engine: object) -> Engine:
    """``engine`` if it is one of :data:`ENGINES`, else :class:`InvalidInputError`."""
    for known in ENGINES:
        if engine == known:
            return known
    raise InvalidInputError(f"unknown engine {engine!r}", location="engine", hint=f"one of {', '.join(ENGINES)}")


def _chunk_size(job: Job, records: int, workers: int) -> int:
    return max(1, min(job.batch_size, records // (workers * 4) or 1))


def _results(chunk: Sequence[BatchRecord], outcomes: Iterable[Outcome]) -> Iterator[BatchResult]:
    """One result per record of ``chunk``, as the worker's outcomes come (one at a time from a
    :class:`StreamWorker`)."""
    records = iter(chunk)
    for result, error in outcomes:
        record = next(records, None)
        if record is None:  # pragma: no cover - a worker bug, not user input
            raise RuntimeError(f"a worker returned more outcomes than the {len(chunk)} records it was given")
        yield BatchResult(record.index, record.where, result, error)
    if next(records, None) is not None:  # pragma: no cover - a worker bug, not user input
        raise RuntimeError(f"a worker returned fewer outcomes than the {len(chunk)} records it was given")


_INTERRUPTED: list[bool] = []
"""Set in a pool worker once it was sent SIGINT: the chunk it runs stops and it runs no other."""


def _interrupt_worker(signum: int, frame: Any) -> None:
    _INTERRUPTED.append(True)
    if "chunk" in _STARTED:  # inside a chunk: stop it (its error goes back to the parent as a whole message)
        raise KeyboardInterrupt


def _init_pool_worker(job: Job) -> None:
    # Ctrl-C in a terminal reaches the whole process group, and the parent sends SIGINT to its workers when it is
    # interrupted: a worker stops its chunk then, never while it writes a result (no traceback, no torn message).
    # Until here SIGINT is ignored (the parent started the worker so).
    signal.signal(signal.SIGINT, _interrupt_worker)
    _STARTED["worker"] = job.start()


def _pool_chunk(payloads: list[Any]) -> list[Outcome]:
    _STARTED["chunk"] = _STARTED["worker"]
    try:
        if _INTERRUPTED:
            raise KeyboardInterrupt
        return _STARTED["worker"](payloads)
    finally:
        del _STARTED["chunk"]


def _local(job: Job, todo: list[BatchRecord], on_result: Callable[[BatchResult], None] | None) -> list[BatchResult]:
    work = job.start()
    outcomes = work.stream if isinstance(work, StreamWorker) else work  # each result handed on as soon as it exists
    out: list[BatchResult] = []
    size = max(1, job.batch_size)
    for start in range(0, len(todo), size):
        chunk = todo[start : start + size]
        for item in _results(chunk, outcomes([record.payload for record in chunk])):
            out.append(item)
            if on_result is not None:
                on_result(item)
    return out


def _pool(
    job: Job, todo: list[BatchRecord], workers: int, on_result: Callable[[BatchResult], None] | None
) -> list[BatchResult]:
    methods = multiprocessing.get_all_start_methods()
    method = "fork" if job.fork_safe and "fork" in methods else "spawn"
    size = _chunk_size(job, len(todo), workers)
    chunks = [todo[start : start + size] for start in range(0, len(todo), size)]
    out: list[BatchResult] = []
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context(method),
        initializer=_init_pool_worker,
        initargs=(job,),
    )
    try:
        with _sigint_ignored():  # the workers start (on the first submits) ignoring Ctrl-C until they are ready
            futures: list[Future[list[Outcome]]] = [
                pool.submit(_pool_chunk, [record.payload for record in chunk]) for chunk in chunks
            ]
        for chunk, future in zip(chunks, futures, strict=True):
            for item in _results(chunk, future.result()):
                out.append(item)
                if on_result is not None:
                    on_result(item)
    except BaseException:  # Ctrl-C, a worker's error: stop now, finishing neither the running chunks nor the queued
        _stop(pool)
        raise
    pool.shutdown(wait=True)
    return out


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored in this process (and the processes it starts) while the block runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


_STOP_GRACE_S = 0.5
"""How long an interrupted worker has to stop its chunk and exit before it is terminated (one still starting or
ending, say): an interrupted chunk stops within a few hundredths of a second."""


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` at once: its queued work cancelled, the chunks its workers run interrupted (SIGINT), a worker
    still alive after :data:`_STOP_GRACE_S` terminated."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # the executor's workers, by pid
    manager = getattr(pool, "_executor_manager_thread", None)
    for process in processes:
        if process.pid is not None and process.is_alive():
            with contextlib.suppress(OSError):
                os.kill(process.pid, signal.SIGINT)
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + _STOP_GRACE_S
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.terminate()
            process.join(timeout=_STOP_GRACE_S)
    if isinstance(manager, threading.Thread):  # it sees the workers gone and ends; joined, it is not woken at exit
        manager.join(timeout=_STOP_GRACE_S)


def run_job(
    job: Job,
    records: Sequence[BatchRecord],
    *,
    engine: Engine = "local",
    workers: int = 1,
    ray_address: str | None = None,
    on_result: Callable[[BatchResult], None] | None = None,
) -> list[BatchResult]:
    """Run ``job`` over ``records`` and return one result per record, in input order.

    Args:
        engine: ``local`` (this process), ``pool`` (``workers`` processes) or ``ray`` (``workers`` Ray actors, each
            starting the job once; ``ray_address`` joins an existing cluster, else a local one is started).
        on_result: called as each result arrives (for a progress bar); in the ``ray`` engine not in input order.

    Raises:
        InvalidInputError: an unknown engine or a worker count below 1; what :meth:`Job.check` raises.
        MissingDependencyError: ``engine="ray"`` without Ray installed.
    """
    chosen = check_engine(engine)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidInputError(f"workers must be an integer >= 1, not {workers!r}", location="workers")
    done: list[BatchResult] = []
    todo: list[BatchRecord] = []
    for record in records:
        if isinstance(record.payload, NormaError):
            done.append(BatchResult(record.index, record.where, error=str(record.payload)))
        else:
            todo.append(record)
    for item in done:
        if on_result is not None:
            on_result(item)
    if not todo:
        ran: list[BatchResult] = []
    elif chosen == "ray":
        from norma.batch._ray import run_on_ray

        job.check()
        ran = run_on_ray(job, todo, workers=workers, address=ray_address, on_result=on_result)
    elif chosen == "pool" and workers > 1 and len(todo) > 1:
        job.check()
        ran = _pool(job, todo, workers, on_result)
    else:
        ran = _local(job, todo, on_result)
    return sorted([*done, *ran], key=lambda item: item.index)
