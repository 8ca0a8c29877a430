"""§9.02 versioning: a rule-set snapshot, and the version bump a change between two snapshots requires.

* a rule whose detection algorithm changed (its ``version`` or ``detection`` text differs) -> minor;
* a new rule -> minor;
* a breaking change -> major: a threshold made stricter, a severity raised (WARNING -> ERROR), a rule removed,
  a context added to a rule's applicability;
* anything else that differs (titles, exceptions' wording, a looser threshold) -> patch.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from norma.audit._config import AuditConfig
from norma.audit._language import DEFAULT_LANG, Lang
from norma.audit._models import severity_label
from norma.audit._registry import rule_registry
from norma.audit._rule import AuditRule
from norma.errors import InvalidInputError

__all__ = ["RULESET_VERSION", "Bump", "BumpReport", "required_bump", "ruleset_snapshot"]

RULESET_VERSION = "2.2.0"
"""The built-in rule set's version: the spec's v2.0, then norma's minor bumps (§9.02). 2.1: IR.0.01 on every
technical output, code decisions for members and blocks, bilingual detection (issue 21). 2.2: names the output
introduces, declared and unknown acronyms, "must" among the modal verbs, verdicts that find no violation, every
rule text in English and Spanish (issue 40)."""

SNAPSHOT_LANG = "es"
"""The language of a snapshot that does not say (snapshots taken before they said were in the spec's Spanish)."""
_SEVERITY_RANK = {"INFO": 0, "WARNING": 1, "ERROR": 2}
_TOLERANCE_RANK = {"low": 0, "medium": 1, "high": 2}
LOWER_IS_STRICTER = frozenset({"ir_7_02_formality_tolerance"})
"""Thresholds where a smaller value is stricter; for every other one a larger value is."""


class Bump(enum.IntEnum):
    """The size of a version change."""

    NONE = 0
    PATCH = 1
    MINOR = 2
    MAJOR = 3

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class BumpReport:
    """The bump required and why."""

    bump: Bump
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"bump": str(self.bump), "reasons": list(self.reasons)}


def ruleset_snapshot(
    rules: Sequence[AuditRule] | None = None, config: Any | None = None, *, lang: Lang | None = None
) -> dict[str, Any]:
    """Plain data describing a rule set under a configuration (what ``norma audit rules --format json`` prints).

    The rules' texts are in ``lang``, else the configuration's ``lang``, else English (:data:`DEFAULT_LANG`);
    the snapshot says which (``lang``), and :func:`required_bump` compares snapshots of one language only."""
    chosen = list(rules) if rules is not None else list(rule_registry().values())
    cfg = AuditConfig.parse(config)
    lang = lang or cfg.lang or DEFAULT_LANG
    values = cfg.model_dump(mode="json")
    snapshot_rules = {}
    for rule in chosen:
        entry = rule.describe(lang)
        entry["severity"] = severity_label(cfg.severity_overrides.get(rule.id, rule.severity))
        entry["thresholds"] = {name: values[name] for name in rule.thresholds}
        snapshot_rules[rule.id] = entry
    return {"ruleset_version": RULESET_VERSION, "lang": lang, "rules": snapshot_rules}


def _threshold_change(name: str, old: Any, new: Any) -> tuple[Bump, str]:
    old_rank: float
    new_rank: float
    if name == "ir_7_02_formality_tolerance":
        old_rank, new_rank = _TOLERANCE_RANK.get(str(old), 1), _TOLERANCE_RANK.get(str(new), 1)
    else:
        old_rank, new_rank = float(old), float(new)
    stricter = new_rank < old_rank if name in LOWER_IS_STRICTER else new_rank > old_rank
    if stricter:
        return Bump.MAJOR, f"{name} stricter: {old} -> {new}"
    return Bump.PATCH, f"{name} looser: {old} -> {new}"


def _rules_of(snapshot: Mapping[str, Any], which: str) -> Mapping[str, Any]:
    rules = snapshot.get("rules") if isinstance(snapshot, Mapping) else None
    if not isinstance(rules, Mapping):
        raise InvalidInputError(
            f"the {which} snapshot has no 'rules' object", hint="use `norma audit rules --format json`"
        )
    return rules


def required_bump(old: Mapping[str, Any], new: Mapping[str, Any]) -> BumpReport:
    """Which version bump (§9.02) going from snapshot ``old`` to snapshot ``new`` requires."""
    before, after = _rules_of(old, "old"), _rules_of(new, "new")
    old_lang, new_lang = old.get("lang", SNAPSHOT_LANG), new.get("lang", SNAPSHOT_LANG)
    if old_lang != new_lang:
        raise InvalidInputError(
            f"the old snapshot's rule texts are in {old_lang!r} and the new one's in {new_lang!r}: "
            "a different wording would count as a changed algorithm",
            hint=f"take both with the same language: `norma audit rules --lang {old_lang} --format json`",
        )
    changes: list[tuple[Bump, str]] = []
    for rule_id in sorted(set(before) - set(after)):
        changes.append((Bump.MAJOR, f"{rule_id} removed"))
    for rule_id in sorted(set(after) - set(before)):
        changes.append((Bump.MINOR, f"{rule_id} added"))
    for rule_id in sorted(set(before) & set(after)):
        a, b = before[rule_id], after[rule_id]
        if a.get("version") != b.get("version") or a.get("detection") != b.get("detection"):
            changes.append((Bump.MINOR, f"{rule_id} algorithm changed ({a.get('version')} -> {b.get('version')})"))
        old_sev, new_sev = _SEVERITY_RANK.get(str(a.get("severity")), 1), _SEVERITY_RANK.get(str(b.get("severity")), 1)
        if new_sev > old_sev:
            changes.append((Bump.MAJOR, f"{rule_id} severity raised: {a.get('severity')} -> {b.get('severity')}"))
        elif new_sev < old_sev:
            changes.append((Bump.PATCH, f"{rule_id} severity lowered: {a.get('severity')} -> {b.get('severity')}"))
        if set(b.get("contexts", [])) - set(a.get("contexts", [])):
            changes.append((Bump.MAJOR, f"{rule_id} now applies in more contexts"))
        old_t, new_t = a.get("thresholds") or {}, b.get("thresholds") or {}
        if isinstance(old_t, Mapping) and isinstance(new_t, Mapping):
            for name in sorted(set(old_t) & set(new_t)):
                if old_t[name] != new_t[name]:
                    changes.append(_threshold_change(name, old_t[name], new_t[name]))
        rest = {k for k in set(a) | set(b) if k not in {"version", "detection", "severity", "contexts", "thresholds"}}
        if any(a.get(k) != b.get(k) for k in rest) and not changes:
            changes.append((Bump.PATCH, f"{rule_id} description changed"))
    if not changes:
        return BumpReport(Bump.NONE, ())
    bump = max(level for level, _ in changes)
    return BumpReport(bump, tuple(reason for _, reason in changes))
