"""How well a rulebook's matcher answers labelled messages: ranking quality, quality at the gate, per rule.

:func:`evaluate_rulebook` matches every labelled message twice through the matcher's public API (the message is
embedded once): without a threshold and ranked by relevance (the hybrid score: the priority and scope weights
set to 0; the ranking figures: acc@1, recall@k, MRR, confusions) and with the config in force
(the gate: precision, recall, rejection, multi-label and per-rule figures, rules never returned), and once more
without a threshold and with the config in force, for the confidence of every candidate (a reliability table and
its ECE). The definitions are in docs/matching.md, "Evaluating a rulebook"; a figure whose denominator is 0 is None,
never 0 or NaN.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from norma.embeddings import CachedEmbedder, EmbeddingCache
from norma.errors import InvalidInputError
from norma.matching._config import MatchConfig
from norma.matching._labelled import LabelledMessage, check_labelled
from norma.matching._matcher import RuleMatcher
from norma.matching._models import SessionState
from norma.matching._records import record_dict

__all__ = [
    "DEFAULT_K",
    "Confusion",
    "MessageOutcome",
    "MultiLabelScores",
    "ReliabilityBin",
    "RuleQuality",
    "RulebookEvaluation",
    "evaluate_rulebook",
]

DEFAULT_K: tuple[int, ...] = (1, 3, 5)
"""The default cut-offs of recall@k."""
RELIABILITY_BINS = 10
"""The reliability table's bins: [0, 0.1), [0.1, 0.2), ... [0.9, 1]."""


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True, slots=True)
class MessageOutcome:
    """What the matcher did with one labelled message."""

    message: str
    expected: tuple[str, ...]
    """The labelled rule ids."""
    ranked: tuple[str, ...]
    """The rules ranked without a threshold, best first (at most the largest k)."""
    matched: tuple[str, ...]
    """The rules returned at the gate, best first."""
    line: int | None = None
    """The line of the labelled file (None when built in code)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return record_dict(self)


@dataclass(frozen=True, slots=True)
class RuleQuality:
    """One rule's figures at the gate."""

    rule_id: str
    support: int
    """Messages that expect the rule."""
    matched: int
    """Messages the rule was returned for."""
    correct: int
    """Messages the rule was returned for and that expect it."""

    @property
    def precision(self) -> float | None:
        """correct / matched (None when never returned)."""
        return _ratio(self.correct, self.matched)

    @property
    def recall(self) -> float | None:
        """correct / support (None when no message expects the rule)."""
        return _ratio(self.correct, self.support)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return record_dict(self, "precision", "recall")


@dataclass(frozen=True, slots=True)
class Confusion:
    """A rule that was ranked first for messages labelled with another one."""

    expected: str
    """The labelled rule."""
    took: str
    """The rule ranked first instead."""
    count: int
    """How many messages."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return record_dict(self)


@dataclass(frozen=True, slots=True)
class MultiLabelScores:
    """Every returned rule against every labelled rule, summed over messages (micro averages)."""

    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def precision(self) -> float | None:
        """tp / (tp + fp)."""
        return _ratio(self.true_positives, self.true_positives + self.false_positives)

    @property
    def recall(self) -> float | None:
        """tp / (tp + fn)."""
        return _ratio(self.true_positives, self.true_positives + self.false_negatives)

    @property
    def f1(self) -> float | None:
        """2 tp / (2 tp + fp + fn)."""
        tp2 = 2 * self.true_positives
        return _ratio(tp2, tp2 + self.false_positives + self.false_negatives)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return record_dict(self, "precision", "recall", "f1")


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    """The candidates whose confidence that they govern the message falls in ``[low, high)`` (the last bin
    includes 1): how many, their mean confidence, and how often the rule was one the message expects."""

    low: float
    high: float
    candidates: int
    confidence: float | None
    """Their mean confidence (None when the bin is empty)."""
    right: float | None
    """The share that are an expected rule of their message (None when empty)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return record_dict(self)


def _reliability(pairs: list[tuple[float, bool]]) -> tuple[tuple[ReliabilityBin, ...], float | None]:
    """The reliability table of (confidence, right) pairs and its expected calibration error: the mean, weighted by
    candidates, of |mean confidence - share right| over the bins (None without a candidate)."""
    bins: list[list[tuple[float, bool]]] = [[] for _ in range(RELIABILITY_BINS)]
    for confidence, right in pairs:
        bins[min(int(confidence * RELIABILITY_BINS), RELIABILITY_BINS - 1)].append((confidence, right))
    table, gap = [], 0.0
    for i, members in enumerate(bins):
        mean = sum(c for c, _ in members) / len(members) if members else None
        share = sum(r for _, r in members) / len(members) if members else None
        if mean is not None and share is not None:
            gap += len(members) * abs(mean - share)
        table.append(ReliabilityBin(i / RELIABILITY_BINS, (i + 1) / RELIABILITY_BINS, len(members), mean, share))
    return tuple(table), (gap / len(pairs) if pairs else None)


