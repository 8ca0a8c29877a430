"""Small rulebooks the guard tests share, as YAML text: each rule a block of ``rules:`` lines, put together by
:func:`rulebook` in the order given (the order the rules are injected in, when several govern a turn)."""

from __future__ import annotations

__all__ = ["NO_CARDS", "REFUND", "WEATHER", "rulebook"]

REFUND = """\
  - id: refund
    condition_text: customer asks for a refund of an order
    action_text: explain the refund policy and give the form reference
    examples: ["I want my money back", "can I get a refund for my order"]
    checks:
      - {id: policy, kind: contains, terms: ["refund policy"]}
"""
"""An answer without "refund policy" fails its ``policy`` check (an ``error``)."""

WEATHER = """\
  - id: weather
    condition_text: customer asks about the weather forecast
    action_text: say you cannot forecast the weather
    examples: ["will it rain tomorrow"]
"""
"""A rule without checks."""

NO_CARDS = """\
  - id: no-cards
    condition_text: customer shares payment details
    action_text: never repeat a card number
    checks:
      - {id: no-card, kind: no_pii, kinds: [card], when: always}
"""
"""A card number in any answer fails it (``when: always``)."""


def rulebook(*rules: str, tenant: str = "acme") -> str:
    """A rulebook file's text with ``rules``, in that order."""
    return f"format: norma.rulebook/v1\ntenant: {tenant}\nrules:\n" + "".join(rules)
