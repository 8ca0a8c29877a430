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

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.checks._evaluate import NO_LLM as NO_LLM
    from norma.checks._evaluate import CheckedOutput as CheckedOutput
    from norma.checks._evaluate import evaluate_checks as evaluate_checks
    from norma.checks._results import MAX_EVIDENCE as MAX_EVIDENCE
    from norma.checks._results import CheckResult as CheckResult
    from norma.checks._results import CheckStatus as CheckStatus
    from norma.checks._results import Span as Span

_PUBLIC: dict[str, str] = {
    "CheckedOutput": "_evaluate",
    "CheckResult": "_results",
    "evaluate_checks": "_evaluate",
    "Span": "_results",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "CheckStatus": "_results",
    "MAX_EVIDENCE": "_results",
    "NO_LLM": "_evaluate",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
