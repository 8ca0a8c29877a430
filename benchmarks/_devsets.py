"""The development data sets of the matching defaults: rulebooks and labelled messages from BANKING77's train.csv
and NLU++ (banking, hotels), drawn reproducibly, each split into a *tune* part and a *report* part that never
share a message or a draw.

A data set draw is a :class:`DevSet`: rules (one per intent, a natural condition text and a few examples), and
labelled messages (each with the set of rule ids it should match; an empty set means "should match nothing":
messages of held-out intents, and NLU++ queries without an intent).

* BANKING77 (train.csv only; test.csv is never read): per draw ``d``, ``numpy.random.default_rng(seed)`` picks 10
  held-out intents and, per kept intent, 10 training utterances as examples; the remaining utterances of every
  intent are shuffled and cut in two halves, the *tune* half and the *report* half (at most 20 messages per intent
  each). Tune draws use seeds 101-103, report draws 201-203: the report draws have other held-out intents, other
  examples and other messages than any tune draw.
* NLU++ banking / hotels: the intents of the domain plus the general ones are the rules (condition: the
  ontology description, "is the intent to X?" -> "The user wants to X."); examples: up to 10 queries with the
  intent from folds 0-9; 8 intents held out per draw. Tune draws evaluate on the queries of folds 10-14, report
  draws on folds 15-19 (the split NLU++'s SOURCE.md suggests).
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from norma.rules import Rule

__all__ = [
    "DATA",
    "DevSet",
    "Labelled",
    "banking77",
    "banking77_subset",
    "banking77_test",
    "dev_sets",
    "foreign",
    "nlupp",
]

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLES = 10


@dataclass(frozen=True)
class Labelled:
    """A message and the rule ids it should match (empty: none)."""

    text: str
    expected: frozenset[str]


@dataclass(frozen=True)
class DevSet:
    """One draw of one data set: its rules and its labelled messages."""

    name: str
    part: str
    """``tune`` or ``report``."""
    rules: list[Rule]
    messages: list[Labelled]


def _words(intent: str) -> str:
    return intent.replace("_", " ")


def banking77(seed: int, part: str, *, held_out: int = 10, per_intent: int = 20) -> DevSet:
    """A BANKING77 draw from train.csv (see the module docstring)."""
    with (DATA / "banking77" / "train.csv").open(encoding="utf-8", newline="") as handle:
        rows = [(row["text"], row["category"]) for row in csv.DictReader(handle)]
    by_intent: dict[str, list[str]] = {}
    for text, label in rows:
        by_intent.setdefault(label, []).append(text)
    intents = sorted(by_intent)
    rng = np.random.default_rng(seed)
    held = {str(x) for x in rng.choice(intents, held_out, replace=False)}
    rules, messages = [], []
    for intent in intents:
        texts = list(by_intent[intent])
        order = rng.permutation(len(texts))
        shuffled = [texts[i] for i in order]
        if intent not in held:
            rules.append(
                Rule(id=intent, condition_text=f"The user wants to {_words(intent)}", examples=shuffled[:EXAMPLES])
            )
        rest = shuffled[EXAMPLES:]
        half = len(rest) // 2
        chosen = rest[:half] if part == "tune" else rest[half:]
        expected = frozenset() if intent in held else frozenset({intent})
        messages.extend(Labelled(text, expected) for text in chosen[:per_intent])
    return DevSet(f"banking77/{seed}", part, rules, messages)


def banking77_test(seed: int, *, held_out: int = 10) -> DevSet:
    """A *report-only* draw on BANKING77's test.csv, built the way an outside user would: held-out intents
    ``numpy.random.default_rng(seed).choice(sorted intents, 10)``, the first 10 train.csv utterances of each kept
    intent as its examples, every test.csv message. Never used to choose anything."""

    def read(name: str) -> list[tuple[str, str]]:
        with (DATA / "banking77" / name).open(encoding="utf-8", newline="") as handle:
            return [(row["text"], row["category"]) for row in csv.DictReader(handle)]

    train, test = read("train.csv"), read("test.csv")
    intents = sorted({label for _, label in train})
    held = {str(x) for x in np.random.default_rng(seed).choice(intents, held_out, replace=False)}
    by_intent: dict[str, list[str]] = {}
    for text, label in train:
        by_intent.setdefault(label, []).append(text)
    rules = [
        Rule(id=i, condition_text=f"The user wants to {_words(i)}", examples=by_intent[i][:EXAMPLES])
        for i in intents
        if i not in held
    ]
    messages = [Labelled(text, frozenset() if label in held else frozenset({label})) for text, label in test]
    return DevSet(f"banking77-test/{seed}", "report", rules, messages)


def _condition(description: str) -> str:
    text = description.strip().rstrip("?").strip()
    for prefix, replacement in (
        ("is the intent to ", "The user wants to "),
        ("is the intent asking about ", "The user is asking about "),
        ("is the intent ", "The user's intent is "),
    ):
        if text.startswith(prefix):
            return replacement + text[len(prefix) :]
    return f"The user's message: {text}"


def nlupp(domain: str, seed: int, part: str, *, held_out: int = 8) -> DevSet:
    """An NLU++ draw of ``domain`` (``banking`` or ``hotels``; see the module docstring)."""
    root = DATA / "nlupp"
    ontology = json.loads((root / "ontology.json").read_text(encoding="utf-8"))["intents"]
    intents = sorted(name for name, item in ontology.items() if {domain, "general"} & set(item["domain"]))
    folds = [json.loads((root / domain / f"fold{i}.json").read_text(encoding="utf-8")) for i in range(20)]
    rng = np.random.default_rng(seed)
    pool = [q for fold in folds[:10] for q in fold]
    evaluated = [q for fold in (folds[10:15] if part == "tune" else folds[15:20]) for q in fold]
    # only intents with at least 3 example queries become rules (the others are too rare to evaluate)
    having = {i: [q["text"] for q in pool if i in q.get("intents", [])] for i in intents}
    usable = [i for i in intents if len(having[i]) >= 3]
    held = {str(x) for x in rng.choice(usable, held_out, replace=False)}
    rules = []
    for intent in usable:
        if intent in held:
            continue
        texts = having[intent]
        picked = [texts[i] for i in sorted(rng.choice(len(texts), min(EXAMPLES, len(texts)), replace=False))]
        rules.append(Rule(id=intent, condition_text=_condition(ontology[intent]["description"]), examples=picked))
    kept = {r.id for r in rules}
    messages = [
        Labelled(q["text"], frozenset(i for i in q.get("intents", []) if i in kept))
        for q in evaluated
        if not (set(q.get("intents", [])) - kept - held)  # drop queries carrying a too-rare intent
    ]
    return DevSet(f"nlupp-{domain}/{seed}", part, rules, messages)


def dev_sets(part: str) -> list[DevSet]:
    """Every draw of every development data set for ``part`` (``tune`` or ``report``)."""
    seeds = (101, 102, 103) if part == "tune" else (201, 202, 203)
    sets = [banking77(s, part) for s in seeds]
    sets += [nlupp("banking", s, part) for s in seeds]
    sets += [nlupp("hotels", s, part) for s in seeds]
    return sets


def banking77_subset(seed: int, part: str, *, kept: int, held_out: int) -> DevSet:
    """A smaller rulebook from the BANKING77 draw ``seed``: ``kept`` intents as rules and ``held_out`` intents
    whose messages expect nothing, drawn with ``default_rng(seed + 1000 * kept)`` from all 77 (examples and
    messages as in :func:`banking77`, so the tune / report split holds)."""
    full = banking77(seed, part, held_out=0)
    rng = np.random.default_rng(seed + 1000 * kept)
    chosen = [str(x) for x in rng.choice(sorted(r.id for r in full.rules), kept + held_out, replace=False)]
    keep, held = set(chosen[:kept]), set(chosen[kept:])
    messages = [Labelled(m.text, m.expected & keep) for m in full.messages if m.expected & (keep | held)]
    return DevSet(f"banking77-{kept}/{seed}", part, [r for r in full.rules if r.id in keep], messages)


def foreign(dev: DevSet, *, mixed: bool = False) -> DevSet:
    """``dev`` with out-of-scope messages of *another domain* instead of (``mixed``: besides) its own held-out
    intents: its messages that expect some rule, plus, expecting none, NLU++ queries of the other domain (hotels
    for BANKING77 and NLU++ banking, banking for NLU++ hotels) from the folds of ``dev``'s part (tune 10-14, report
    15-19). Against an NLU++ rulebook only queries whose intents all belong to the other domain alone count (a
    general intent such as "greet" is one of its rules); against BANKING77, every hotels query."""
    other = "banking" if dev.name.startswith("nlupp-hotels") else "hotels"
    ontology = json.loads((DATA / "nlupp" / "ontology.json").read_text(encoding="utf-8"))["intents"]
    folds = range(10, 15) if dev.part == "tune" else range(15, 20)
    texts = []
    for i in folds:
        for q in json.loads((DATA / "nlupp" / other / f"fold{i}.json").read_text(encoding="utf-8")):
            intents = q.get("intents", [])
            if dev.name.startswith("banking77") or (intents and all(ontology[x]["domain"] == [other] for x in intents)):
                texts.append(q["text"])
    messages = [m for m in dev.messages if mixed or m.expected] + [Labelled(t, frozenset()) for t in texts]
    return DevSet(f"{dev.name} {'mixed' if mixed else 'foreign'}", dev.part, dev.rules, messages)


def _check() -> None:  # pragma: no cover - a quick look at the draws
    for part in ("tune", "report"):
        for d in dev_sets(part):
            none = sum(not m.expected for m in d.messages)
            print(d.name, part, len(d.rules), "rules", len(d.messages), "messages", none, "expect none")
    assert re.sub("x", "y", "x") == "y"


if __name__ == "__main__":
    _check()
