"""Batch work on one machine or many: one record-level job per batch command, run in this process, in a local
process pool or on Ray, with the same results; shards for CI and the merge of their outputs.

* Jobs (:class:`NamesJob`, :class:`AuditJob`, :class:`MatchJob`, :class:`CheckJob` (turns), :class:`RubricJob`,
  :class:`EmbedJob`): frozen, picklable options whose ``start()`` loads what is heavy once per worker and returns a
  function over a list of records (:class:`Job`).
* Engines: :func:`run_job` (``engine="local" | "pool" | "ray"``), :func:`plan_engine` (``workers="auto"``),
  :func:`map_dataset` for a Ray Dataset already on a cluster; Ray is optional (``pip install 'norma-rules[ray]'``).
* Shards and merge: :class:`Shard` (``--shard i/N``), :func:`merge_outputs` (``norma merge``).
* Inputs and outputs: JSON Lines or Parquet (:func:`parquet_rows`, :func:`write_rows`).

See docs/scale.md.
"""

from __future__ import annotations

from norma.batch._audit import AuditJob
from norma.batch._check import CheckedTurn, CheckJob, turn_payload
from norma.batch._embed import EmbedJob, rule_text_payloads, rule_vectors
from norma.batch._engine import ENGINES, Engine, check_engine, run_job
from norma.batch._io import (
    MAX_LINE_BYTES,
    is_parquet,
    json_records,
    parquet_rows,
    require_parquet,
    text_lines,
    write_rows,
)
from norma.batch._job import BatchRecord, BatchResult, Job, Outcome, Worker, per_record
from norma.batch._match import MatchJob, match_payload
from norma.batch._merge import (
    MERGE_FORMATS,
    MergedOutput,
    MergeFormat,
    audit_shard_json,
    detect_format,
    merge_outputs,
)
from norma.batch._names import NamesJob
from norma.batch._plan import EnginePlan, Workers, available_cpus, check_workers, plan_engine
from norma.batch._ray import RAY_INSTALL, import_ray, map_dataset, start_ray
from norma.batch._rubrics import RubricJob
from norma.batch._rulebook import import_rulebook_with
from norma.batch._shard import Shard
from norma.batch._summaries import match_document, names_document, rubric_document, seed_spread_document

__all__ = [
    "AuditJob",
    "BatchRecord",
    "BatchResult",
    "CheckJob",
    "CheckedTurn",
    "ENGINES",
    "EmbedJob",
    "Engine",
    "EnginePlan",
    "Job",
    "MAX_LINE_BYTES",
    "MERGE_FORMATS",
    "MatchJob",
    "MergeFormat",
    "MergedOutput",
    "NamesJob",
    "Outcome",
    "RAY_INSTALL",
    "RubricJob",
    "Shard",
    "Worker",
    "Workers",
    "audit_shard_json",
    "available_cpus",
    "check_engine",
    "check_workers",
    "detect_format",
    "import_ray",
    "import_rulebook_with",
    "is_parquet",
    "json_records",
    "map_dataset",
    "match_document",
    "match_payload",
    "merge_outputs",
    "names_document",
    "parquet_rows",
    "per_record",
    "plan_engine",
    "require_parquet",
    "rubric_document",
    "rule_text_payloads",
    "rule_vectors",
    "run_job",
    "seed_spread_document",
    "start_ray",
    "text_lines",
    "turn_payload",
    "write_rows",
]
