"""The Ray engine: Ray Data ``map_batches`` over an actor pool, each actor starting the job once.

Ray is an optional dependency (``pip install 'norma-rules[ray]'``), imported only here and only when the engine runs;
without it :func:`import_ray` raises :class:`~norma.errors.MissingDependencyError` with that command. Records
travel as JSON text in one string column (the index beside it), so that Arrow never reshapes a record (nested
mappings whose keys differ from one record to the next would become structs padded with nulls); results come back
the same way and are put back in input order on the driver.

:func:`map_dataset` is for data that is already on the cluster: a Ray Dataset read where it lives
(``ray.data.read_json`` / ``read_parquet``), mapped to a Dataset of results (``write_json`` / ``write_parquet``).
"""

from __future__ import annotations

import json
import logging
import math
import os
import pickle
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from norma.batch._job import BatchRecord, BatchResult, Job
from norma.errors import MissingDependencyError

__all__ = ["RAY_INSTALL", "drop_nulls", "import_ray", "map_dataset", "ray_cpus", "run_on_ray", "start_ray"]

RAY_INSTALL = "pip install 'norma-rules[ray]'"
"""The command that installs what the Ray engine needs."""
_NICENESS_ENV = "RAY_worker_niceness"
"""Ray's setting of its workers' niceness (``worker_niceness``), read by each worker from its environment."""


def import_ray() -> Any:
    """The ``ray`` module with ``ray.data`` loaded, or :class:`MissingDependencyError` with the install hint."""
    try:
        with _quiet():
            import ray
            import ray.data
    except ImportError:
        raise MissingDependencyError("the Ray engine (--engine ray)", install=RAY_INSTALL, extra="ray") from None
    return ray


@contextmanager
def _quiet() -> Iterator[None]:
    """Ray's own deprecation warnings and INFO logs are not norma's user's business."""
    loggers = [logging.getLogger(name) for name in ("ray", "ray.data")]
    levels = [logger.level for logger in loggers]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        for logger in loggers:
            logger.setLevel(logging.ERROR)
        try:
            yield
        finally:
            for logger, level in zip(loggers, levels, strict=True):
                logger.setLevel(level)


def start_ray(address: str | None = None) -> Any:
    """Connect to Ray once per process: the cluster at ``address`` (``auto``, ``ray://host:10001``), else a local
    one started here; a Ray already initialised in this process (``ray.init`` by the caller) is used as it is.

    On a cluster, the ``norma`` package this process runs is shipped to the workers (Ray's ``py_modules``), so that
    every node runs the driver's norma, whatever is installed there; its dependencies (and the embedding model's
    package) must be installed on the nodes (``pip install 'norma-rules[ray]'``). A local cluster's workers import the
    same norma through ``PYTHONPATH`` and run at this process's priority (``RAY_worker_niceness=0``, unless this
    process's environment says otherwise; Ray's default, 15, lets any other work on the machine starve them): both
    given to the workers in the job's ``runtime_env``, never written to this process's environment.
    """
    ray = import_ray()
    with _quiet():
        if not ray.is_initialized():
            package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the norma package itself
            options: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.ERROR,
            }
            if address:  # a cluster's nodes get this norma shipped (their own installs may differ)
                options["address"] = address
                options["runtime_env"] = {"py_modules": [package], "excludes": ["__pycache__"]}
            else:  # a new local cluster (not one `ray start` left running: that is --ray-address auto); its workers
                # import this norma, at the priority of this process (as a pool's)
                options["address"] = "local"
                options["runtime_env"] = {"env_vars": local_worker_env(package)}
            ray.init(**options)
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        context.enable_auto_log_stats = False
    return ray


def local_worker_env(package: str) -> dict[str, str]:
    """The environment variables a local cluster's workers get on top of this process's: ``PYTHONPATH`` with the
    folder of ``package`` (the norma this process runs) first, and ``RAY_worker_niceness`` (default 0)."""
    parent = os.path.dirname(package)
    paths = [parent, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    niceness = os.environ.get(_NICENESS_ENV, "").strip() or "0"
    return {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)), _NICENESS_ENV: niceness}


