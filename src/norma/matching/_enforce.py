"""Which matches govern the turn: the matches a turn check enforces, and why (issues #47, #56).

Matching answers "which rules are relevant to this message" and is tuned for recall: a neighbour in an LLM's
context costs little. A turn check needs "which rules govern this turn": a neighbour's requirement there fails good
answers. Each match carries its confidence that it governs the message (``_confidence.py``: calibrated, per rule,
the same meaning on every rulebook) and the decision read from it:

* ``governs`` — the confidence reaches :data:`~norma.matching._confidence.GOVERNS`: the rule's requirements apply.
  Two rules can both govern a message ("freeze my card and send a new one");
* ``neighbour`` — below it: the rule is relevant (it matched), its requirements are not enforced.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from norma.matching._confidence import GOVERNS

__all__ = ["Enforcement", "EnforcementReason", "enforcement"]


class EnforcementReason(enum.StrEnum):
    """Why a match is enforced, or not."""

    GOVERNS = "governs"
    NEIGHBOUR = "neighbour"


@dataclass(frozen=True, slots=True)
class Enforcement:
    """Whether a match governs the turn (its requirement checks apply), why, and the confidence it was read from."""

    enforced: bool
    reason: EnforcementReason
    confidence: float
    """The confidence that the rule governs the message, in [0, 1]."""
    detail: str
    """The reason in words, with the figures."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return {
            "enforced": self.enforced,
            "reason": self.reason.value,
            "confidence": self.confidence,
            "detail": self.detail,
        }


def enforcement(confidence: float) -> Enforcement:
    """The decision for a match of this confidence."""
    if confidence >= GOVERNS:
        detail = f"confidence {confidence:.2f} >= {GOVERNS:g} that it governs the message"
        return Enforcement(True, EnforcementReason.GOVERNS, confidence, detail)
    detail = f"confidence {confidence:.2f} < {GOVERNS:g} that it governs the message"
    return Enforcement(False, EnforcementReason.NEIGHBOUR, confidence, detail)
