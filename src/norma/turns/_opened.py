"""What :meth:`Norma.diff` and :meth:`Norma.coverage` read of an opened rulebook: the shape of a
:class:`~norma.turns.Norma`, so that their modules need not import the one that defines it (``_open`` calls them)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from norma.embeddings import Embedder
    from norma.llm import Judge
    from norma.matching import RuleMatcher
    from norma.rules import Rule
    from norma.turns._checker import TurnChecker

__all__ = ["Opened"]


@runtime_checkable
class Opened(Protocol):
    """A :class:`~norma.turns.Norma` as the diff and the coverage see it."""

    matcher: RuleMatcher
    _checker: TurnChecker
    embedder: Embedder | None
    source: Path | None

    @property
    def rules(self) -> tuple[Rule, ...]: ...

    @property
    def tenant_id(self) -> str: ...

    @property
    def rules_version(self) -> int | None: ...

    @property
    def judge(self) -> Judge | None: ...