@dataclass(frozen=True, slots=True)
class RulebookEvaluation:
    """The figures of :func:`evaluate_rulebook` (definitions in docs/matching.md, "Evaluating a rulebook")."""

    messages: int
    """Labelled messages evaluated."""
    labelled: int
    """Messages that expect at least one rule (the ranking figures are over these)."""
    expect_nothing: int
    """Messages that expect no rule."""
    k: tuple[int, ...]
    """The cut-offs of ``recall_at_k``."""
    accuracy_at_1: float | None
    """Without a threshold: share of labelled messages whose top-ranked rule is expected."""
    recall_at_k: dict[int, float | None]
    """Without a threshold: share of labelled messages with an expected rule among the top k."""
    mrr: float | None
    """Without a threshold: mean of 1 / rank of the first expected rule (0 when it is not ranked)."""
    gate: dict[str, Any]
    """The gate the "at the gate" figures were measured with (:meth:`AppliedGate.to_dict`: kind, score, threshold,
    terms, description)."""
    precision: float | None
    """At the gate: share of messages with a match whose top match is expected."""
    recall: float | None
    """At the gate: share of labelled messages whose top match is expected."""
    rejection: float | None
    """At the gate: share of messages expecting nothing that got no match."""
    multi_label: MultiLabelScores
    """At the gate: every returned rule against every expected one."""
    rules: tuple[RuleQuality, ...]
    """Per rule (every rule of the matcher, sorted by id), at the gate."""
    confusions: tuple[Confusion, ...]
    """(expected, ranked first instead) pairs, most frequent first, then by ids."""
    never_matched: tuple[str, ...]
    """Enabled rules no message returned at the gate, sorted."""
    outcomes: tuple[MessageOutcome, ...]
    """Per message, in input order."""
    reliability: tuple[ReliabilityBin, ...] = ()
    """Every candidate of every message (no threshold, the config in force) by its confidence that it governs the
    message: how often it is an expected rule, per bin."""
    ece: float | None = None
    """Expected calibration error of those confidences (0: a confidence of 0.8 is right 80 % of the time)."""
    governs_precision: float | None = None
    """Of the matches that govern (confidence >= 0.7), the share that are an expected rule."""
    governs_recall: float | None = None
    """Of the expected rules, the share that govern their message."""

    @property
    def priority_changed(self) -> tuple[MessageOutcome, ...]:
        """The messages whose rule ranked first by relevance (the ranking figures' top) was returned at the gate but
        not first: priority and scope put another rule before it (the matcher's answer is ``matched``)."""
        return tuple(o for o in self.outcomes if o.ranked and o.ranked[0] in o.matched and o.matched[0] != o.ranked[0])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (recall_at_k keyed by str(k))."""
        return record_dict(self)


def _check_k(k: Iterable[int]) -> tuple[int, ...]:
    values = list(k) if not isinstance(k, int) else [k]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in values):
        raise InvalidInputError(f"k must be one or more integers >= 1, not {values!r}", location="k")
    return tuple(sorted(set(values)))


def _session(item: LabelledMessage) -> SessionState | None:
    if item.scenario is None and item.step is None:
        return None
    return SessionState(active_scenario_id=item.scenario, active_step_id=item.step)


def evaluate_rulebook(
    matcher: RuleMatcher,
    labelled: Sequence[LabelledMessage],
    *,
    config: MatchConfig | None = None,
    k: Iterable[int] = DEFAULT_K,
    source: str = "<labelled>",
) -> RulebookEvaluation:
    """Evaluate ``matcher`` on labelled messages (see :class:`RulebookEvaluation` for every figure).

    Args:
        matcher: the rulebook's matcher (a file's ``RuleMatcher(load_rules(path))`` or a tenant's matcher).
        labelled: the messages (:func:`load_labelled`); every expected id must be a rule of the matcher that can
            match that message (:func:`check_labelled`, which raises :class:`LabelledMessagesError` otherwise).
        config: the config whose gate is evaluated (default: the matcher's).
        k: the cut-offs of recall@k.
        source: names the labelled messages in errors (the file path).

    Deterministic: the same matcher and messages give the same figures.
    """
    if not isinstance(matcher, RuleMatcher):
        raise InvalidInputError(f"matcher must be a RuleMatcher, not {type(matcher).__name__}", location="matcher")
    if config is not None and not isinstance(config, MatchConfig):
        raise InvalidInputError(f"config must be a MatchConfig, not {type(config).__name__}", location="config")
    cuts = _check_k(k)
    items = list(labelled)
    rules = matcher.rules
    check_labelled(items, rules, source=source)
    gated_config = config if config is not None else matcher.config
    # The ranking is by relevance: without a gate, the priority term would put the highest-priority rules first for
    # every message, so priority and scope weigh 0 (final = hybrid_weight * hybrid; ties by priority, then id).
    ranking_config = gated_config.with_(
        threshold=None, max_matched=max(len(rules), cuts[-1]), priority_weight=0.0, scope_weight=0.0
    )
    texts = [item.message for item in items]
    sessions = [_session(item) for item in items]
    embedder = CachedEmbedder(matcher.embedder, EmbeddingCache(max_entries=max(1, 4 * len(texts))))
    ranked = matcher.match_many(texts, sessions, config=ranking_config, embedder=embedder)
    gated = matcher.match_many(texts, sessions, config=gated_config, embedder=embedder)
    candidates = matcher.match_many(
        texts, sessions, config=gated_config.with_(threshold=None, max_matched=len(rules) or 1), embedder=embedder
    )
    pairs = [(m.confidence, m.rule.id in item.expected) for item, found in zip(items, candidates, strict=True)
             for m in found]  # fmt: skip
    table, ece = _reliability(pairs)
    governing = [(m.rule.id in item.expected) for item, result in zip(items, gated, strict=True)
                 for m in result if m.enforced]  # fmt: skip
    expected_total = sum(len(set(item.expected)) for item in items)

    top1 = 0
    hits = dict.fromkeys(cuts, 0)
    reciprocal = 0.0
    with_match = top_right = rejected = 0
    tp = fp = fn = 0
    support: Counter[str] = Counter()
    returned: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    confused: Counter[tuple[str, str]] = Counter()
    outcomes: list[MessageOutcome] = []
    for item, ranking, result in zip(items, ranked, gated, strict=True):
        expected = set(item.expected)
        order = [m.rule.id for m in ranking]
        matched = [m.rule.id for m in result]
        outcomes.append(MessageOutcome(item.message, item.expected, tuple(order[: cuts[-1]]), tuple(matched),
                                       item.line))  # fmt: skip
        support.update(expected)
        returned.update(matched)
        correct.update(i for i in matched if i in expected)
        tp += len(expected.intersection(matched))
        fp += len(set(matched) - expected)
        fn += len(expected.difference(matched))
        if matched:
            with_match += 1
            top_right += matched[0] in expected
        if not expected:
            rejected += not matched
            continue
        if order and order[0] in expected:
            top1 += 1
        elif order:
            confused.update((e, order[0]) for e in item.expected)
        for cut in cuts:
            hits[cut] += any(i in expected for i in order[:cut])
        rank = next((n for n, i in enumerate(order, start=1) if i in expected), None)
        reciprocal += 0.0 if rank is None else 1.0 / rank
    labelled_count = sum(1 for item in items if item.expected)
    empty = len(items) - labelled_count
    return RulebookEvaluation(
        messages=len(items),
        labelled=labelled_count,
        expect_nothing=empty,
        k=cuts,
        accuracy_at_1=_ratio(top1, labelled_count),
        recall_at_k={cut: _ratio(hits[cut], labelled_count) for cut in cuts},
        mrr=reciprocal / labelled_count if labelled_count else None,
        gate=matcher.gate(gated_config).to_dict(),
        precision=_ratio(top_right, with_match),
        recall=_ratio(top_right, labelled_count),  # a message expecting nothing never has a right top match
        rejection=_ratio(rejected, empty),
        multi_label=MultiLabelScores(tp, fp, fn),
        rules=tuple(RuleQuality(r.id, support[r.id], returned[r.id], correct[r.id]) for r in rules),
        confusions=tuple(
            Confusion(e, t, n) for (e, t), n in sorted(confused.items(), key=lambda p: (-p[1], p[0][0], p[0][1]))
        ),
        never_matched=tuple(r.id for r in rules if r.enabled and not returned[r.id]),
        outcomes=tuple(outcomes),
        reliability=table,
        ece=ece,
        governs_precision=_ratio(sum(governing), len(governing)),
        governs_recall=_ratio(sum(governing), expected_total),
    )