def ray_cpus(address: str | None = None) -> int:
    """CPUs of the cluster (started or joined as :func:`start_ray` does)."""
    ray = start_ray(address)
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def drop_nulls(value: Any) -> Any:
    """``value`` without the mapping entries whose value is ``None``, at every depth (what Arrow added when it
    gave records with different keys one struct type)."""
    if isinstance(value, dict):
        return {key: drop_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [drop_nulls(item) for item in value]
    return value


class _Actor:
    """One Ray Data actor: starts the job once, then maps rows of pickled chunks of ``(index, payload)`` to rows of
    pickled ``(index, result, error)`` (or, for :func:`map_dataset`, rows of records to ``{result, error}`` rows)."""

    def __init__(self, job: Job, raw: bool = False, json_column: str | None = None, nulls: bool = False) -> None:
        self._work = job.start()
        self._raw = raw
        self._column = json_column
        self._nulls = nulls

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        rows = batch.to_pylist()
        if self._raw:  # rows of a user's dataset: each row is a record, or holds one as JSON text
            if self._column is not None:
                records = [json.loads(row[self._column]) for row in rows]
            else:
                records = rows if self._nulls else [drop_nulls(row) for row in rows]
            outcomes = self._work(records)
            return pa.table(
                {
                    "result": [None if r is None else json.dumps(r, ensure_ascii=False) for r, _ in outcomes],
                    "error": [e for _, e in outcomes],
                }
            )
        blobs = []
        for row in rows:
            chunk = pickle.loads(row["chunk"])
            outcomes = self._work([payload for _, payload in chunk])
            blobs.append(pickle.dumps([(index, r, e) for (index, _), (r, e) in zip(chunk, outcomes, strict=True)]))
        return pa.table({"out": pa.array(blobs, type=pa.binary())})


def _pool(ray: Any, workers: int) -> Any:
    return ray.data.ActorPoolStrategy(size=max(1, min(workers, int(ray.cluster_resources().get("CPU", 1)))))


def run_on_ray(
    job: Job,
    records: Sequence[BatchRecord],
    *,
    workers: int,
    address: str | None = None,
    on_result: Callable[[BatchResult], None] | None = None,
) -> list[BatchResult]:
    """Results of ``job`` over ``records`` computed by ``workers`` Ray actors (at most the cluster's CPUs).

    Each row of the Dataset is one chunk of ``job.batch_size`` records (pickled), and each actor call maps one
    chunk: Ray Data's own work is then per chunk, not per record.
    """
    ray = start_ray(address)
    where = {record.index: record.where for record in records}
    # about 8 chunks per actor (Ray's cost is per chunk: a task, two object-store transfers), at most 64 batches
    size = min(max(1, math.ceil(len(records) / (8 * max(1, workers)))), 64 * max(1, job.batch_size))
    rows = [
        {"chunk": pickle.dumps([(record.index, record.payload) for record in records[start : start + size]])}
        for start in range(0, len(records), size)
    ]
    out: list[BatchResult] = []
    with _quiet():
        dataset = ray.data.from_items(rows, override_num_blocks=len(rows))
        mapped = dataset.map_batches(
            _Actor,
            fn_constructor_args=(job,),
            compute=_pool(ray, min(workers, len(rows))),
            batch_size=1,
            batch_format="pyarrow",
            max_restarts=0,  # the job is small and rebuilt from its options; no restart from the object store
        )
        for batch in mapped.iter_batches(batch_format="pyarrow", batch_size=None):
            for blob in batch.column("out").to_pylist():
                for index, result, error in pickle.loads(blob):
                    item = BatchResult(index, where[index], result, error)
                    out.append(item)
                    if on_result is not None:
                        on_result(item)
    return sorted(out, key=lambda item: item.index)


def map_dataset(
    job: Job,
    dataset: Any,
    *,
    workers: int | None = None,
    json_column: str | None = None,
    keep_nulls: bool = False,
) -> Any:
    """A Ray Dataset of ``{result, error}`` rows (``result`` as JSON text) for the records of ``dataset``.

    Each row of ``dataset`` is one record (read where the data lives with ``ray.data.read_parquet`` or
    ``read_json``), or, with ``json_column``, holds one as JSON text in that column (``ray.data.read_text`` of a
    JSON Lines file gives ``text``): the exact record, where Arrow's schema would pad records whose mappings have
    different keys with nulls. Those nulls are dropped from each row unless ``keep_nulls``. ``workers`` actors
    (default: the cluster's CPUs) each start the job once. Write the result with ``write_json`` /
    ``write_parquet``.
    """
    ray = start_ray(None)
    job.check()
    with _quiet():
        return dataset.map_batches(
            _Actor,
            fn_constructor_args=(job, True, json_column, keep_nulls),
            compute=_pool(ray, workers or ray_cpus()),
            batch_size=max(1, job.batch_size),
            batch_format="pyarrow",
            max_restarts=0,  # the job is small and rebuilt from its options; no restart from the object store
        )
