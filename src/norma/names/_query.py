"""Queries the way the MIID validator builds them: random labels, the fallback template and its static check.

A query has two halves: the *labels* the validator keeps for scoring (variation count, phonetic and orthographic
level distributions, rule percentage and rules) and the *template* text a miner reads, with a literal ``{name}``
placeholder for the seed name. The validator may have an LLM rephrase the template; :func:`validate_query_template`
checks a rephrased template still states every requirement and appends ``[VALIDATION HINTS]`` for what it lost.
The check is static and lenient, as a text check of an LLM's wording must be: ``{name}`` must appear; the count as
a number; each ``"pct% Level"`` anywhere (case-insensitive, so a spec shared by both kinds is stated once); the
rule percentage as ``"rp%"``; and, for each rule, every word of four letters or more of its description.

Random draws, in this order, all from one ``random.Random`` (never the global generator):

1. ``randint(1, 3)``: how many rules;
2. ``sample(RULE_CATALOG, n)``: the rules, without replacement, from the flat catalog;
3. ``randint(6, 15)``: the variation count;
4. ``choices(QUERY_DISTRIBUTIONS, weights)``: the phonetic level distribution;
5. ``choices(QUERY_DISTRIBUTIONS, weights)``: the orthographic level distribution (independent of the phonetic one);
6. ``randint(10, 60)``: the rule percentage.

With an ``llm`` (:mod:`norma.llm`), :func:`build_query` has the model phrase the template from the labels
(:func:`query_phrasing_prompt`), runs the static check on its wording, and falls back to the fixed template when
the model fails (:class:`~norma.errors.BackendError`) or drops the ``{name}`` placeholder.
"""

from __future__ import annotations

import logging
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from norma.errors import BackendError, InvalidInputError
from norma.llm import reply_text
from norma.names._catalog import RULE_CATALOG, format_rules_for_query, rule_description
from norma.names._labels import DEFAULT_RULE_PERCENTAGE, LEVELS, check_distribution
from norma.names._validate import check_str

if TYPE_CHECKING:
    from norma.llm import LLMClient

__all__ = [
    "QUERY_DISTRIBUTIONS",
    "VariationQuery",
    "build_query",
    "query_phrasing_prompt",
    "query_template",
    "query_template_issues",
    "random_labels",
    "render_distribution",
    "validate_query_template",
]

QUERY_DISTRIBUTIONS: tuple[tuple[dict[str, float], float], ...] = (
    ({"Light": 0.3, "Medium": 0.4, "Far": 0.3}, 0.25),
    ({"Light": 0.2, "Medium": 0.6, "Far": 0.2}, 0.20),
    ({"Light": 0.1, "Medium": 0.3, "Far": 0.6}, 0.15),
    ({"Light": 0.5, "Medium": 0.5}, 0.12),
    ({"Light": 0.1, "Medium": 0.5, "Far": 0.4}, 0.10),
    ({"Medium": 1.0}, 0.08),
    ({"Light": 0.7, "Medium": 0.3}, 0.05),
    ({"Far": 1.0}, 0.03),
    ({"Light": 1.0}, 0.02),
)
"""The level distributions a query draws from, each with its probability (they add up to 1)."""

_TEMPLATE = (
    "The following name is the seed name to generate variations for: {{name}}. "
    "Generate {count} variations of the name {{name}}, ensuring phonetic similarity: {pspec}, "
    "and orthographic similarity: {ospec}, and also include {rp}% of variations that follow: {rules}"
)
_HINTS_HEADER = "\n[VALIDATION HINTS]: "
_PHRASING_SYSTEM = (
    "You write the instructions of a name-variation task. Reply with the instruction text only: "
    "no preamble, no quotes, no list of variations."
)
logger = logging.getLogger("norma.names")
_STOPWORDS = frozenset({"with", "that", "from", "into", "then", "etc", "each", "also"})


@dataclass(frozen=True)
class VariationQuery:
    """One query: the labels the validator scores with, the template a miner reads, and it filled in."""

    labels: dict[str, Any]
    """``variation_count``, ``phonetic_similarity``, ``orthographic_similarity`` and ``rule_based``."""
    template: str
    """The query text with a literal ``{name}`` placeholder."""
    name: str | None = None
    """The seed name the query was built for, if any."""
    phrased_by: str | None = None
    """The LLM model that phrased the template; None for the fixed template."""

    @property
    def text(self) -> str:
        """The template with the seed name in place of ``{name}`` (the template itself without a name)."""
        return self.template if self.name is None else self.template.replace("{name}", self.name)


