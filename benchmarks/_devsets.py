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
    "FRESH_NLUPP_HELD_OUT",
    "DevSet",
    "Labelled",
    "banking77",
    "banking77_subset",
    "banking77_test",
    "banking77_twins",
    "dev_sets",
    "foreign",
    "fresh_sets",
    "nlupp",
    "nlupp_twins",
    "twin_sets",
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


def _bank77_rows() -> dict[str, list[str]]:
    with (DATA / "banking77" / "train.csv").open(encoding="utf-8", newline="") as handle:
        rows = [(row["text"], row["category"]) for row in csv.DictReader(handle)]
    by_intent: dict[str, list[str]] = {}
    for text, label in rows:
        by_intent.setdefault(label, []).append(text)
    return by_intent


def banking77_twins(seed: int, part: str, *, held_out: int = 20, among: int | None = None) -> tuple[DevSet, DevSet]:
    """Two draws with *one* rulebook and the same in-scope messages, differing only in their out-of-scope messages:
    ``default_rng(seed + 5000)`` picks ``among`` of the 77 intents (all by default), then ``held_out`` of them,
    whose first half are twin A's held-out intents and second half twin B's; every other picked intent is a rule
    (examples and the tune / report halves of its messages as in :func:`banking77`). A gate that sees only the
    rulebook gives both twins the same threshold."""
    by_intent = _bank77_rows()
    intents = sorted(by_intent)
    rng = np.random.default_rng(seed + 5000)
    if among is not None:
        intents = sorted(str(x) for x in rng.choice(intents, among, replace=False))
    held = [str(x) for x in rng.choice(intents, held_out, replace=False)]
    twin_a, twin_b = set(held[: held_out // 2]), set(held[held_out // 2 :])
    rules: list[Rule] = []
    inside: list[Labelled] = []
    outside: dict[str, list[Labelled]] = {"A": [], "B": []}
    for intent in intents:
        texts = list(by_intent[intent])
        shuffled = [texts[i] for i in rng.permutation(len(texts))]
        if intent not in twin_a | twin_b:
            rules.append(
                Rule(id=intent, condition_text=f"The user wants to {_words(intent)}", examples=shuffled[:EXAMPLES])
            )
        rest = shuffled[EXAMPLES:]
        chosen = (rest[: len(rest) // 2] if part == "tune" else rest[len(rest) // 2 :])[:20]
        if intent in twin_a | twin_b:
            outside["A" if intent in twin_a else "B"].extend(Labelled(text, frozenset()) for text in chosen)
        else:
            inside.extend(Labelled(text, frozenset({intent})) for text in chosen)
    name = f"banking77{'' if among is None else f'-{among - held_out}'}/{seed}"
    return (
        DevSet(f"{name} A", part, rules, inside + outside["A"]),
        DevSet(f"{name} B", part, rules, inside + outside["B"]),
    )


def nlupp_twins(domain: str, seed: int, part: str, *, held_out: int = 16) -> tuple[DevSet, DevSet]:
    """NLU++ twins (see :func:`banking77_twins`): ``held_out`` intents drawn as in :func:`nlupp`, split in two
    halves. Both twins get the queries that carry a kept intent (expecting those); each twin also gets, expecting
    none, the queries whose intents are all in its own half. Queries without any intent (out of scope in
    :func:`nlupp`) and queries with intents of both halves are left out, so the twins share no out-of-scope
    message."""
    root = DATA / "nlupp"
    ontology = json.loads((root / "ontology.json").read_text(encoding="utf-8"))["intents"]
    intents = sorted(name for name, item in ontology.items() if {domain, "general"} & set(item["domain"]))
    folds = [json.loads((root / domain / f"fold{i}.json").read_text(encoding="utf-8")) for i in range(20)]
    rng = np.random.default_rng(seed + 5000)
    pool = [q for fold in folds[:10] for q in fold]
    evaluated = [q for fold in (folds[10:15] if part == "tune" else folds[15:20]) for q in fold]
    having = {i: [q["text"] for q in pool if i in q.get("intents", [])] for i in intents}
    usable = [i for i in intents if len(having[i]) >= 3]
    held = [str(x) for x in rng.choice(usable, held_out, replace=False)]
    halves = (set(held[: held_out // 2]), set(held[held_out // 2 :]))
    rules = []
    for intent in usable:
        if intent in halves[0] | halves[1]:
            continue
        texts = having[intent]
        picked = [texts[i] for i in sorted(rng.choice(len(texts), min(EXAMPLES, len(texts)), replace=False))]
        rules.append(Rule(id=intent, condition_text=_condition(ontology[intent]["description"]), examples=picked))
    kept = {r.id for r in rules}
    shared: list[Labelled] = []
    outside: tuple[list[Labelled], list[Labelled]] = ([], [])
    for q in evaluated:
        carried = set(q.get("intents", []))
        if carried - kept - halves[0] - halves[1]:
            continue  # a too-rare intent, as in nlupp()
        if carried & kept:  # expects its kept intents in both twins
            shared.append(Labelled(q["text"], frozenset(carried & kept)))
        elif carried and (carried <= halves[0] or carried <= halves[1]):  # out of scope in its own twin only
            outside[0 if carried <= halves[0] else 1].append(Labelled(q["text"], frozenset()))
    name = f"nlupp-{domain}/{seed}"
    return (
        DevSet(f"{name} A", part, rules, shared + outside[0]),
        DevSet(f"{name} B", part, rules, shared + outside[1]),
    )


def twin_sets() -> list[tuple[DevSet, DevSet]]:
    """The twin pairs of ``benchmarks/matching_gate_fresh.py`` (seeds 301-333, used by no other draw)."""
    pairs = [banking77_twins(s, "report") for s in (301, 302, 303, 304, 305, 306)]
    pairs += [banking77_twins(s, "report", held_out=8, among=40) for s in (311, 312, 313, 314)]
    pairs += [nlupp_twins("banking", s, "report") for s in (321, 322, 323)]
    pairs += [nlupp_twins("hotels", s, "report") for s in (331, 332, 333)]
    return pairs


FRESH_NLUPP_HELD_OUT = (8, 12, 16)
"""Intents a fresh NLU++ draw holds out, by its seed modulo 3."""


def fresh_sets() -> list[DevSet]:
    """Draws that chose nothing (seeds 401-442, used by no other draw), for ``benchmarks/matching_gate_fresh.py``:
    24 BANKING77 draws (67 rules with 10 held out, and 12, 25 and 40 of the 77 intents as rules with a fifth of that
    held out, in turn) and 12 per NLU++ domain with 8, 12 or 16 intents held out in turn; the report half of the
    messages."""
    sets: list[DevSet] = []
    for i, seed in enumerate(range(401, 425)):
        kept = (67, 12, 25, 40)[i % 4]
        sets.append(
            banking77(seed, "report")
            if kept == 67
            else banking77_subset(seed, "report", kept=kept, held_out=max(3, kept // 5))
        )
    for seed in range(431, 443):
        for domain in ("banking", "hotels"):
            sets.append(nlupp(domain, seed, "report", held_out=FRESH_NLUPP_HELD_OUT[seed % 3]))
    return sets


def _check() -> None:  # pragma: no cover - a quick look at the draws
    for part in ("tune", "report"):
        for d in dev_sets(part):
            none = sum(not m.expected for m in d.messages)
            print(d.name, part, len(d.rules), "rules", len(d.messages), "messages", none, "expect none")
    assert re.sub("x", "y", "x") == "y"


if __name__ == "__main__":
    _check()
