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

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.batch._audit import AuditJob as AuditJob
    from norma.batch._check import CheckedTurn as CheckedTurn
    from norma.batch._check import CheckJob as CheckJob
    from norma.batch._check import turn_payload as turn_payload
    from norma.batch._embed import EmbedJob as EmbedJob
    from norma.batch._embed import rule_text_payloads as rule_text_payloads
    from norma.batch._embed import rule_vectors as rule_vectors
    from norma.batch._engine import ENGINES as ENGINES
    from norma.batch._engine import Engine as Engine
    from norma.batch._engine import check_engine as check_engine
    from norma.batch._engine import run_job as run_job
    from norma.batch._io import MAX_LINE_BYTES as MAX_LINE_BYTES
    from norma.batch._io import is_parquet as is_parquet
    from norma.batch._io import json_records as json_records
    from norma.batch._io import parquet_bytes as parquet_bytes
    from norma.batch._io import parquet_rows as parquet_rows
    from norma.batch._io import require_parquet as require_parquet
    from norma.batch._io import text_lines as text_lines
    from norma.batch._io import write_rows as write_rows
    from norma.batch._job import BatchRecord as BatchRecord
    from norma.batch._job import BatchResult as BatchResult
    from norma.batch._job import Job as Job
    from norma.batch._job import Outcome as Outcome
    from norma.batch._job import Worker as Worker
    from norma.batch._job import per_record as per_record
    from norma.batch._match import MatchJob as MatchJob
    from norma.batch._match import match_payload as match_payload
    from norma.batch._merge import MERGE_FORMATS as MERGE_FORMATS
    from norma.batch._merge import MergedOutput as MergedOutput
    from norma.batch._merge import MergeFormat as MergeFormat
    from norma.batch._merge import audit_shard_json as audit_shard_json
    from norma.batch._merge import detect_format as detect_format
    from norma.batch._merge import merge_outputs as merge_outputs
    from norma.batch._names import NamesJob as NamesJob
    from norma.batch._plan import EnginePlan as EnginePlan
    from norma.batch._plan import Workers as Workers
    from norma.batch._plan import available_cpus as available_cpus
    from norma.batch._plan import check_workers as check_workers
    from norma.batch._plan import plan_engine as plan_engine
    from norma.batch._ray import RAY_INSTALL as RAY_INSTALL
    from norma.batch._ray import import_ray as import_ray
    from norma.batch._ray import map_dataset as map_dataset
    from norma.batch._ray import start_ray as start_ray
    from norma.batch._rubrics import RubricJob as RubricJob
    from norma.batch._rulebook import import_rulebook_with as import_rulebook_with
    from norma.batch._shard import Shard as Shard
    from norma.batch._summaries import match_document as match_document
    from norma.batch._summaries import names_document as names_document
    from norma.batch._summaries import rubric_document as rubric_document
    from norma.batch._summaries import seed_spread_document as seed_spread_document

_PUBLIC: dict[str, str] = {
    "AuditJob": "_audit",
    "BatchRecord": "_job",
    "CheckJob": "_check",
    "EmbedJob": "_embed",
    "import_rulebook_with": "_rulebook",
    "Job": "_job",
    "map_dataset": "_ray",
    "MatchJob": "_match",
    "merge_outputs": "_merge",
    "NamesJob": "_names",
    "plan_engine": "_plan",
    "RubricJob": "_rubrics",
    "run_job": "_engine",
    "Shard": "_shard",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "audit_shard_json": "_merge",
    "available_cpus": "_plan",
    "BatchResult": "_job",
    "check_engine": "_engine",
    "CheckedTurn": "_check",
    "check_workers": "_plan",
    "detect_format": "_merge",
    "Engine": "_engine",
    "EnginePlan": "_plan",
    "ENGINES": "_engine",
    "import_ray": "_ray",
    "is_parquet": "_io",
    "json_records": "_io",
    "match_document": "_summaries",
    "match_payload": "_match",
    "MAX_LINE_BYTES": "_io",
    "MERGE_FORMATS": "_merge",
    "MergedOutput": "_merge",
    "MergeFormat": "_merge",
    "names_document": "_summaries",
    "Outcome": "_job",
    "parquet_bytes": "_io",
    "parquet_rows": "_io",
    "per_record": "_job",
    "RAY_INSTALL": "_ray",
    "require_parquet": "_io",
    "rubric_document": "_summaries",
    "rule_text_payloads": "_embed",
    "rule_vectors": "_embed",
    "seed_spread_document": "_summaries",
    "start_ray": "_ray",
    "text_lines": "_io",
    "turn_payload": "_check",
    "Worker": "_job",
    "Workers": "_plan",
    "write_rows": "_io",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
