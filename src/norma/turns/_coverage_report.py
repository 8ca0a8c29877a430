"""What :func:`norma.turns.coverage` gives: :class:`Coverage`, each rule's share (:class:`RuleCoverage`), the
ungoverned messages clustered (:class:`UngovernedCluster`), the rules that compete (:class:`CompetingRules`); how
they are found: :mod:`norma.turns._coverage`.

The JSON of :meth:`Coverage.to_dict` (the ``--format json`` of ``norma rules coverage``)::

    {
      "tenant": str, "rules_version": int | null,
      "turns": int,            # messages read
      "governed": int,         # turns some rule governs
      "neighbour_only": int,   # turns some rule matched, none governs
      "unmatched": int,        # turns no rule matched
      "rules": [{"rule_id": str, "enabled": bool, "governs": int, "neighbour": int,
                 "governs_share": float, "neighbour_share": float}],   # most governing first, then by id
      "never_governs": [str], "never_matched": [str], "disabled": [str],   # by id
      "clusters": [{"size": int, "terms": [str],
                    "examples": [{"index": int, "message": str}],
                    "nearest_rule": {"rule_id": str, "similarity": float} | null,
                    "indexes": [int]}],   # largest first; indexes: every message of the cluster
      "other_ungoverned": int, # ungoverned messages in no cluster (clusters of one)
      "competing": [{"rule_a": str, "rule_b": str, "messages": int, "both_govern": int,
                     "a_first": int, "b_first": int, "example": {"index": int, "message": str}}],
      "settings": {"governs": float, "cluster_similarity": float, "contest_margin": float,
                   "contest_confidence": float}
    }

``index`` is the message's place in the input (0-based); shares are of ``turns`` (0 when there is none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from norma.matching import GOVERNS

__all__ = [
    "CLUSTER_SIMILARITY",
    "CONTEST_CONFIDENCE",
    "CONTEST_MARGIN",
    "CompetingRules",
    "Coverage",
    "CoverageExample",
    "RuleCoverage",
    "UngovernedCluster",
]

CLUSTER_SIMILARITY = 0.5
"""Mean cosine between two clusters' messages from which they merge (all-MiniLM-L6-v2; chosen among 0.40-0.60 on
three BANKING77 draws with 10 intents left out: the best agreement with the intents, within 0.002, and more of the
missing intents found than 0.55; docs/diff.md "Coverage")."""
CONTEST_MARGIN = 0.05
"""Most difference between the similarities of the top and the second candidate for the two to compete."""
CONTEST_CONFIDENCE = 0.5
"""Least confidence of the top candidate for a contest to count: as likely as not to be the message's rule (the
confidence is calibrated), so two rules far from a message do not compete for it."""


@dataclass(frozen=True, slots=True)
class CoverageExample:
    """A message of the input, and where it is."""

    index: int
    """Its place in the input (0-based)."""
    message: str

    def to_dict(self) -> dict[str, Any]:
        """``{"index", "message"}``."""
        return {"index": self.index, "message": self.message}


@dataclass(frozen=True, slots=True)
class RuleCoverage:
    """One rule's share of the turns."""

    rule_id: str
    enabled: bool
    """A disabled rule matches nothing (it is in :attr:`Coverage.disabled`, not in ``never_governs``)."""
    governs: int
    """Turns whose message it governs."""
    neighbour: int
    """Turns whose message it matched without governing it (relevant, its requirements not enforced)."""

    def to_dict(self, turns: int) -> dict[str, Any]:
        """The fields and each count's share of ``turns``."""
        return {
            "rule_id": self.rule_id,
            "enabled": self.enabled,
            "governs": self.governs,
            "neighbour": self.neighbour,
            "governs_share": self.governs / turns if turns else 0.0,
            "neighbour_share": self.neighbour / turns if turns else 0.0,
        }


