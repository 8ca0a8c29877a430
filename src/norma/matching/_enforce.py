"""Which matches govern the turn: the matches a turn check enforces, and why (issue #47).

Matching answers "which rules are relevant to this message" and is tuned for recall: a neighbour in an LLM's
context costs little. A turn check needs "which rules govern this turn": a neighbour's requirement there fails good
answers. Each match carries the decision:

* ``top`` — the most relevant match (the highest hybrid score: similarity and BM25, before priority and scope);
* ``as_close_as_top`` — a match whose similarity is within :data:`ENFORCE_MARGIN` of the top match's (or above it):
  the message states it as much as the top one, so a second intent ("freeze my card and send a new one") comes
  through when the message states it as strongly;
* ``neighbour`` — every other match: relevant, not enforced.

The rule and its margin were chosen on the tune draws of the development sets by the worst, over data sets, of
min(good answers not failed, bad answers caught, multi-label bad answers caught), the simpler rule winning within
0.02 (``experiments/turn_enforcement.py``, docs/design/040-matching.md "Enforcement").
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ENFORCE_MARGIN", "Enforcement", "EnforcementReason", "enforcements"]

ENFORCE_MARGIN = 0.01
"""Matches whose similarity is at most this far below the top match's are enforced with it."""


class EnforcementReason(enum.StrEnum):
    """Why a match is enforced, or not."""

    TOP = "top"
    AS_CLOSE_AS_TOP = "as_close_as_top"
    NEIGHBOUR = "neighbour"


@dataclass(frozen=True, slots=True)
class Enforcement:
    """Whether a match governs the turn (its requirement checks apply), and why."""

    enforced: bool
    reason: EnforcementReason
    detail: str
    """The reason in words, with the figures."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return {"enforced": self.enforced, "reason": self.reason.value, "detail": self.detail}


def enforcements(similarities: Sequence[float], relevance: Sequence[float]) -> list[Enforcement]:
    """The decision for each match, given in the matcher's order: ``similarities`` (cosine) and ``relevance`` (the
    hybrid score; the top match is the first with the highest)."""
    if not similarities:
        return []
    lead = max(range(len(relevance)), key=lambda i: (relevance[i], -i))
    top = similarities[lead]
    out = []
    for i, similarity in enumerate(similarities):
        below = top - similarity
        if i == lead:
            out.append(Enforcement(True, EnforcementReason.TOP, "the most relevant match"))
        elif below <= ENFORCE_MARGIN + 1e-9:
            detail = (
                f"similarity {similarity:.3f}, within {ENFORCE_MARGIN:g} of the top match's {top:.3f}"
                if below > 0
                else f"similarity {similarity:.3f}, at or above the top match's {top:.3f}"
            )
            out.append(Enforcement(True, EnforcementReason.AS_CLOSE_AS_TOP, detail))
        else:
            detail = f"similarity {similarity:.3f}, {below:.3f} below the top match's {top:.3f}"
            out.append(Enforcement(False, EnforcementReason.NEIGHBOUR, detail))
    return out
