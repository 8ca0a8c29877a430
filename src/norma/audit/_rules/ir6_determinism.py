"""IR.6.02: determinism — the output and its re-runs say the same thing (embedding similarity >= 0.95)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

import numpy as np

from norma.audit._context import AuditContext
from norma.audit._models import Severity
from norma.audit._rule import AuditRule, Finding, NotEvaluated, RuleText
from norma.audit._text import parse_text
from norma.errors import NormaError
from norma.llm import reply_text

__all__ = ["IR_6_02", "normalise_run", "semantic_similarity"]

_VOLATILE = (
    re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"),
    re.compile(r"\b\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\b"),
    re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-fA-F]{12,}\b"),
    re.compile(r"\b\d+\.\d{3,}\b|\b\d{5,}\b"),
)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")


def normalise_run(text: str) -> list[str]:
    """A run as comparable chunks (its paragraphs): timestamps, GUIDs, long hex and long numbers (random data,
    the rule's exception) masked, whitespace collapsed, and list items in sorted order (enumeration order is
    tolerated)."""
    for pattern in _VOLATILE:
        text = pattern.sub("<v>", text)
    chunks = []
    for paragraph in parse_text(text).paragraphs:
        lines = [line.text.strip() for line in paragraph.lines]
        if not paragraph.code and all(_BULLET.match(line) for line in lines):
            lines = sorted(_BULLET.sub("", line) for line in lines)
        chunk = " ".join(" ".join(lines).split())
        if chunk:
            chunks.append(chunk)
    return chunks


def semantic_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Chunk-aligned similarity of two runs: each chunk's best cosine in the other run, averaged both ways."""
    if len(a) == 0 or len(b) == 0:
        return 1.0 if len(a) == len(b) else 0.0
    sims = a @ b.T
    return float(min(1.0, (sims.max(axis=1).mean() + sims.max(axis=0).mean()) / 2.0))


def _runs(ctx: AuditContext) -> tuple[list[str], str]:
    wanted = ctx.config.llm_reruns
    reruns = list(ctx.request.reruns)
    note = ""
    if len(reruns) < wanted and ctx.llm is not None:
        for _ in range(wanted - len(reruns)):
            reruns.append(reply_text(ctx.llm.complete(ctx.request.input, temperature=0.0)))
        note = ctx.say("note.reruns", count=wanted - len(ctx.request.reruns), model=ctx.llm.model)
    return [ctx.request.output, *reruns], note


def _check(ctx: AuditContext) -> Sequence[Finding] | NotEvaluated:
    if not ctx.request.reruns and ctx.llm is None:
        return NotEvaluated(ctx.say("why.no_reruns"))
    if ctx.embedder is None:
        return NotEvaluated(ctx.say("why.reruns_need_embeddings", problem=ctx.embedder_problem))
    try:
        runs, note = _runs(ctx)
    except NormaError as exc:
        return NotEvaluated(ctx.say("why.llm_failed", error=exc))
    if note:
        ctx.shared["rerun_note"] = note
    vectors = [ctx.embed(normalise_run(run)) for run in runs]
    pairs = [
        (i, j, semantic_similarity(vectors[i], vectors[j])) for i, j in itertools.combinations(range(len(runs)), 2)
    ]
    ctx.shared["determinism_score"] = sum(s for _, _, s in pairs) / len(pairs)
    threshold = ctx.config.ir_6_02_determinism_threshold
    worst = min(pairs, key=lambda p: p[2])
    if worst[2] >= threshold:
        return []
    names = [ctx.say("ir602.output"), *(ctx.say("ir602.rerun", number=k) for k in range(1, len(runs)))]
    return [
        Finding(
            ctx.say("ir602.similarity", score=worst[2], threshold=threshold, a=names[worst[0]], b=names[worst[1]]),
            None,
            f"{worst[2]:.3f}",
        )
    ]


IR_6_02 = AuditRule(
    id="IR.6.02",
    title="Determinismo (técnico)",
    severity=Severity.WARNING,
    check=_check,
    condition="output técnico con re-ejecuciones (campo reruns o un cliente LLM)",
    detection=(
        "similitud semántica (embeddings por párrafo, alineados) entre cada par de ejecuciones >= "
        "ir_6_02_determinism_threshold; orden de enumeraciones indiferente"
    ),
    exceptions=("marcas de tiempo (timestamps)", "ejemplos con datos aleatorios (GUIDs, hex y números largos)"),
    thresholds=("ir_6_02_determinism_threshold",),
    needs=("reruns", "embeddings"),
    translations={
        "en": RuleText(
            title="Determinism (technical)",
            condition="technical output with re-runs (the reruns field or an LLM client)",
            detection=(
                "semantic similarity (paragraph embeddings, aligned) between each pair of runs >= "
                "ir_6_02_determinism_threshold; the order of enumerations does not matter"
            ),
            exceptions=("timestamps", "examples with random data (GUIDs, hex and long numbers)"),
        )
    },
)