def random_labels(rng: random.Random) -> dict[str, Any]:
    """Draw the labels of one query from ``rng`` (see the module docstring for the order of draws)."""
    n_rules = rng.randint(1, 3)
    rules = rng.sample(list(RULE_CATALOG), n_rules)
    count = rng.randint(6, 15)
    options = [dict(dist) for dist, _ in QUERY_DISTRIBUTIONS]
    weights = [weight for _, weight in QUERY_DISTRIBUTIONS]
    phonetic = rng.choices(options, weights=weights)[0]
    orthographic = rng.choices(options, weights=weights)[0]
    percentage = rng.randint(10, 60)
    return {
        "variation_count": count,
        "phonetic_similarity": phonetic,
        "orthographic_similarity": orthographic,
        "rule_based": {
            "rule_percentage": percentage,
            "selected_rules": rules,
            "rule_descriptions": {rule: rule_description(rule) for rule in rules},
            "percentage": percentage,
        },
    }


def render_distribution(distribution: Mapping[str, float], *, field: str = "distribution") -> str:
    """``{"Medium": 0.6, "Light": 0.2, "Far": 0.2}`` -> ``"20% Light, 60% Medium, 20% Far"``."""
    checked = _check_distribution(distribution, field)
    return ", ".join(f"{_percent(checked[level])}% {level}" for level in LEVELS if level in checked)


def query_template(labels: Mapping[str, Any]) -> str:
    """The validator's fallback template for ``labels``, with a literal ``{name}`` placeholder."""
    count, phonetic, orthographic, percentage, rules = _unpack(labels)
    return _TEMPLATE.format(
        count=count,
        pspec=render_distribution(phonetic, field="phonetic_similarity"),
        ospec=render_distribution(orthographic, field="orthographic_similarity"),
        rp=_format_percentage(percentage),
        rules=format_rules_for_query(rules),
    )


def query_template_issues(template: str, labels: Mapping[str, Any]) -> list[str]:
    """What a (possibly rephrased) template fails to state of ``labels``; an empty list when it states it all."""
    check_str(template, "template")
    count, phonetic, orthographic, percentage, rules = _unpack(labels)
    issues: list[str] = []
    if "{name}" not in template:
        issues.append("keep the {name} placeholder for the seed name")
    if not re.search(rf"(?<!\d){count}(?!\d)", template):
        issues.append(f"state the number of variations ({count})")
    for kind, distribution in (("phonetic", phonetic), ("orthographic", orthographic)):
        for level in LEVELS:
            if level in distribution:
                spec = f"{_percent(distribution[level])}% {level}"
                pattern = rf"(?<!\d){_percent(distribution[level])}%\s*{level}\b"
                if not re.search(pattern, template, flags=re.IGNORECASE):
                    issues.append(f"state the {kind} similarity '{spec}'")
    rp = _format_percentage(percentage)
    if not re.search(rf"(?<![\d.]){re.escape(rp)}%", template):
        issues.append(f"state the rule-based percentage ({rp}%)")
    lowered = template.lower()
    for rule in rules:
        missing = [word for word in _keywords(rule_description(rule)) if word not in lowered]
        if missing:
            issues.append(f"describe the rule '{rule_description(rule)}' (missing: {', '.join(missing)})")
    return issues


def validate_query_template(template: str, labels: Mapping[str, Any]) -> str:
    """``template`` unchanged when it states every requirement, else with ``[VALIDATION HINTS]: a; b`` appended."""
    issues = query_template_issues(template, labels)
    return template if not issues else template + _HINTS_HEADER + "; ".join(issues)


def build_query(
    name: str | None = None,
    seed: int | None = None,
    *,
    labels: Mapping[str, Any] | None = None,
    llm: LLMClient | None = None,
) -> VariationQuery:
    """A query for ``name`` if given: random labels (the same ``seed`` gives the same ones) or ``labels``.

    Without ``llm`` the template is the fixed one. With ``llm`` the model phrases it from the labels (at
    temperature 0, with ``seed`` passed on), :func:`validate_query_template` appends ``[VALIDATION HINTS]`` for
    any requirement its wording lost, and the fixed template is used instead when the model fails
    (:class:`~norma.errors.BackendError`) or its reply has no ``{name}`` placeholder.
    """
    if name is not None:
        check_str(name, "name")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise InvalidInputError(f"the query seed must be an integer, not {seed!r}")
    drawn = random_labels(random.Random(seed)) if labels is None else dict(labels)
    fixed = query_template(drawn)
    if llm is None:
        return VariationQuery(labels=drawn, template=fixed, name=name)
    try:
        reply = reply_text(llm.complete(query_phrasing_prompt(drawn), temperature=0.0, seed=seed))
    except BackendError as exc:
        logger.warning("the LLM could not phrase the query; using the fixed template: %s", exc)
        return VariationQuery(labels=drawn, template=fixed, name=name)
    phrased = _strip_reply(reply)
    if "{name}" not in phrased:
        logger.warning("the LLM's query has no {name} placeholder; using the fixed template")
        return VariationQuery(labels=drawn, template=fixed, name=name)
    return VariationQuery(
        labels=drawn, template=validate_query_template(phrased, drawn), name=name, phrased_by=llm.model
    )


