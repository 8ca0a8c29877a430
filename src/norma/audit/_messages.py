"""Every text an audit report carries — violation descriptions, INFO findings, the reasons a rule was not
applicable or not evaluated, and notes — in English and Spanish (``AuditConfig.lang``; default: the language
of the request's input). Rule ids, severities, evidence and the report's keys never change with the language.

Rule titles, conditions, detections and exceptions are the rules' own (``AuditRule.title`` and the others: the
spec's Spanish; ``AuditRule.translations``: English). A message is a key and its ``str.format`` fields;
:func:`message` fills the template of one language. ``tests/audit/test_language.py`` checks that both languages
have every key with the same fields.
"""

from __future__ import annotations

from typing import Any

from norma.audit._language import Lang

__all__ = ["MESSAGES", "message"]

MESSAGES: dict[str, tuple[str, str]] = {
    # IR.0.01
    "ir001.none": (
        "Technical output without normative references: {what} and not one reference",
        "Output técnico sin referencias normativas: {what} y ninguna referencia",
    ),
    "ir001.what.code": ("code ({count} technical decision(s))", "código ({count} decisión(es) técnica(s))"),
    "ir001.what.decisions": ("{count} technical decision(s)", "{count} decisión(es) técnica(s)"),
    "ir001.what.verdict": ("an audit verdict", "un veredicto de auditoría"),
    "ir001.few": (
        "{majors} major technical decisions and only {references} normative reference(s): at least 1 per major "
        "decision",
        "{majors} decisiones técnicas mayores y solo {references} referencia(s) normativa(s): mínimo 1 por decisión "
        "mayor",
    ),
    # IR.0.02
    "ir002.unversioned": (
        "document_versions asks for {key} {version} but {name} declares no version",
        "document_versions pide {key} {version} pero {name} no declara versión",
    ),
    "ir002.mismatch": (
        "document_versions asks for {key} {version} but {name} is version {actual}",
        "document_versions pide {key} {version} pero {name} es la versión {actual}",
    ),
    # IR.0.03
    "ir003.inactive": (
        "{reference} cites {acronym}, which is not among the active documents (add it to active_documents, or "
        "give its document in the documents folder)",
        "{reference} cita {acronym}, que no está entre los documentos activos (añádalo a active_documents, o "
        "ponga su documento en la carpeta de documentos)",
    ),
    "ir003.unknown": (
        "{reference} cites {acronym}, a norm no document declares and norms.priority does not list: declare "
        "'acronym: {acronym}' in the front matter of the document it names (or map the document's file name to "
        "{acronym} in norms.file_names), or list {acronym} in norms.priority",
        "{reference} cita {acronym}, una norma que ningún documento declara y que norms.priority no incluye: "
        "declare 'sigla: {acronym}' en el front matter del documento al que se refiere (o asocie el nombre de "
        "archivo del documento a {acronym} en norms.file_names), o incluya {acronym} en norms.priority",
    ),
    "ir003.missing": (
        "{reference} does not exist in the active norms (normative hallucination)",
        "{reference} no existe en la normativa activa (alucinación normativa)",
    ),
    "ir003.conflict": (
        "{reference} ({section}) is in {documents} with the same priority: unresolved conflict (§6)",
        "{reference} ({section}) está en {documents} con la misma prioridad: conflicto no resuelto (§6)",
    ),
    # IR.3.01, IR.3.02
    "ir301.concept": (
        "concept '{term}' without context: not in the input (similarity {score:.2f} < {threshold:.2f}) nor in a "
        "cited norm",
        "concepto '{term}' sin contexto: no está en el input (similitud {score:.2f} < {threshold:.2f}) ni en una "
        "norma citada",
    ),
    "ir302.history": (
        "mentions an earlier decision ('{phrase}') without citing the turn: 'as I mentioned in [turn N]'",
        "menciona una decisión previa ('{phrase}') sin citar el turno: 'como mencioné en [turno N]'",
    ),
    # IR.4.01, IR.4.02
    "ir401.term": (
        "term '{term}' not present in the norms (best similarity {score:.2f} < {threshold:.2f})",
        "término '{term}' no presente en la normativa (similitud máxima {score:.2f} < {threshold:.2f})",
    ),
    "ir402.quote": (
        "quotation of {where} matching {ratio:.2f} < {threshold:.2f}: normative paraphrase (quote literally or mark "
        "it with 'in other words')",
        "cita de {where} con coincidencia {ratio:.2f} < {threshold:.2f}: parafraseo normativo (cite literal o marque "
        "'en otras palabras')",
    ),
    # IR.5.02
    "ir502.coverage": (
        "coverage_ratio {ratio:.2f} < {threshold:.2f}: {referenced} rule(s) cited for {decisions} technical decisions",
        "coverage_ratio {ratio:.2f} < {threshold:.2f}: {referenced} regla(s) citada(s) para {decisions} decisiones "
        "técnicas",
    ),
    # IR.6.02
    "ir602.similarity": (
        "similarity {score:.3f} < {threshold:.2f} between {a} and {b}: non-deterministic output",
        "similitud {score:.3f} < {threshold:.2f} entre {a} y {b}: salida no determinista",
    ),
    "ir602.output": ("output", "output"),
    "ir602.rerun": ("rerun {number}", "rerun {number}"),
    # IR.7.01, IR.7.02
    "ir701.inference": (
        "unrequested inference ('{phrase}') without the mark 'Non-normative suggestion:'",
        "inferencia no solicitada ('{phrase}') sin la marca 'Sugerencia no-normativa:'",
    ),
    "ir702.adornment": (
        "evaluative adornment '{phrase}' in a technical context",
        "adorno valorativo '{phrase}' en contexto técnico",
    ),
    "ir702.formal": (
        "excessively formal tone in a conversational context: {count} marker(s) ({markers}), tolerance {tolerance}",
        "tono excesivamente formal en contexto conversacional: {count} marca(s) ({markers}), tolerancia {tolerance}",
    ),
    # IR.8.01, IR.8.03
    "ir801.declared": (
        "the output says it cannot comply ('{phrase}') and still delivers a solution: an answer that stops should "
        "deliver no code or technical decisions",
        "el output dice que no puede cumplir ('{phrase}') y aun así entrega una solución: una respuesta que se "
        "detiene no debe entregar código ni decisiones técnicas",
    ),
    "ir801.errors": (
        "the output delivers code or technical decisions that break the norms ({rules}): an answer that cannot "
        "follow them should say which norm stops it instead of delivering a non-compliant solution (fixing "
        "{rules} clears this too)",
        "el output entrega código o decisiones técnicas que incumplen la normativa ({rules}): una respuesta que no "
        "puede cumplirla debe decir qué norma se lo impide en lugar de entregar una solución que la incumple "
        "(corregir {rules} también elimina esta)",
    ),
    "ir803.fail": (
        "FAIL issued ('{phrase}') for a communication misunderstanding (the user expresses '{frustration}'): a "
        "polite clarification is expected",
        "FAIL emitido ('{phrase}') ante un malentendido comunicacional (el usuario expresa '{frustration}'): se "
        "espera una aclaración cortés",
    ),
    # §7 INFO findings
    "info.coverage": (
        "coverage_ratio {value:.2f} below the optimum {optimum:.2f}",
        "coverage_ratio {value:.2f} por debajo del óptimo {optimum:.2f}",
    ),
    "info.determinism": (
        "determinism_score {value:.3f} below the optimum {optimum:.2f}",
        "determinism_score {value:.3f} por debajo del óptimo {optimum:.2f}",
    ),
    "info.drift": (
        "drift_score {value:.2f} above the optimum {optimum:.2f}",
        "drift_score {value:.2f} por encima del óptimo {optimum:.2f}",
    ),
    # why a rule did not run
    "why.disabled": ("disabled by configuration", "desactivada por configuración"),
    "why.strict": (
        "§4.02: only IR.7.01 and IR.8.03 apply to conversational turns (strict_applicability)",
        "§4.02: en turnos conversacionales solo aplican IR.7.01 e IR.8.03 (strict_applicability)",
    ),
    "why.mixed": ("mixed turn without technical segments", "turno mixto sin segmentos técnicos"),
    "why.empty": ("empty output", "output vacío"),
    "why.context": ("{context} context", "contexto {context}"),
    "why.no_documents.versions": (
        "no documents were given to compare document_versions with",
        "no se dieron documentos con los que comparar document_versions",
    ),
    "why.no_documents.references": (
        "no documents were given to resolve the references against",
        "no se dieron documentos contra los que resolver las referencias",
    ),
    "why.no_documents.terms": (
        "no documents were given to compare terms with",
        "no se dieron documentos con los que comparar los términos",
    ),
    "why.no_documents.quotes": (
        "no documents were given to compare quotations with",
        "no se dieron documentos con los que comparar las citas",
    ),
    "why.concepts_need_embeddings": (
        "{count} concept(s) need the embedding check ({problem}): {terms}",
        "{count} concepto(s) necesitan la comprobación por embeddings ({problem}): {terms}",
    ),
    "why.terms_need_embeddings": (
        "{count} term(s) not literally in the documents need the embedding check ({problem}): {terms}",
        "{count} término(s) que no están literalmente en los documentos necesitan la comprobación por embeddings "
        "({problem}): {terms}",
    ),
    "why.no_reruns": (
        "no re-runs: give 'reruns' in the request or configure an LLM client (NORMA_LLM_URL) to re-run the prompt",
        "sin re-ejecuciones: dé 'reruns' en la petición o configure un cliente LLM (NORMA_LLM_URL) que re-ejecute "
        "el prompt",
    ),
    "why.reruns_need_embeddings": (
        "the determinism check needs embeddings ({problem})",
        "la comprobación de determinismo necesita embeddings ({problem})",
    ),
    "why.llm_failed": (
        "the LLM could not re-run the prompt: {error}",
        "el LLM no pudo re-ejecutar el prompt: {error}",
    ),
    "why.embeddings_off": ("embeddings are off in the configuration", "los embeddings están desactivados"),
    "why.model_unavailable": ("embedding model unavailable: {error}", "modelo de embeddings no disponible: {error}"),
    # notes
    "note.not_evaluated": ("{rule} not evaluated: {reason}", "{rule} no evaluada: {reason}"),
    "note.overridden": (
        "{count} {rule} violation(s) overridden by {by} (§6 specificity)",
        "{count} violación(es) de {rule} anulada(s) por {by} (§6 especificidad)",
    ),
    "note.overridden_reason": ("overridden by {by} (§6 specificity)", "anulada por {by} (§6 especificidad)"),
    "note.declared": (
        "context_type declared {declared}, detected {detected}: rules applied as declared",
        "context_type declarado {declared}, detectado {detected}: reglas aplicadas según lo declarado",
    ),
    "note.reruns": ("{count} re-run(s) by {model}", "{count} re-ejecución(es) por {model}"),
}
"""Every text of a report but the titles: key -> (English, Spanish) ``str.format`` templates."""

_INDEX: dict[Lang, int] = {"en": 0, "es": 1}


def message(lang: Lang, key: str, /, **fields: Any) -> str:
    """The message ``key`` in ``lang``, its fields filled in (a :class:`KeyError` for an unknown key is a bug)."""
    return MESSAGES[key][_INDEX[lang]].format(**fields)
