"""Matching many messages against a rulebook as a batch job (:class:`MatchJob`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from norma.batch._job import Outcome, Worker
from norma.errors import InvalidInputError, NormaError
from norma.matching import MatchConfig, RuleMatcher, SessionState, load_rules

__all__ = ["MatchJob", "match_payload"]


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
    """Match messages against the rules of a file; each worker builds the matcher (embeds the rules) once.

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
    ) -> MatchJob:
        """A job for the rulebook at ``rules_path``."""
        cfg = config or MatchConfig()
        return cls(os.fspath(rules_path), cfg.model_dump_json(), bool(explain), tuple(tags))

    def check(self) -> None:
        """Read the rulebook once here (a bad file is one error, not one per worker)."""
        load_rules(self.rules_path)

    def _result(self, payload: dict[str, Any], found: Any) -> dict[str, Any]:
        row: dict[str, Any] = {"id": payload["id"]} if "id" in payload else {}
        row.update(message=payload["message"], **found.to_dict())
        if not self.explain:
            row.pop("dropped")
        return row

    def start(self) -> Worker:
        """Build the matcher (embedding every rule), then match each batch with one embedding call."""
        matcher = RuleMatcher(load_rules(self.rules_path), MatchConfig.model_validate_json(self.config_json))
        tags = list(self.tags) or None

        def one(payload: dict[str, Any]) -> Outcome:
            try:
                session = None if payload["session"] is None else SessionState.from_mapping(payload["session"])
                found = matcher.match(payload["message"], session, explain=self.explain, tags=tags)
            except NormaError as exc:
                return None, str(exc)
            return self._result(payload, found), None

        def work(payloads: Sequence[Any]) -> list[Outcome]:
            try:
                sessions = [None if p["session"] is None else SessionState.from_mapping(p["session"]) for p in payloads]
                found = matcher.match_many([p["message"] for p in payloads], sessions, explain=self.explain, tags=tags)
            except NormaError:  # one bad message: match them one by one to say which
                return [one(payload) for payload in payloads]
            return [(self._result(p, f), None) for p, f in zip(payloads, found, strict=True)]

        return work
