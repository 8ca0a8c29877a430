"""The encoder a command embeds with when ``--model-dir`` chose one, handed to each library call it makes.

Without ``--model-dir`` a command passes nothing and the library's defaults apply (``$NORMA_MODEL_DIR``, else the
packaged all-MiniLM-L6-v2). With it, the command builds an :class:`Encoder` once and gives its embedder and the
folder's held-out statistics to every matcher it builds: the same as setting ``$NORMA_MODEL_DIR`` for the command,
without touching the environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from norma.embeddings import BertEmbedder
    from norma.matching import HeldOut, MatchConfig, RuleMatcher
    from norma.store import RuleStore

__all__ = ["Encoder", "chosen_encoder"]


@dataclass(frozen=True)
class Encoder:
    """The embedder of a model folder (the process's one instance, :func:`norma.embeddings.get_embedder`) and what
    the folder stores of the examples it held out (an adapted encoder's; None otherwise)."""

    embedder: BertEmbedder
    held_out: HeldOut | None

    @classmethod
    def of(cls, model_dir: Path) -> Encoder:
        """The encoder in the folder ``model_dir`` (resolved: its identity is the same from any working folder)."""
        from norma.embeddings import get_embedder
        from norma.matching import read_held_out

        folder = model_dir.resolve()
        return cls(get_embedder(folder), read_held_out(folder))

    def matcher_options(self) -> dict[str, Any]:
        """``embedder=`` and ``held_out=``, as :func:`~norma.matching.file_matcher` and
        :func:`~norma.matching.snapshot_matcher` take them."""
        return {"embedder": self.embedder, "held_out": self.held_out}

    def tenant_matcher(self, store: RuleStore, tenant_id: str, config: MatchConfig | None = None) -> RuleMatcher:
        """What :func:`norma.matching.tenant_matcher` gives (the stored vectors, new ones kept), with this encoder:
        the matchers of a :class:`~norma.matching.TenantMatchers` of the command's own, with its held-out
        statistics."""
        from norma.matching import TenantMatchers

        return TenantMatchers(store, held_out=self.held_out).get(tenant_id, embedder=self.embedder, config=config)


def chosen_encoder(model_dir: Path | None) -> Encoder | None:
    """The encoder of ``--model-dir`` (None when it was not given: the library's defaults apply)."""
    return None if model_dir is None else Encoder.of(model_dir)
