"""Which of a tenant's rules apply to a user message (ADR-002): hybrid vector + BM25, priority and scope."""

from __future__ import annotations

from norma.matching._models import MAX_RULE_ID_LENGTH, Rule, Scope, SessionState, rule_fingerprint, rule_texts

__all__ = [
    "MAX_RULE_ID_LENGTH",
    "Rule",
    "Scope",
    "SessionState",
    "rule_fingerprint",
    "rule_texts",
]
