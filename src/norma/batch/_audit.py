"""Auditing JSON Lines requests as a batch job (:class:`AuditJob`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from norma.audit import AuditConfig, analyze, load_documents
from norma.batch._job import Worker, per_record
from norma.errors import NormaError

__all__ = ["AuditJob"]


@dataclass(frozen=True)
class AuditJob:
    """Audit requests against a folder of normative documents.

    The payload of a record is ``[where, request]`` (``where`` names the record in errors, e.g. ``file:line``), or
    the request mapping alone;
    its result is the :class:`~norma.audit.AuditReport` as JSON values (``model_dump(mode="json")``, which
    ``AuditReport.model_validate`` turns back into the same report). Each worker loads the documents and the
    configuration once, and the embedding model on first need.
    """

    documents: str | None
    """The documents folder (the same path on every worker), or ``None``."""
    config_json: str = "{}"
    """The :class:`~norma.audit.AuditConfig` as JSON text."""

    fork_safe = False  # the embedding model runs onnxruntime threads: never fork a process that may hold them
    batch_size = 16

    @classmethod
    def make(cls, documents: str | os.PathLike[str] | None, config: AuditConfig | None = None) -> AuditJob:
        """A job for ``documents`` (a folder) and ``config`` (default: the default configuration)."""
        cfg = config or AuditConfig()
        folder = None if documents is None else os.fspath(documents)
        return cls(folder, json.dumps(cfg.model_dump(mode="json"), sort_keys=True))

    @property
    def config(self) -> AuditConfig:
        """The configuration."""
        return AuditConfig.parse(json.loads(self.config_json))

    @property
    def record_seconds(self) -> float:
        """About 1 ms a request with the deterministic rules only, 60 ms with the embedding checks (2 cores)."""
        return 0.06 if self.config.embeddings else 0.001

    @property
    def uses_all_cores(self) -> bool:
        """With the embedding checks on, the model already keeps every core busy."""
        return bool(self.config.embeddings)

    def check(self) -> None:
        """Load the documents once here, so that a bad folder is one error and not a failure in every worker."""
        cfg = self.config
        if self.documents is not None:
            load_documents(self.documents, limits=cfg.limits, norms=cfg.norms)

    def start(self) -> Worker:
        """Load the documents and the configuration, and audit each ``[where, request]`` payload."""
        cfg = self.config
        documents = (
            load_documents(self.documents, limits=cfg.limits, norms=cfg.norms) if self.documents is not None else None
        )

        def audit(payload: Any) -> dict[str, Any]:
            where, request = (None, payload) if isinstance(payload, dict) else payload
            try:
                report = analyze(request, documents, cfg)
            except NormaError as exc:
                exc.source = exc.source or where
                raise
            return report.model_dump(mode="json")

        return per_record(audit)