def query_phrasing_prompt(labels: Mapping[str, Any]) -> list[dict[str, str]]:
    """The chat messages that ask an LLM to phrase the query for ``labels`` (each requirement stated verbatim)."""
    count, phonetic, orthographic, percentage, rules = _unpack(labels)
    lines = [
        "Write one paragraph that asks for variations of a seed name.",
        "Write the seed name as the literal placeholder {name}, with the braces, every time it appears.",
        "The paragraph must state, keeping every number and percentage exactly as written here:",
        f"- generate exactly {count} variations of {{name}};",
        f"- phonetic similarity: {render_distribution(phonetic, field='phonetic_similarity')};",
        f"- orthographic similarity: {render_distribution(orthographic, field='orthographic_similarity')};",
    ]
    lines.append(
        f"- approximately {_format_percentage(percentage)}% of all variations (as a group) follow these "
        f"rules: {'; '.join(rule_description(rule) for rule in rules) or 'none'}"
    )
    lines.append("Reply with the paragraph only.")
    return [{"role": "system", "content": _PHRASING_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def _strip_reply(reply: str) -> str:
    text = reply.strip()
    fence = re.fullmatch(r"```[\w-]*\n?(.*?)\n?```", text, flags=re.DOTALL)
    if fence:
        text = fence.group(1).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def _keywords(description: str) -> list[str]:
    words = re.findall(r"[a-z]+", description.lower())
    return list(dict.fromkeys(w for w in words if len(w) >= 4 and w not in _STOPWORDS))


def _percent(value: float) -> int:
    return round(value * 100)


def _check_distribution(distribution: object, field: str) -> dict[str, float]:
    checked = check_distribution(distribution, field) if distribution is not None else None
    if not checked:
        raise InvalidInputError(
            f"{field} must be a non-empty mapping of level to share",
            location=field,
            hint="for example {'Light': 0.2, 'Medium': 0.6, 'Far': 0.2}",
        )
    return checked


def _unpack(labels: Mapping[str, Any]) -> tuple[int, Mapping[str, float], Mapping[str, float], int | float, list[str]]:
    if not isinstance(labels, Mapping):
        raise InvalidInputError(f"query labels must be a mapping, not {type(labels).__name__}")
    required = ("variation_count", "phonetic_similarity", "orthographic_similarity")
    missing = [key for key in required if key not in labels]
    if missing:
        raise InvalidInputError(f"query labels lack {', '.join(missing)}", location="labels")
    count = labels["variation_count"]
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise InvalidInputError(f"variation_count must be an integer >= 0, not {count!r}", location="variation_count")
    phonetic = _check_distribution(labels["phonetic_similarity"], "phonetic_similarity")
    orthographic = _check_distribution(labels["orthographic_similarity"], "orthographic_similarity")
    rule_based = labels.get("rule_based") or {}
    if not isinstance(rule_based, Mapping):
        raise InvalidInputError("rule_based must be a mapping", location="rule_based")
    percentage = rule_based.get("rule_percentage", rule_based.get("percentage", DEFAULT_RULE_PERCENTAGE))
    if isinstance(percentage, bool) or not isinstance(percentage, int | float) or not math.isfinite(percentage):
        raise InvalidInputError(
            f"rule_based.rule_percentage must be a finite number, not {percentage!r}",
            location="rule_based.rule_percentage",
            hint="use a percentage such as 30",
        )
    rules = rule_based.get("selected_rules") or []
    if not isinstance(rules, Sequence) or isinstance(rules, str) or not all(isinstance(r, str) for r in rules):
        raise InvalidInputError(
            "rule_based.selected_rules must be a list of rule names", location="rule_based.selected_rules"
        )
    return count, phonetic, orthographic, percentage, list(rules)


def _format_percentage(value: int | float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