@dataclass(frozen=True, slots=True)
class UngovernedCluster:
    """Messages no rule governs, about one thing (see the module docstring): a rule the rulebook may be missing."""

    size: int
    """Its messages (a text repeated counts each time)."""
    examples: tuple[CoverageExample, ...]
    """Up to three distinct messages (``_coverage.EXAMPLES``), the closest to the cluster's centroid first."""
    terms: tuple[str, ...]
    """Its most distinctive frequent words, as a label."""
    nearest_rule: str | None
    """The enabled rule closest to its messages (None: the rulebook has none)."""
    nearest_similarity: float | None
    """The mean similarity of its messages to that rule (the matcher's similarity: best cosine to its texts)."""
    indexes: tuple[int, ...] = ()
    """The place of each of its messages in the input, in input order (the examples a new rule could take)."""

    def to_dict(self) -> dict[str, Any]:
        """``{"size", "terms", "examples", "nearest_rule": {"rule_id", "similarity"} | None, "indexes"}``."""
        nearest = None
        if self.nearest_rule is not None:
            nearest = {"rule_id": self.nearest_rule, "similarity": self.nearest_similarity}
        return {
            "size": self.size,
            "terms": list(self.terms),
            "examples": [e.to_dict() for e in self.examples],
            "nearest_rule": nearest,
            "indexes": list(self.indexes),
        }


@dataclass(frozen=True, slots=True)
class CompetingRules:
    """Two rules that compete for the same messages (see the module docstring); ``rule_a`` < ``rule_b``."""

    rule_a: str
    rule_b: str
    messages: int
    """Messages they compete for, in either way."""
    both_govern: int
    """Messages both govern."""
    a_first: int
    """Messages where ``rule_a`` is the top match and ``rule_b`` the second, within :data:`CONTEST_MARGIN`."""
    b_first: int
    """Messages where ``rule_b`` is the top match and ``rule_a`` the second, within :data:`CONTEST_MARGIN`."""
    example: CoverageExample
    """The message they compete for whose similarities to the two are closest."""

    def to_dict(self) -> dict[str, Any]:
        """The fields, ``example`` as ``{"index", "message"}``."""
        return {
            "rule_a": self.rule_a,
            "rule_b": self.rule_b,
            "messages": self.messages,
            "both_govern": self.both_govern,
            "a_first": self.a_first,
            "b_first": self.b_first,
            "example": self.example.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class Coverage:
    """What a rulebook covers on recorded messages (:func:`coverage`); :meth:`to_dict` is its JSON."""

    tenant_id: str
    rules_version: int | None
    """The stored tenant's rules version (None for a file)."""
    turns: int
    """The messages read."""
    governed: int
    """Turns some rule governs."""
    neighbour_only: int
    """Turns some rule matched, none governs."""
    unmatched: int
    """Turns no rule matched."""
    rules: tuple[RuleCoverage, ...]
    """Every rule: the most governing first, then the most neighbour, then by id."""
    clusters: tuple[UngovernedCluster, ...]
    """The ungoverned messages in clusters of two or more, largest first (then by first example)."""
    other_ungoverned: int
    """The ungoverned messages in no cluster."""
    competing: tuple[CompetingRules, ...]
    """The pairs of competing rules, the most contested first."""

    @property
    def ungoverned(self) -> int:
        """Turns no rule governs (neighbour only, or unmatched)."""
        return self.turns - self.governed

    @property
    def never_governs(self) -> tuple[str, ...]:
        """The enabled rules that govern no turn, by id (those never matched included)."""
        return tuple(sorted(r.rule_id for r in self.rules if r.enabled and not r.governs))

    @property
    def never_matched(self) -> tuple[str, ...]:
        """The enabled rules that match no turn, not even as a neighbour, by id."""
        return tuple(sorted(r.rule_id for r in self.rules if r.enabled and not r.governs and not r.neighbour))

    @property
    def disabled(self) -> tuple[str, ...]:
        """The disabled rules, by id."""
        return tuple(sorted(r.rule_id for r in self.rules if not r.enabled))

    def to_dict(self) -> dict[str, Any]:
        """The JSON described in the module docstring."""
        return {
            "tenant": self.tenant_id,
            "rules_version": self.rules_version,
            "turns": self.turns,
            "governed": self.governed,
            "neighbour_only": self.neighbour_only,
            "unmatched": self.unmatched,
            "ungoverned": self.ungoverned,
            "rules": [r.to_dict(self.turns) for r in self.rules],
            "never_governs": list(self.never_governs),
            "never_matched": list(self.never_matched),
            "disabled": list(self.disabled),
            "clusters": [c.to_dict() for c in self.clusters],
            "other_ungoverned": self.other_ungoverned,
            "competing": [c.to_dict() for c in self.competing],
            "settings": {
                "governs": GOVERNS,
                "cluster_similarity": CLUSTER_SIMILARITY,
                "contest_margin": CONTEST_MARGIN,
                "contest_confidence": CONTEST_CONFIDENCE,
            },
        }
