"""file_matcher: one compiled snapshot per rulebook file in the user's cache folder (real files, the real model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from norma.embeddings import get_embedder
from norma.errors import InvalidInputError
from norma.matching import RuleMatcher, load_rules
from norma.matching import _snapshot as snapshot_module
from norma.matching._snapshot import file_matcher
from norma.rules import RulebookError, rule_texts
from tests.conftest import EXAMPLES
from tests.matching.conftest import Counting

pytestmark = pytest.mark.model

BANKING = EXAMPLES / "rulebooks" / "banking-support.yaml"
MESSAGES = ["my bank card went missing yesterday", "how do I close my account", "what is the weather on mars"]


def results(matcher: RuleMatcher) -> list[dict[str, Any]]:
    return [r.to_dict() for r in matcher.match_many(MESSAGES, explain=True, embedder=get_embedder())]


def snapshots(cache_dir: Path) -> list[Path]:
    return sorted(p for p in (cache_dir / "rulebooks").iterdir() if not p.name.startswith("."))


def all_texts(path: Path) -> list[str]:
    return [text for rule in load_rules(path) for text in rule_texts(rule)]


def test_a_second_matcher_reads_the_snapshot(book: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first_embedder = Counting()
    first = file_matcher(book, embedder=first_embedder)
    assert sorted(first_embedder.texts) == sorted(all_texts(book))
    (kept,) = snapshots(cache_dir)
    assert {p.name for p in kept.iterdir()} == {"rules.json", "vectors.npy", "confidence.json"}
    assert json.loads((kept / "confidence.json").read_bytes()) == first.stats().to_dict()
    # neither the embedding cache nor the reader is there for the second matcher: all of it comes from the snapshot
    shutil.rmtree(cache_dir / "embeddings")

    def no_parsing(path: object) -> None:
        raise AssertionError("the file was parsed again")

    monkeypatch.setattr(snapshot_module, "load_rules", no_parsing)
    second_embedder = Counting()
    second = file_matcher(book, embedder=second_embedder)
    assert second_embedder.texts == []
    assert second.rules == first.rules
    assert results(second) == results(first)
    for rule in first.rules:
        assert np.array_equal(second.vectors_for(rule.id), first.vectors_for(rule.id))
    assert snapshots(cache_dir) == [kept]


def test_the_default_embedder(book: Path, cache_dir: Path) -> None:
    first = file_matcher(book)
    second = file_matcher(book)
    assert second.embedder is get_embedder()
    assert results(second) == results(first)


def test_an_edited_file_gets_a_new_snapshot(book: Path, cache_dir: Path) -> None:
    first = file_matcher(book, embedder=Counting())
    rule = first.rules[0]
    text = book.read_text(encoding="utf-8")
    assert text.count(rule.condition_text) == 1
    book.write_text(text.replace(rule.condition_text, "the customer wants to talk about penguins"), encoding="utf-8")
    counting = Counting()
    edited = file_matcher(book, embedder=counting)
    assert edited.rules[0].condition_text == "the customer wants to talk about penguins"
    changed = [t for t in rule_texts(edited.rules[0]) if t not in rule_texts(rule)]
    assert changed
    assert counting.texts == changed  # the other texts come from the embedding cache
    assert len(snapshots(cache_dir)) == 2
    again = Counting()
    assert file_matcher(book, embedder=again).rules == edited.rules
    assert again.texts == []


@pytest.mark.parametrize(
    ("damaged", "content"),
    [
        ("vectors.npy", b"\x93NUMPY truncated"),
        ("vectors.npy", None),
        ("rules.json", b"{not json"),
        ("rules.json", b'{"format": 99}'),
        ("confidence.json", b"[{]"),
    ],
)
def test_a_damaged_snapshot_is_rebuilt(book: Path, cache_dir: Path, damaged: str, content: bytes | None) -> None:
    first = file_matcher(book, embedder=Counting())
    (kept,) = snapshots(cache_dir)
    if content is None:
        (kept / damaged).unlink()
    else:
        (kept / damaged).write_bytes(content)
    shutil.rmtree(cache_dir / "embeddings")  # rebuilding embeds again: the damage was noticed
    counting = Counting()
    rebuilt = file_matcher(book, embedder=counting)
    assert results(rebuilt) == results(first)
    if damaged == "confidence.json":
        assert counting.texts == []  # only the statistics are measured again
    else:
        assert sorted(counting.texts) == sorted(all_texts(book))
    assert snapshots(cache_dir) == [kept]
    assert json.loads((kept / "confidence.json").read_bytes()) == first.stats().to_dict()
    vectors = np.load(kept / "vectors.npy")
    assert vectors.shape == (len(all_texts(book)), get_embedder().dim)
    shutil.rmtree(cache_dir / "embeddings", ignore_errors=True)  # the snapshot written again reads back whole
    reread = Counting()
    file_matcher(book, embedder=reread)
    assert reread.texts == []


def test_a_bad_file_raises_what_the_reader_raises_and_keeps_nothing(tmp_path: Path, cache_dir: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules: [{id: r}]", encoding="utf-8")
    with pytest.raises(RulebookError, match="condition_text"):
        file_matcher(bad, embedder=Counting())
    with pytest.raises(RulebookError, match="condition_text"):
        file_matcher(bad, embedder=Counting())
    assert not (cache_dir / "rulebooks").exists()
    with pytest.raises(InvalidInputError, match=r"missing\.yaml"):
        load_rules(tmp_path / "missing.yaml")
    with pytest.raises(InvalidInputError, match=r"missing\.yaml"):
        file_matcher(tmp_path / "missing.yaml", embedder=Counting())


def test_a_cache_folder_that_cannot_be_written_only_costs_time(
    book: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("NORMA_CACHE_DIR", str(blocker))
    counting = Counting()
    matcher = file_matcher(book, embedder=counting)
    assert sorted(counting.texts) == sorted(all_texts(book))
    assert len(matcher) == len(load_rules(book))
    assert blocker.read_text(encoding="utf-8") == ""


def test_the_least_recently_used_snapshots_are_evicted(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from norma.matching import _snapshot

    monkeypatch.setattr(_snapshot, "MAX_SNAPSHOTS", 2)
    rulebooks = cache_dir / "rulebooks"
    rulebooks.mkdir(parents=True)
    (rulebooks / "0123.json").write_text("[]", encoding="utf-8")  # what the CLI kept here before snapshots
    (rulebooks / "0123.gate-abc.json").write_text("{}", encoding="utf-8")
    books = []
    for n in range(3):
        path = tmp_path / f"book{n}.yaml"
        path.write_text(f"rules:\n  - id: r{n}\n    condition_text: the customer asks about topic {n}\n", "utf-8")
        books.append(path)
    first = file_matcher(books[0], embedder=Counting())
    file_matcher(books[1], embedder=Counting())
    assert len(snapshots(cache_dir)) == 2
    assert not list(rulebooks.glob("*.json"))  # the former cache files are gone
    (older,) = [p for p in snapshots(cache_dir) if (p / "rules.json").read_text().count("r0")]
    os.utime(older, (1, 1))  # book0's snapshot: long unused...
    file_matcher(books[0], embedder=Counting())  # ...until now: reading it marks it used
    file_matcher(books[2], embedder=Counting())  # a third: book1's, the least recently used, goes
    kept = {json_rules(p) for p in snapshots(cache_dir)}
    assert kept == {"r0", "r2"}
    counting = Counting()
    assert file_matcher(books[0], embedder=counting).rules == first.rules
    assert counting.texts == []  # still a snapshot


def json_rules(folder: Path) -> str:
    import json

    return str(json.loads((folder / "rules.json").read_text(encoding="utf-8"))["rules"][0]["id"])
