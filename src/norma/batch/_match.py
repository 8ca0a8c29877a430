"""Matching many messages against a rulebook as a batch job (:class:`MatchJob`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from norma.batch._job import Outcome, Worker
from norma.batch._stable import embed_stable
from norma.embeddings import BertEmbedder, get_embedder
from norma.errors import ConflictError, InvalidInputError, NormaError
from norma.matching import (
    MatchConfig,
    RuleMatcher,
    SessionState,
    file_matcher,
    load_rules,
    read_held_out,
    snapshot_matcher,
)
from norma.store import open_tenant_store

__all__ = ["MatchJob", "match_payload"]


def _vectors(embedder: BertEmbedder, messages: Sequence[Any], limit: int) -> list[np.ndarray]:
    """Query vectors that do not depend on the batch (:func:`embed_stable`); zeros for what is not embedded (blank,
    not text or over ``limit`` characters: the matcher skips or refuses it, without tokenizing a megabyte first)."""
    wanted = [i for i, m in enumerate(messages) if isinstance(m, str) and m.strip() and len(m) <= limit]
    vectors = embed_stable(embedder, [messages[i] for i in wanted])
    out = [np.zeros(embedder.dim, dtype=np.float32) for _ in messages]
    for row, index in enumerate(wanted):
        out[index] = vectors[row]
    return out


def match_payload(record: Any) -> dict[str, Any]:
    """A message record as the job takes it: ``{"message": str, "session": {...} | None}``.

    ``record`` is a message (text), or a mapping with ``message`` and optionally ``session`` (the fields of
    :class:`~norma.matching.SessionState`) and ``id``.

    Raises:
        InvalidInputError: not a string or such a mapping.
    """
    if isinstance(record, str):
        return {"message": record, "session": None}
    if not isinstance(record, dict) or not isinstance(record.get("message"), str):
        raise InvalidInputError(
            'a message record is a JSON object with a "message" string', hint='write {"message": "...", "session": {}}'
        )
    unknown = sorted(set(record) - {"id", "message", "session"})
    if unknown:
        raise InvalidInputError(f"unknown field {unknown[0]!r}", hint="a record has id, message and session")
    out = {"message": record["message"], "session": record.get("session")}
    if "id" in record:
        out["id"] = record["id"]
    return out


@dataclass(frozen=True)
class MatchJob:
    """Match messages against the rules of a file, or of a stored tenant; each worker builds the matcher once (a
    file's rules embedded; a tenant's from its stored vectors, read-only: see :meth:`for_tenant`).

    A payload is :func:`match_payload`'s; its result is ``{"message", **MatchResult.to_dict()}`` (without
    ``dropped`` unless ``explain``; with the record's ``id`` when it has one).
    """

    rules_path: str
    """The rulebook (YAML or JSON), at the same path on every worker."""
    config_json: str = "{}"
    """The :class:`~norma.matching.MatchConfig` as JSON text."""
    explain: bool = False
    """Also list the rules left out and why."""
    tags: tuple[str, ...] = ()
    """Only rules with one of these tags (empty: all)."""
    tenant_id: str | None = None
    """Match this stored tenant's rules instead of ``rules_path`` (made by :meth:`for_tenant`)."""
    db_url: str | None = None
    """The store of ``tenant_id``, as every worker reaches it."""
    tenant_version: int = 0
    """The tenant's version when the job was made: a worker that reads another one fails (no mixed results)."""
    model_dir: str | None = None
    """The encoder's folder, at the same path on every worker (None: :func:`~norma.embeddings.get_embedder`'s
    default, ``$NORMA_MODEL_DIR`` or the packaged model)."""

    fork_safe = False
    uses_all_cores = True
    batch_size = 64
    record_seconds = 0.01

    @classmethod
    def make(
        cls,
        rules_path: str | os.PathLike[str],
        config: MatchConfig | None = None,
        *,
        explain: bool = False,
        tags: Sequence[str] = (),
        model_dir: str | None = None,
    ) -> MatchJob:
        """A job for the rulebook at ``rules_path``, embedded with the encoder in ``model_dir`` (None: the default
        one)."""
        cfg = config or MatchConfig()
        dumped = cfg.model_dump_json(exclude_unset=True)
        return cls(os.fspath(rules_path), dumped, bool(explain), tuple(tags), model_dir=model_dir)

    @classmethod
    def for_tenant(
        cls,
        tenant_id: str,
        db_url: str | None = None,
        config: MatchConfig | None = None,
        *,
        explain: bool = False,
        tags: Sequence[str] = (),
        model_dir: str | None = None,
    ) -> MatchJob:
        """A job for the rules of ``tenant_id`` in the store at ``db_url`` (default ``$NORMA_DB_URL``, else
        ``./.norma/norma.db``; never created), pinned to its current version. Workers build the matcher with
        :func:`~norma.matching.snapshot_matcher`: the stored vectors and calibrated gate, nothing written back.

        Raises:
            NotFoundError: no store there, or the tenant has no rules in it.
        """
        cfg = config or MatchConfig()
        with open_tenant_store(tenant_id, db_url) as store:
            url, version = store.url, store.version(tenant_id)
        dumped = cfg.model_dump_json(exclude_unset=True)
        return cls("", dumped, bool(explain), tuple(tags), tenant_id, url, version, model_dir=model_dir)

    def check(self) -> None:
        """Read the rulebook once here (a bad file is one error, not one per worker)."""
        if self.tenant_id is None:
            load_rules(self.rules_path)

    def rule_count(self) -> int:
        """How many rules the messages are matched against."""
        if self.tenant_id is None:
            return len(load_rules(self.rules_path))
        with open_tenant_store(self.tenant_id, self.db_url) as store:
            return len(store.list_rules(self.tenant_id))

    def _matcher(self, embedder: BertEmbedder) -> RuleMatcher:
        config = MatchConfig.model_validate_json(self.config_json)
        held_out = read_held_out(embedder.model_dir)  # the encoder's gate, when it is an adapted one
        if self.tenant_id is None:
            return file_matcher(self.rules_path, config, embedder=embedder, held_out=held_out)  # compiled once
        with open_tenant_store(self.tenant_id, self.db_url) as store:
            matcher = snapshot_matcher(store, self.tenant_id, embedder=embedder, config=config, held_out=held_out)
            version = store.version(self.tenant_id)
        if version != self.tenant_version:
            raise ConflictError(
                f"tenant {self.tenant_id!r} moved from version {self.tenant_version} to {version} while the batch ran",
                hint="run the batch again (it matches one version of the rules)",
            )
        return matcher

    def _result(self, payload: dict[str, Any], found: Any) -> dict[str, Any]:
        row: dict[str, Any] = {"id": payload["id"]} if "id" in payload else {}
        row.update(message=payload["message"], **found.to_dict())
        if not self.explain:
            row.pop("dropped")
        return row

    def start(self) -> Worker:
        """Build the matcher (embedding every rule), then embed each batch's messages in one call and match them."""
        embedder = get_embedder(self.model_dir)
        matcher = self._matcher(embedder)
        tags = list(self.tags) or None

        def one(payload: dict[str, Any], vector: np.ndarray) -> Outcome:
            try:
                session = None if payload["session"] is None else SessionState.from_mapping(payload["session"])
                found = matcher.match_many(
                    [payload["message"]], [session], explain=self.explain, tags=tags, query_vectors=[vector]
                )[0]
            except NormaError as exc:
                return None, str(exc)
            return self._result(payload, found), None

        def work(payloads: Sequence[Any]) -> list[Outcome]:
            # one embedding call for the batch; then each message alone, because the similarity product of a
            # batch of queries rounds differently from that of one query (results must not depend on the batch)
            vectors = _vectors(embedder, [p["message"] for p in payloads], matcher.config.max_message_chars)
            return [one(payload, vector) for payload, vector in zip(payloads, vectors, strict=True)]

        return work
