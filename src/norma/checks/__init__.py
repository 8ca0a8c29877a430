"""Checks on rules, evaluated: does an AI output satisfy the executable checks its rules carry (issue #38)?

* :func:`evaluate_checks` — a rule's checks that apply to one output, each as a :class:`CheckResult`: ``pass`` /
  ``fail`` / ``skip`` (:class:`CheckStatus`), a one-line message, and the :class:`Span` values of the output that
  violated it (offsets, 1-based line and column, text; at most :data:`MAX_EVIDENCE`).
* :class:`CheckedOutput` — one output evaluated against many rules (``.evaluate(rule, matched=...)``), what their
  checks share (folded text, words, line index) computed once: what a turn check uses.

``judge`` checks ask the :class:`norma.llm.Judge` given to :func:`evaluate_checks` (majority of the check's votes,
cached); without one, or when the model fails or its reply is not a verdict, they are ``skip``, never ``pass``.

The checks themselves are data on the rule (``Rule.checks``, :mod:`norma.rules`), validated when the rule is built.
This package imports ``rules``, ``errors`` and ``_safety`` (and ``llm`` for the judge's type only); python-stdnum and
jsonschema load on first use. See docs/check.md.
"""

from __future__ import annotations

from norma.checks._evaluate import NO_LLM, CheckedOutput, evaluate_checks
from norma.checks._results import MAX_EVIDENCE, CheckResult, CheckStatus, Span

__all__ = ["CheckResult", "CheckStatus", "CheckedOutput", "MAX_EVIDENCE", "NO_LLM", "Span", "evaluate_checks"]
