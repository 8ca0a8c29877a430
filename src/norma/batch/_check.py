"""Checking many turns against a rulebook as a batch job (:class:`CheckJob`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from norma.batch._job import Outcome, StreamWorker, Worker
from norma.batch._match import MatchJob, _vectors
from norma.embeddings import get_embedder
from norma.errors import InvalidInputError, NormaError
from norma.matching import SessionState
from norma.turns import TurnReport
from norma.turns import open as open_rules

__all__ = ["CheckJob", "CheckedTurn", "turn_payload"]


def turn_payload(record: Any) -> dict[str, Any]:
    """A turn record as the job takes it: ``{"message": str, "output": str, "session": {...} | None}`` (and
    ``id`` when the record has one).

    Raises:
        InvalidInputError: not a JSON object with ``message`` and ``output`` strings, an unknown field, or an empty
            message.
    """
    if not isinstance(record, dict) or not isinstance(record.get("message"), str):
        raise InvalidInputError(
            'a turn record is a JSON object with "message" and "output" strings',
            hint='write {"message": "...", "output": "...", "session": {}}',
        )
    if not isinstance(record.get("output"), str):
        raise InvalidInputError('a turn record needs an "output" string (the AI\'s answer)')
    unknown = sorted(set(record) - {"id", "message", "output", "session"})
    if unknown:
        raise InvalidInputError(f"unknown field {unknown[0]!r}", hint="a turn record has id, message, output, session")
    if not record["message"].strip():  # as norma check -m and the library refuse it
        raise InvalidInputError("the message is empty", hint="give the user's message")
    out = {"message": record["message"], "output": record["output"], "session": record.get("session")}
    if "id" in record:
        out["id"] = record["id"]
    return out


@dataclass(frozen=True)
class CheckedTurn:
    """One turn of a batch checked: the record's ``id`` (when it has one), its message and the typed report, kept
    as they are until the writer (:meth:`row`)."""

    message: str
    report: TurnReport
    id: Any = None
    has_id: bool = False

    def row(self) -> dict[str, Any]:
        """The JSON row (``--format jsonl``): ``id`` (when the record has one), ``message`` and
        :meth:`TurnReport.to_dict`."""
        row: dict[str, Any] = {"id": self.id} if self.has_id else {}
        row.update(message=self.message, **self.report.to_dict())
        return row


@dataclass(frozen=True)
class CheckJob:
    """Check turns against the rules of a file or a stored tenant (``match``: the :class:`MatchJob` that builds
    the matcher, once per worker); judge checks use the LLM configured in the worker's environment when
    ``judge``. A result is ``{"id"?, "message", **TurnReport.to_dict()}``."""

    match: MatchJob
    """Where the rules come from (a file, or a stored tenant pinned to its version)."""
    audit: bool = False
    """Also run the IR.x.y audit on each output."""
    documents: str | None = None
    """The audit's normative documents folder."""
    judge: bool = False
    """Decide ``judge`` checks with the LLM of the worker's ``$NORMA_LLM_URL`` (votes cached in the user's cache
    file, shared by the workers); without it, or without an LLM, they are skipped."""

    fork_safe = False
    uses_all_cores = True
    batch_size = 64
    record_seconds = 0.01

    @property
    def tenant_id(self) -> str | None:
        """The stored tenant, when the rules are one's."""
        return self.match.tenant_id

    def check(self) -> None:
        """Read the rulebook once here (a bad file is one error, not one per worker)."""
        self.match.check()

    def rule_count(self) -> int:
        """How many rules the turns are checked against."""
        return self.match.rule_count()

    def start(self) -> Worker:
        """Build the matcher once, then per batch embed the messages in one call and check each turn (one at a
        time through :attr:`StreamWorker.stream`)."""
        embedder = get_embedder()
        matcher = self.match._matcher(embedder)
        version = self.match.tenant_version if self.match.tenant_id is not None else None
        rules = open_rules(  # the judge as norma check makes it: votes kept in the user cache file
            matcher, version=version, judge="user" if self.judge else None, audit=self.audit, documents=self.documents
        )

        def one(payload: dict[str, Any], vector: np.ndarray) -> Outcome:
            try:
                session = None if payload["session"] is None else SessionState.from_mapping(payload["session"])
                found = matcher.match_many([payload["message"]], [session], query_vectors=[vector])[0]
                report = rules.review(payload["message"], payload["output"], found)
            except NormaError as exc:
                return None, str(exc)
            return CheckedTurn(payload["message"], report, payload.get("id"), "id" in payload), None

        def stream(payloads: Sequence[Any]) -> Iterator[Outcome]:
            vectors = _vectors(embedder, [p["message"] for p in payloads], matcher.config.max_message_chars)
            for payload, vector in zip(payloads, vectors, strict=True):
                yield one(payload, vector)

        return StreamWorker(stream)  # the local engine hands on each turn as soon as it is checked
