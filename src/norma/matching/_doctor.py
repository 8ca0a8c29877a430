"""What is wrong with a rulebook before any message is matched: misplaced examples, near-duplicate rules, rules
with too few examples, conditions unrelated to their examples.

:func:`diagnose_rulebook` reads the matcher's own vectors (:meth:`RuleMatcher.vectors_for`: the rule text, then each
example, L2-normalised) and embeds the condition texts that share no word with their examples. Only enabled rules
are looked at, and two rules are compared only when a session can have both as candidates (not two rules of
different scenarios, nor two STEP rules of different steps). The checks and their bounds are documented in
docs/matching.md, "Evaluating a rulebook".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from norma.embeddings import EncoderInfo, describe_encoder
from norma.errors import InvalidInputError
from norma.matching._lexical import tokenize
from norma.matching._matcher import RuleMatcher
from norma.matching._pipeline import describe_scan
from norma.matching._records import record_dict
from norma.rules import Rule, Severity, When, rule_texts

__all__ = [
    "DEFAULT_NEAR_DUPLICATE",
    "UNRELATED_CONDITION_BOUND",
    "Diagnosis",
    "Finding",
    "FindingKind",
    "diagnose_rulebook",
]

FindingKind = Literal[
    "near_duplicate", "example_closer_to_other_rule", "condition_unrelated", "no_examples", "one_example",
    "encoder_stale", "requirement_on_neighbours",
]  # fmt: skip
"""What a finding is about (in the order findings are listed)."""
DEFAULT_NEAR_DUPLICATE = 0.95
"""Two rules whose texts, or whose centroids, have at least this cosine are near duplicates."""
UNRELATED_CONDITION_BOUND = 0.15
"""A condition whose cosine to the centroid of its rule's examples is below this, and that shares no word with them,
is unrelated to them. On all-MiniLM-L6-v2, in examples/rulebooks/banking-support.yaml, a condition's cosine to the
centroid of its own examples has median 0.56 (10th percentile 0.28), and to another rule's examples median 0.12
(90th percentile 0.32): below 0.15 a condition is as far from its examples as from another banking rule's."""

