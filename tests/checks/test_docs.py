"""docs/check.md's example rulebook is valid and does what the page says; its table names every kind."""

from __future__ import annotations

import re

from norma._safety import load_yaml
from norma.checks import CheckStatus, evaluate_checks
from norma.rules import CHECK_KINDS, load_rulebook
from tests.conftest import REPO

PAGE = (REPO / "docs" / "check.md").read_text(encoding="utf-8")


def test_the_example_rulebook_loads_and_its_checks_give_the_documented_verdicts() -> None:
    block = re.search(r"```yaml\n(.*?)```", PAGE, flags=re.DOTALL)
    assert block is not None
    book = load_rulebook(load_yaml(block.group(1)))
    refund, cards = book.rules
    results = evaluate_checks(refund, "Our refund policy: fill in form REF-2231.", matched=True)
    assert [(r.check_id, r.status) for r in results] == [
        ("mentions-policy", CheckStatus.PASS),
        ("gives-reference", CheckStatus.PASS),
        ("brief", CheckStatus.PASS),
        ("polite", CheckStatus.SKIP),
    ]
    # "Card 4111 1111 1111 1111": the card number is at 5-24, found although the rule did not match
    unmatched = evaluate_checks(cards, "Card 4111 1111 1111 1111", matched=False)
    assert [(r.check_id, r.status, r.weight, [(s.start, s.end) for s in r.evidence]) for r in unmatched] == [
        ("no-card-number", CheckStatus.FAIL, 3.0, [(5, 24)])
    ]


def test_the_table_names_every_kind() -> None:
    kinds = PAGE[PAGE.index("| kind | fields | fails when |") :]
    rows = re.findall(r"^\| `([a-z_]+)` \|", kinds[: kinds.index("\n\n")], flags=re.MULTILINE)
    assert rows == list(CHECK_KINDS)
