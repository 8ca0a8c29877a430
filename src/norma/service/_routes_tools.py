"""Stateless capability routes: audit an output, validate / evaluate a rubric, score / query / generate names.

Any valid key (a tenant's or an admin's) may call them. Rubrics are accepted as JSON objects only: a string would
be read by the library as a file path or URL, which a server must not do for its callers.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from norma.audit import AuditReport, AuditRequest
from norma.errors import ConfigError, NormaError
from norma.names import NameScore
from norma.rubrics import RubricScore
from norma.service._auth import Principal
from norma.service._bodies import StrictJsonRoute
from norma.service._schemas import (
    PROBLEM_RESPONSES,
    NamesGenerated,
    NamesGenerateRequest,
    NamesQueryRequest,
    NamesQueryResponse,
    NamesScoreRequest,
    RubricEvaluateRequest,
    RubricValidateRequest,
    RubricValidation,
)
from norma.service._state import ServiceState, get_state

__all__ = ["router"]

router = APIRouter(prefix="/v1", responses=PROBLEM_RESPONSES, route_class=StrictJsonRoute)

State = Annotated[ServiceState, Depends(get_state)]
_log = logging.getLogger("norma.service")


async def any_caller(request: Request, state: State) -> Principal:
    return await state.authenticate(request)


Caller = Annotated[Principal, Depends(any_caller)]


def _documents(state: ServiceState) -> Any:
    """The server's audit documents; a folder that cannot be loaded is the operator's problem, not the caller's:
    ConfigError (503, a general message), the folder and the reason in the log only."""
    try:
        return state.documents()
    except NormaError as exc:
        _log.error("the audit documents cannot be loaded: %s", exc)
        raise ConfigError(
            "the server's audit documents cannot be loaded", hint="ask the operator (the server log has the details)"
        ) from None


@router.post("/audit", tags=["audit"], summary="Audit an AI output: PASS / FAIL / SKIP with violations by line")
async def audit(body: AuditRequest, state: State, caller: Caller) -> AuditReport:
    """The request of the analyzer spec (§1) in, its report (§2, with norma's extensions) out. The normative
    documents are the server's (``norma serve --audit-docs DIR``); re-runs for IR.6.02 come from the request's
    ``reruns`` or, when ``$NORMA_LLM_URL`` is set, from that LLM."""
    from norma.audit import analyze

    def work() -> AuditReport:
        return analyze(body, _documents(state), llm=state.llm())

    return await state.run(work)


@router.post("/rubrics/validate", tags=["rubrics"], summary="Validate a rubric; every problem with its field path")
async def rubric_validate(body: RubricValidateRequest, state: State, caller: Caller) -> RubricValidation:
    """The verdict of ``norma rubric validate``: ``valid=false`` with every issue for a rubric that breaks the
    format (the backend judge format included)."""
    from norma.rubrics import validate_rubric

    check = await state.run(validate_rubric, body.rubric, strict=body.strict)
    return RubricValidation(valid=check.valid, strict=check.strict, issues=check.issues, criteria=check.criteria)


@router.post("/rubrics/evaluate", tags=["rubrics"], summary="Turn judgement events or an outcome into a reward")
async def rubric_evaluate(body: RubricEvaluateRequest, state: State, caller: Caller) -> RubricScore:
    from norma.rubrics import evaluate_rubric

    scored = await state.run(
        evaluate_rubric,
        body.rubric,
        events=body.events,
        outcome=body.outcome,
        enforce_required=body.enforce_required,
        pass_threshold=body.pass_threshold,
        aggregator=body.aggregator,
    )
    return RubricScore.model_validate(scored)


@router.post("/names/score", tags=["names"], summary="The MIID validator's score of a set of name variations")
async def names_score(body: NamesScoreRequest, state: State, caller: Caller) -> NameScore:
    from norma.names import score_record

    record = {"name": body.name, "variations": body.variations, "labels": body.labels}
    scored = await state.run(score_record, record, compat=body.compat, metrics=body.metrics, hash_seed=body.hash_seed)
    return NameScore.model_validate(scored)


@router.post("/names/query", tags=["names"], summary="A validator's query: random labels and the query text")
async def names_query(body: NamesQueryRequest, state: State, caller: Caller) -> NamesQueryResponse:
    from norma.names import build_query

    query = await state.run(build_query, body.name, body.seed)
    return NamesQueryResponse(
        labels=query.labels, template=query.template, name=query.name, phrased_by=query.phrased_by, text=query.text
    )


@router.post("/names/generate", tags=["names"], summary="Name variations built to score well for these labels")
async def names_generate(body: NamesGenerateRequest, state: State, caller: Caller) -> NamesGenerated:
    from norma.names import generate_variations

    variations = await state.run(
        generate_variations,
        body.name,
        body.count,
        body.phonetic_similarity,
        body.orthographic_similarity,
        body.rules,
        body.rule_percentage,
        body.seed,
        compat=body.compat,
        hash_seed=body.hash_seed,
    )
    return NamesGenerated(name=body.name, variations=variations)
