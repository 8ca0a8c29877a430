"""Everything the rules of one audit share, computed once and lazily: parsed texts, segments, references,
decisions, concepts, and embeddings memoised for the duration of the audit.

One context per :func:`~norma.audit.analyze` call; it is never shared between calls or threads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from norma.audit._concepts import Concept, extract_concepts, literal_in
from norma.audit._config import AuditConfig
from norma.audit._documents import DocumentSet
from norma.audit._language import Lang
from norma.audit._lexicon import Lexicon
from norma.audit._messages import message
from norma.audit._models import AuditRequest, ContextType
from norma.audit._references import (
    CitationSyntax,
    Claim,
    Decision,
    Reference,
    declared_names,
    find_claims,
    find_decisions,
    find_references,
    syntax_for,
)
from norma.audit._segments import Segment
from norma.audit._text import ParsedText, sentences, shorten
from norma.embeddings import Embedder

if TYPE_CHECKING:
    from norma.llm import LLMClient

__all__ = ["AuditContext"]


@dataclass
class AuditContext:
    """The state of one audit (see the module docstring)."""

    request: AuditRequest
    config: AuditConfig
    lexicon: Lexicon
    documents: DocumentSet | None
    input: ParsedText
    output: ParsedText
    detected: ContextType
    applied: ContextType
    segments: tuple[Segment, ...]
    embedder: Embedder | None
    lang: Lang = "en"
    """The language of the report's texts (``config.lang``, else the input's)."""
    embedder_problem: str = ""
    """Why there is no embedder (embeddings off, model missing)."""
    llm: LLMClient | None = None
    declared_acronyms: tuple[str, ...] = ()
    """The acronyms every loaded document declares, active or not (they are citable)."""
    findings_so_far: list[tuple[str, str, int | None, str]] = field(default_factory=list)
    """(rule id, severity, line, location) of the findings of the rules run before the meta rules."""
    shared: dict[str, object] = field(default_factory=dict)
    """What one rule computes for the metrics (novel concepts, determinism score)."""
    _vectors: dict[str, np.ndarray] = field(default_factory=dict)

    @cached_property
    def technical_lines(self) -> frozenset[int]:
        """Output lines the technical rules look at (all non-blank lines of technical segments)."""
        return frozenset(n for s in self.segments if s.kind is ContextType.TECHNICAL for n in s.lines)

    @cached_property
    def conversational_lines(self) -> frozenset[int]:
        return frozenset(n for s in self.segments if s.kind is ContextType.CONVERSATIONAL for n in s.lines)

    @property
    def has_technical(self) -> bool:
        return bool(self.technical_lines)

    @cached_property
    def syntax(self) -> CitationSyntax:
        """How the configured norms are cited."""
        return syntax_for(self.config.norms, self.declared_acronyms)

    @cached_property
    def references(self) -> list[Reference]:
        return find_references(self.output, set(self.technical_lines), self.config.reference_regexes, self.syntax)

    @cached_property
    def claims(self) -> list[Claim]:
        return find_claims(self.output, self.lexicon, set(self.technical_lines), self.syntax)

    @cached_property
    def decisions(self) -> list[Decision]:
        claims = self.claims
        return [
            d
            for d in find_decisions(self.output, self.lexicon, set(self.technical_lines))
            if not any(c.line == d.line and d.text in c.sentence for c in claims)
        ]

    @cached_property
    def major_decisions(self) -> list[Decision]:
        return [d for d in self.decisions if d.major]

    @cached_property
    def verdicts(self) -> list[tuple[int, str]]:
        """(line, marker) of the technical prose lines that state an audit's verdict ("viola", "complies")."""
        found = []
        for number in sorted(self.technical_lines):
            line = self.output.line(number)
            if line.code or line.blank:
                continue
            marker = self.lexicon.verdicts.search(line.text, line.folded)
            if marker is not None:
                found.append((number, marker))
        return found

    @cached_property
    def technical_content(self) -> tuple[int, str, str] | None:
        """IR.0.01's "output técnico": the first line of the technical segments that generates code (a code
        decision) or makes a technical decision or states an audit verdict, as (line, kind, evidence) with kind
        ``code``, ``decisions`` or ``verdict``; ``None`` when the output is none of them (obvious syntax only,
        explanations without decisions)."""
        candidates = [
            (d.line, "code" if d.kind != "statement" else "decisions", shorten(d.text)) for d in self.decisions
        ]
        candidates += [(line, "verdict", marker) for line, marker in self.verdicts]
        return min(candidates, key=lambda c: c[0]) if candidates else None

    @cached_property
    def rules_referenced(self) -> int:
        return len({r.key for r in self.references})

    @cached_property
    def concepts(self) -> list[Concept]:
        """Technical concepts of the technical lines, whitelisted ones and those the output introduces excluded."""
        return [c for c in self.all_concepts if not self.lexicon.whitelisted(c.term) and not self.introduces(c.term)]

    @cached_property
    def declared_names(self) -> frozenset[str]:
        """Names the output's own code declares (types, functions, members, parameters, assigned names)."""
        return declared_names(self.output)

    def introduces(self, term: str) -> bool:
        """Whether the output introduces ``term`` (or, for ``A.B``, ``A``): its code declares the name, and neither
        the input nor the normative documents use it. Such a name is neither implicit context (IR.3.01) nor drift
        (IR.4.01). A name the user gave stays a domain term, and a name the norms define stays theirs (used
        without citing them, it is implicit context), even when the output declares it."""
        declared = self.declared_names
        if term not in declared and term.split(".")[0] not in declared:
            return False
        if literal_in(term, self.input.folded):
            return False
        return self.documents is None or not self.documents.contains(term)

    @cached_property
    def all_concepts(self) -> list[Concept]:
        """Technical concepts of the technical lines, whitelisted ones included (the §7.03 denominator)."""
        return extract_concepts(self.output, self.technical_lines, exclude=self.not_concepts)

    @cached_property
    def not_concepts(self) -> frozenset[str]:
        """Words that name norms, never concepts: the configured acronyms and rule prefixes, the acronyms the
        documents declare and those the output cites."""
        cited = {r.document for r in self.references if r.document is not None}
        return self.config.norms.not_concepts | frozenset(self.declared_acronyms) | cited

    @cached_property
    def cited_documents(self) -> frozenset[str]:
        """Acronyms of the active documents the output cites (bare rule ids resolved by priority)."""
        cited = {r.document for r in self.references if r.document is not None}
        if self.documents is not None:
            for reference in self.references:
                if reference.document is None:
                    cited |= {s.document for s in self.documents.resolve(None, reference.section)}
        return frozenset(cited)

    @cached_property
    def concepts_without_input_context(self) -> list[Concept]:
        """IR.3.01's candidates: concepts neither literally in the input nor defined in a document the output
        cites (the embedding check decides the rest)."""
        pending = []
        for concept in self.concepts:
            if literal_in(concept.term, self.input.folded, self.input_tokens):
                continue
            if self.documents is not None and self.cited_documents.intersection(
                self.documents.containing(concept.term)
            ):
                continue
            pending.append(concept)
        return pending

    @cached_property
    def input_tokens(self) -> frozenset[str]:
        return frozenset(re.findall(r"\w+", self.input.folded))

    @cached_property
    def input_pieces(self) -> list[str]:
        """What a concept may be deduced from: the input's sentences and its concepts' words."""
        pieces = [s.strip() for line in self.input.lines if not line.blank for s in sentences(line.text)]
        pieces += [c.phrase for c in extract_concepts(self.input, exclude=self.not_concepts)]
        return list(dict.fromkeys(p for p in pieces if p))

    @cached_property
    def has_solution(self) -> bool:
        """The output delivers something: code or technical decisions (IR.8.01)."""
        return any(self.output.line(n).code for n in self.technical_lines) or bool(self.decisions)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` (memoised within this audit); only call when :attr:`embedder` is set."""
        if self.embedder is None:  # pragma: no cover - callers check first
            raise RuntimeError("no embedder")
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        buckets: dict[int, list[str]] = {}
        for text in missing:  # a batch is padded to its longest text: embed short and long texts apart
            words = len(text.split())
            buckets.setdefault(0 if words <= 4 else 1 if words <= 16 else 2, []).append(text)
        for bucket in buckets.values():
            for text, vector in zip(bucket, self.embedder.embed(bucket), strict=True):
                self._vectors[text] = vector
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])

    def prefetch_concepts(self) -> None:
        """Embed, in one call, what IR.3.01 and IR.4.01 may compare: every concept not literally in the input or
        not literally in the documents, and the input's pieces (one model call instead of three)."""
        if self.embedder is None or self.shared.get("prefetched"):
            return
        self.shared["prefetched"] = True
        wanted = [c.phrase for c in self.concepts if c in self.concepts_without_input_context]
        if self.documents is not None:
            wanted += [c.phrase for c in self.concepts if not self.documents.contains(c.term)]
        if wanted:
            self.embed([*wanted, *self.input_pieces])

    def say(self, key: str, /, **fields: object) -> str:
        """The message ``key`` in the report's language (norma.audit._messages)."""
        return message(self.lang, key, **fields)

    def line_location(self, line: int | None) -> str:
        return f"output line {line}" if line is not None else "output"
