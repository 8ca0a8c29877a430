"""Which engine and how many workers: ``workers="auto"`` decides from the batch's size and the job's cost.

A process pool pays for itself only when there is enough work: starting the workers costs a fork (cheap) or a
fresh interpreter that imports norma and loads the job (a second or more), and a job whose model already runs on
every core (the embedding model is multi-threaded) gains nothing from more processes on the same cores. ``auto``
keeps one process in those cases, so it is never slower than one worker by more than noise.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Literal

from norma.batch._engine import Engine, check_engine
from norma.batch._job import Job
from norma.errors import InvalidInputError

__all__ = ["EnginePlan", "Workers", "available_cpus", "check_workers", "plan_engine"]

Workers = int | Literal["auto"]
"""A worker count, or ``"auto"``."""

FORK_START_SECONDS = 0.05
"""What starting a forked worker costs (measured: tens of milliseconds)."""
SPAWN_START_SECONDS = 1.5
"""What starting a fresh worker that imports norma and loads the job costs (measured: 1-2 s on 2 cores)."""


@dataclass(frozen=True)
class EnginePlan:
    """The engine and the worker count a batch runs with, and why (what ``-v`` prints)."""

    engine: Engine
    workers: int
    reason: str

    def describe(self) -> str:
        """One line for people: ``engine pool, 2 workers: ...``."""
        unit = "actor" if self.engine == "ray" else ("worker" if self.engine == "pool" else "process")
        return f"engine {self.engine}, {self.workers} {unit}{'s' if self.workers != 1 else ''}: {self.reason}"


def available_cpus() -> int:
    """CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def check_workers(workers: object) -> Workers:
    """``workers`` as an int >= 1 or ``"auto"`` (also from text such as ``"2"``)."""
    if workers == "auto":
        return "auto"
    if isinstance(workers, str) and workers.strip().isdigit():
        workers = int(workers)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidInputError(
            f"workers must be an integer >= 1 or 'auto', not {workers!r}", location="workers", hint="e.g. 2 or auto"
        )
    return workers


def _auto_local(job: Job, records: int, cpus: int, most: int | None) -> tuple[int, str]:
    """``(workers, why)``: ``cpus`` available, at most ``most`` workers (``--workers N`` without ``--engine``)."""
    limit = cpus if most is None else most
    force = "" if most is None else "; --engine pool forces the pool"
    if limit < 2:
        return 1, "one CPU available"
    if job.uses_all_cores:
        return 1, f"the embedding model already uses every core{force}"
    start = FORK_START_SECONDS if job.fork_safe else SPAWN_START_SECONDS
    work = records * job.record_seconds
    if work < 2 * start * limit / (limit - 1):  # the pool takes start + work / limit: twice the break-even
        return 1, f"{records:,} records (about {work:.1f} s of work) do not pay for starting {limit} workers{force}"
    count = min(limit, math.ceil(records / max(1, job.batch_size)))
    return count, f"{records:,} records (about {work:.0f} s of work) over {count} workers ({cpus} CPUs)"


def plan_engine(
    job: Job,
    records: int,
    *,
    engine: Engine | None = None,
    workers: Workers = "auto",
    ray_address: str | None = None,
) -> EnginePlan:
    """The engine and worker count for ``records`` records of ``job``.

    ``workers="auto"`` decides the count: a pool that would not pay for itself (a small batch, or a job whose
    model already runs on every core) becomes ``local``; for ``ray``, one actor per CPU of the cluster, which this
    starts or joins. With ``engine=None``, ``workers=N`` is an upper bound decided the same way (so that asking
    for more workers is never slower than one); ``engine="pool"`` runs exactly ``N``.

    Raises:
        InvalidInputError: an unknown engine, a bad worker count, ``local`` with more than one worker.
    """
    chosen = None if engine is None else check_engine(engine)
    count = check_workers(workers)
    if chosen == "ray":
        if count == "auto":
            from norma.batch._ray import ray_cpus

            cpus = ray_cpus(ray_address)
            return EnginePlan("ray", cpus, f"one actor per CPU of the Ray cluster ({cpus})")
        return EnginePlan("ray", count, "as asked")
    if chosen == "local":
        if count not in ("auto", 1):
            raise InvalidInputError(
                f"the local engine runs in one process, not {count}", location="workers", hint="use --engine pool"
            )
        return EnginePlan("local", 1, "as asked")
    if count == 1:
        return EnginePlan("local", 1, "one worker asked for")
    if chosen == "pool" and count != "auto":
        return EnginePlan("pool", count, "as asked")
    auto, why = _auto_local(job, records, available_cpus(), None if count == "auto" else count)
    return EnginePlan("pool" if auto > 1 else "local", auto, why)