_KINDS: tuple[FindingKind, ...] = (
    "near_duplicate",
    "example_closer_to_other_rule",
    "condition_unrelated",
    "no_examples",
    "one_example",
    "encoder_stale",
    "requirement_on_neighbours",
)
_BLOCK = 1024  # rows of a similarity block (memory: _BLOCK x rules float32)


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem of the rulebook."""

    kind: FindingKind
    severity: Severity
    """``error``: the rulebook gives wrong matches as it is (near-duplicate rules; a rule most of whose examples, two
    or more, are closer to one same other rule); ``norma rules doctor`` exits 1. ``warning``: it is weaker than it
    could be (a single misplaced example, an unrelated condition, too few examples). Never ``info``."""
    rule_ids: tuple[str, ...]
    """The rule at fault first, then the other rule involved (if any)."""
    message: str
    """The finding in one line."""
    numbers: dict[str, float] = field(default_factory=dict)
    """The figures behind it (cosines, counts)."""
    example: str | None = None
    """The example concerned (``example_closer_to_other_rule``)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (``severity`` its value, ``"error"`` or ``"warning"``)."""
        return {**record_dict(self), "severity": self.severity.value}


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Every finding of :func:`diagnose_rulebook`, errors first, then by kind and rule ids."""

    rules: int
    """Enabled rules examined."""
    findings: tuple[Finding, ...]
    near_duplicate: float
    """The near-duplicate bound used."""
    vector_scan: str = ""
    """How a match finds its vector candidates in this rulebook, and the CPU kernel that computes them."""
    encoder: EncoderInfo | None = None
    """The encoder the rulebook is embedded with: identity, precision (fp32 / int8), encoder version, whether its
    vectors depend on the batch, and the onnxruntime kernel it runs on this CPU."""

    @property
    def errors(self) -> int:
        """Findings of severity ``error``."""
        return sum(1 for f in self.findings if f.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        """Findings of severity ``warning``."""
        return sum(1 for f in self.findings if f.severity is Severity.WARNING)

    def counts(self) -> dict[str, int]:
        """Findings by kind (every kind, 0 included)."""
        return {kind: sum(1 for f in self.findings if f.kind == kind) for kind in _KINDS}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return record_dict(self, "errors", "warnings", "counts")


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return np.asarray(rows / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def _contexts(rules: list[Rule]) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of each rule's scenario and step (-1: any), to tell which rules can meet in a session."""
    names: dict[str, int] = {}
    scenario = np.array([-1 if r.scenario_id is None else names.setdefault(r.scenario_id, len(names)) for r in rules])
    steps: dict[str, int] = {}
    step = np.array([-1 if r.step_id is None else steps.setdefault(r.step_id, len(steps)) for r in rules])
    return scenario, step


def _meet(codes: tuple[np.ndarray, np.ndarray], rows: slice | np.ndarray) -> np.ndarray:
    """bool (len(rows) x rules): whether rule ``rows[i]`` and rule j can be candidates in one session."""
    ok = np.ones((len(codes[0][rows]), len(codes[0])), dtype=bool)
    for code in codes:
        mine, theirs = code[rows][:, None], code[None, :]
        ok &= (mine < 0) | (theirs < 0) | (mine == theirs)
    return ok


def _blocks(count: int) -> Iterator[slice]:
    for start in range(0, count, _BLOCK):
        yield slice(start, min(count, start + _BLOCK))


def _near_duplicates(rules: list[Rule], text: np.ndarray, centre: np.ndarray, meet: Any, bound: float) -> list[Finding]:
    found = []
    for rows in _blocks(len(rules)):
        by_text = text[rows] @ text.T
        by_centre = centre[rows] @ centre.T
        ok = meet(rows) & (np.maximum(by_text, by_centre) >= bound)
        for i, j in zip(*np.nonzero(ok), strict=True):
            a, b = int(i) + rows.start, int(j)
            if a >= b:
                continue
            t, c = float(by_text[i, j]), float(by_centre[i, j])
            found.append(Finding(
                "near_duplicate", Severity.ERROR, (rules[a].id, rules[b].id),
                f"{rules[a].id} and {rules[b].id} are near duplicates (text cosine {t:.3f}, centroid cosine {c:.3f})",
                {"text_cosine": t, "centroid_cosine": c},
            ))  # fmt: skip
    return found


def _misplaced(rules: list[Rule], vectors: list[np.ndarray], centre: np.ndarray, meet: Any) -> list[Finding]:
    """Examples closer to another rule's centroid than to the centroid of their own rule's other texts."""
    owner = np.array([slot for slot, v in enumerate(vectors) if len(v) >= 2 for _ in range(len(v) - 1)], dtype=np.intp)
    if not len(owner):
        return []
    number = np.array([n for v in vectors if len(v) >= 2 for n in range(len(v) - 1)], dtype=np.intp)
    examples = np.concatenate([v[1:] for v in vectors if len(v) >= 2])
    totals = np.stack([v.sum(axis=0) for v in vectors])
    own = np.einsum("ij,ij->i", examples, _unit(totals[owner] - examples))  # the example left out of its centroid
    best = np.full(len(owner), -1, dtype=np.intp)
    best_cosine = np.full(len(owner), -np.inf, dtype=np.float32)
    for rows in _blocks(len(owner)):
        cosines = examples[rows] @ centre.T
        ok = meet(owner[rows])  # the rules each example's rule can meet, itself aside
        ok[np.arange(len(ok)), owner[rows]] = False
        cosines = np.where(ok, cosines, -np.inf)
        best[rows] = np.argmax(cosines, axis=1)
        best_cosine[rows] = cosines[np.arange(len(cosines)), best[rows]]
    closer = np.flatnonzero(best_cosine > own)
    taken = Counter((int(owner[i]), int(best[i])) for i in closer)
    found = []
    for i in closer:
        slot, other, n = int(owner[i]), int(best[i]), int(number[i])
        rule, count = rules[slot], taken[(int(owner[i]), int(best[i]))]
        severe = count >= 2 and 2 * count > len(rule.examples)
        mine, value = float(own[i]), float(best_cosine[i])
        found.append(Finding(
            "example_closer_to_other_rule", Severity.ERROR if severe else Severity.WARNING, (rule.id, rules[other].id),
            f"example {n} of {rule.id} is closer to {rules[other].id} ({value:.3f}) than to its own rule "
            f"({mine:.3f}): {rule.examples[n]!r:.60}",
            {"example": float(n), "own_cosine": mine, "other_cosine": value, "examples_closer_to_other": float(count)},
            rule.examples[n],
        ))  # fmt: skip
    return found


def _unrelated(matcher: RuleMatcher, rules: list[Rule], vectors: list[np.ndarray]) -> list[Finding]:
    """Conditions sharing no word with their examples (only those are embedded) and far from their centroid."""
    wordless = [
        slot
        for slot, rule in enumerate(rules)
        if rule.examples and not set(tokenize(rule.condition_text)) & {t for e in rule.examples for t in tokenize(e)}
    ]
    if not wordless:
        return []
    conditions = _unit(np.asarray(matcher.embedder.embed([rules[s].condition_text for s in wordless]), np.float32))
    found = []
    for slot, condition in zip(wordless, conditions, strict=True):
        rule = rules[slot]
        cosine = float(condition @ _unit(vectors[slot][1:].sum(axis=0)))
        if cosine < UNRELATED_CONDITION_BOUND:
            found.append(Finding(
                "condition_unrelated", Severity.WARNING, (rule.id,),
                f"the condition of {rule.id} shares no word with its examples and little meaning (cosine {cosine:.3f} "
                f"< {UNRELATED_CONDITION_BOUND})",
                {"cosine": cosine, "shared_words": 0.0},
            ))  # fmt: skip
    return found


def _stale_encoder(matcher: RuleMatcher) -> list[Finding]:
    held = matcher.held_out
    share = None if held is None else held.trained_share(t for rule in matcher.rules for t in rule_texts(rule))
    if share is None or share >= 1:
        return []
    message = (
        f"the encoder was adapted on {share:.0%} of these rules' texts: its vectors and the confidence's statistics "
        "predate the changes (adapt again with norma rules adapt, or calibrate)"
    )
    return [Finding("encoder_stale", Severity.WARNING, (), message, {"trained_share": share})]


def _requirements_on_neighbours(rules: list[Rule]) -> list[Finding]:
    found = []
    for rule in rules:
        for check in rule.checks:
            if check.when is When.MATCHED and check.requirement:
                message = (
                    f"{rule.id}: check {check.id!r} ({check.kind}) is a requirement with when: matched, so it also "
                    "applies where the rule matched only as a neighbour (under a similarity threshold or a calibrated "
                    "target; the default gate returns only the rules that govern) and fails good answers to other "
                    "rules' messages there; remove `when` to apply it when the rule governs the turn (a store written "
                    "by an earlier norma holds when: matched on every check: import the rulebook again)"
                )
                found.append(Finding("requirement_on_neighbours", Severity.WARNING, (rule.id,), message))
    return found


def diagnose_rulebook(matcher: RuleMatcher, *, near_duplicate: float = DEFAULT_NEAR_DUPLICATE) -> Diagnosis:
    """Find the problems of the matcher's rulebook (see the module docstring and :data:`FindingKind`).

    * ``near_duplicate`` (error): two rules whose texts (condition + action) or whose centroids (the normalised
      mean of the rule text and the examples) have a cosine >= ``near_duplicate``.
    * ``example_closer_to_other_rule``: an example whose cosine to another rule's centroid is higher than to the
      centroid of its own rule's other texts (the rule text and the other examples); an error when two or more, and
      more than half, of the rule's examples are closer to one same rule (they belong to it), else a warning.
    * ``condition_unrelated`` (warning): a condition that shares no word with its examples (:func:`tokenize`, stop
      words aside) and whose cosine to their centroid is below :data:`UNRELATED_CONDITION_BOUND`.
    * ``no_examples`` / ``one_example`` (warning): rules matched on their own text alone, or on one example.
    * ``encoder_stale`` (warning, no rule id): the matcher's gate is an adapted encoder's, and some of the rule
      texts were not in its training (the rulebook changed since ``norma rules adapt``).
    * ``requirement_on_neighbours`` (warning): a requirement check (``contains``, ``regex``, ``min_words``,
      ``json``, ``judge``) with ``when: matched``: it applies where its rule matched only as a neighbour.

    Deterministic: findings are sorted errors first, then by kind, rule ids and example.
    """
    if not isinstance(matcher, RuleMatcher):
        raise InvalidInputError(f"matcher must be a RuleMatcher, not {type(matcher).__name__}", location="matcher")
    if not isinstance(near_duplicate, int | float) or not -1.0 <= float(near_duplicate) <= 1.0:
        raise InvalidInputError(f"near_duplicate must be a cosine in [-1, 1], not {near_duplicate!r}",
                                location="near_duplicate")  # fmt: skip
    rules = [r for r in matcher.rules if r.enabled]
    findings: list[Finding] = []
    vector_rows = sum(len(matcher.vectors_for(r.id)) for r in matcher.rules)
    if rules:
        vectors = [np.asarray(matcher.vectors_for(r.id), dtype=np.float32) for r in rules]
        text = np.stack([v[0] for v in vectors])
        centre = _unit(np.stack([v.sum(axis=0) for v in vectors]))
        codes = _contexts(rules)

        def meet(rows: slice | np.ndarray) -> np.ndarray:
            return _meet(codes, rows)

        findings += _near_duplicates(rules, text, centre, meet, float(near_duplicate))
        findings += _misplaced(rules, vectors, centre, meet)
        findings += _unrelated(matcher, rules, vectors)
        for rule in rules:
            if len(rule.examples) < 2:
                kind: FindingKind = "no_examples" if not rule.examples else "one_example"
                words = "no example" if not rule.examples else "one example"
                advice = f"{rule.id} has {words}: add a few messages users write"
                findings.append(
                    Finding(kind, Severity.WARNING, (rule.id,), advice, {"examples": float(len(rule.examples))})
                )
        findings += _stale_encoder(matcher)
        findings += _requirements_on_neighbours(rules)
    order = {kind: n for n, kind in enumerate(_KINDS)}
    findings.sort(
        key=lambda f: (f.severity is not Severity.ERROR, order[f.kind], f.rule_ids, f.numbers.get("example", -1.0))
    )
    scan = describe_scan(vector_rows, matcher.config)
    return Diagnosis(
        rules=len(rules),
        findings=tuple(findings),
        near_duplicate=float(near_duplicate),
        vector_scan=scan,
        encoder=describe_encoder(matcher.embedder),
    )
