"""norma's tools on the official MCP SDK's ``MCPServer``: typed, described arguments (the input schemas), an output
schema per tool, and every failure returned as a tool error (``isError``) with what / where / hint.

Each tool is an adapter: its arguments go to one :class:`~norma.mcp_server._served.Served` method, whose model is
serialised once here: the call's structured content (checked against the output schema by the SDK, made from the
same model) and, as JSON, its text.

This module imports the SDK (the ``mcp`` extra): only :func:`norma.mcp_server.build_server` imports it. Its
annotations are evaluated at definition (no ``from __future__ import annotations``): the SDK reads them to build the
schemas.
"""

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from norma._version import __version__
from norma.audit import AuditReport
from norma.mcp_server._outputs import CheckTurnOutput, MatchRulesOutput, RuleListOutput, ToolFailure
from norma.mcp_server._served import Served, failure
from norma.names import NameScore
from norma.rubrics import RubricScore

__all__ = ["TOOLS", "make_server"]

TOOLS = ("match_rules", "check_turn", "audit_output", "score_rubric", "score_name_variations", "list_rules")
"""The tools :func:`make_server` registers, in order."""

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

_INSTRUCTIONS = (
    "norma is a rules engine for AI behaviour. match_rules finds the rules of a rulebook (or a tenant) that apply to "
    "a user message; list_rules lists them; check_turn checks an AI answer against the rules that apply to the "
    "user's message (and those that always apply): a verdict (pass, fail, skip), a reward in [0, 1] and each "
    "failed check with the line and column of the output that broke it; audit_output audits an AI answer against "
    "executable rules (PASS, FAIL or SKIP with violations by line); score_rubric turns judgements into a reward; "
    "score_name_variations scores MIID name variations. A failed call returns isError with what went wrong, where "
    "and a hint."
)

Tenant = Annotated[
    str | None,
    Field(
        description="A tenant of the rule store the server serves (--store); omit it for the served rulebook "
        "(--rules).",
        max_length=200,
    ),
]


def _failure_text(problem: ToolFailure) -> str:
    """The failure in lines a model reads: ``Error: message``, ``where: source:location``, ``hint: ...``."""
    lines = [f"{problem.error}: {problem.message}"]
    where = ":".join(part for part in (problem.source, problem.location) if part)
    if where:
        lines.append(f"where: {where}")
    if problem.hint:
        lines.append(f"hint: {problem.hint}")
    return "\n".join(lines)


def _call(tool: str, work: Callable[[], BaseModel]) -> CallToolResult:
    """Run one library call: its model, serialised once, as structured content and JSON text, or any failure as a
    tool error (the server keeps serving)."""
    try:
        payload = work().model_dump(mode="json")
    except Exception as exc:  # every failure is the caller's to read, never a crashed server
        problem = failure(tool, exc)
        return CallToolResult(
            content=[TextContent(type="text", text=_failure_text(problem))],
            structured_content=problem.model_dump(),
            is_error=True,
        )
    text = json.dumps(payload, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


def _schema_failure(tool: str, exc: ValidationError) -> CallToolResult:
    """Arguments outside a tool's input schema (the SDK validates them before the tool runs), answered as norma's own
    errors are: an InvalidInputError naming the argument, structured and in lines."""
    first = exc.errors()[0]
    location = ".".join(str(part) for part in first["loc"]) or None
    more = exc.error_count() - 1
    problem = ToolFailure(
        error="InvalidInputError",
        message=f"{first['msg']}" + (f" (and {more} more)" if more else ""),
        source=tool,
        location=location,
        hint=f"the tool's input schema (tools/list) gives each argument of {tool} and its bounds",
    )
    return CallToolResult(
        content=[TextContent(type="text", text=_failure_text(problem))],
        structured_content=problem.model_dump(),
        is_error=True,
    )


class _Server(MCPServer):
    """``MCPServer`` whose input-schema errors come back structured, like every other failure of a norma tool."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError) and name in TOOLS:
                return _schema_failure(name, exc.__cause__)
            raise


def make_server(served: Served, *, log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING") -> MCPServer:
    """An ``MCPServer`` named ``norma`` with the tools of :data:`TOOLS` over ``served``."""
    server: MCPServer = _Server(
        "norma", title="norma", version=__version__, instructions=_INSTRUCTIONS, log_level=log_level
    )

    @server.tool(title="Match rules", annotations=_READ_ONLY)
    def match_rules(
        message: Annotated[str, Field(description="The user message to match.", min_length=1, max_length=20_000)],
        tenant: Tenant = None,
        top_k: Annotated[
            int | None, Field(description="At most this many rules (default 10), best first.", ge=1, le=100)
        ] = None,
        scenario: Annotated[
            str | None, Field(description="The active scenario: its scenario rules become candidates.")
        ] = None,
        step: Annotated[str | None, Field(description="The active step: its step rules become candidates.")] = None,
        tags: Annotated[
            list[str] | None, Field(description="Only rules with at least one of these tags.", max_length=100)
        ] = None,
        explain: Annotated[bool, Field(description="Also list the rules left out and why (dropped).")] = False,
    ) -> Annotated[CallToolResult, MatchRulesOutput]:
        """The rules that apply to a user message, best first, each with its scores (final, similarity, BM25) and an
        explanation of how the final score was made; the gate applied too. The same JSON as `norma match --format
        json`."""
        return _call(
            "match_rules",
            lambda: served.match_rules(
                message, tenant=tenant, top_k=top_k, scenario=scenario, step=step, tags=tags, explain=explain
            ),
        )

    @server.tool(title="Check a turn", annotations=_READ_ONLY)
    def check_turn(
        message: Annotated[str, Field(description="The user's message.", min_length=1, max_length=20_000)],
        output: Annotated[
            str,
            Field(description="The AI's answer to check, complete; evidence lines and columns are 1-based in it."),
        ],
        tenant: Tenant = None,
        session: Annotated[
            dict[str, Any] | None,
            Field(
                description="The conversation's state: active_scenario_id, active_step_id, turn, fire_counts "
                "({rule id: count}), last_fired_turn ({rule id: turn}); scoped rules and cooldowns use it."
            ),
        ] = None,
        audit: Annotated[
            bool, Field(description="Also run the IR.x.y audit on the output (its FAIL fails the turn).")
        ] = False,
    ) -> Annotated[CallToolResult, CheckTurnOutput]:
        """Check one turn: the rules that apply to the user's message (and the rules whose checks always apply),
        the AI's output checked against each rule's checks, the verdict (fail when an error check fails) and a
        reward in [0, 1]; each check's status, severity, message and evidence (line, column, text). Judge checks ask
        the server's LLM ($NORMA_LLM_URL) and are skipped without one. The same JSON as `norma check --format
        json`."""
        return _call(
            "check_turn", lambda: served.check_turn(message, output, tenant=tenant, session=session, audit=audit)
        )

    @server.tool(title="Audit an AI output", annotations=_READ_ONLY)
    def audit_output(
        input: Annotated[str, Field(description="The user's prompt, complete.")],
        output: Annotated[str, Field(description="The AI's answer, complete; violation lines are its 1-based lines.")],
        context_type: Annotated[
            Literal["technical", "conversational", "mixed"] | None,
            Field(description="The context as declared by the caller; omit it to detect it from the input."),
        ] = None,
        active_documents: Annotated[
            list[str] | None,
            Field(description="File names of the normative documents in force; omit for every served document."),
        ] = None,
        document_versions: Annotated[
            dict[str, str] | None,
            Field(description="Expected version per document acronym (DNS, DR, ICR, RED, IRA) or file name."),
        ] = None,
        reruns: Annotated[
            list[str] | None, Field(description="Outputs of the same prompt run again (the determinism rule).")
        ] = None,
        lang: Annotated[
            Literal["auto", "en", "es"],
            Field(description="Language of the report's texts; auto: the language of the input."),
        ] = "auto",
        embeddings: Annotated[
            bool, Field(description="Run the embedding checks (false: reported as not evaluated; faster).")
        ] = True,
    ) -> Annotated[CallToolResult, AuditReport]:
        """Audit one AI output against norma's executable rules (IR.x.y) and the normative documents the server
        serves: result PASS, FAIL or SKIP, violations with rule id, severity and output line, metrics, and what each
        rule did. The same report as `norma audit REQUEST.json --format json` (`norma audit schema --of report`)."""
        request: dict[str, Any] = {"input": input, "output": output}
        optional = {
            "context_type": context_type,
            "active_documents": active_documents,
            "document_versions": document_versions,
            "reruns": reruns,
        }
        request.update({key: value for key, value in optional.items() if value is not None})
        return _call("audit_output", lambda: served.audit_output(request, lang=lang, embeddings=embeddings))

    @server.tool(title="Score against a rubric", annotations=_READ_ONLY)
    def score_rubric(
        rubric: Annotated[
            dict[str, Any] | str,
            Field(
                description="The rubric: a JSON object (version, goal_text, aggregation, criteria: [{id, "
                "description, weight, required}]) or the path of a JSON / YAML rubric file on the server."
            ),
        ],
        events: Annotated[
            list[dict[str, Any]] | None,
            Field(description="Judgement events [{criterion_id, reward}], reward in [0, 1]; give this or outcome."),
        ] = None,
        outcome: Annotated[
            dict[str, Any] | None,
            Field(description="An outcome {criterion_id: value} (a number in [0, 1] or a boolean); or events."),
        ] = None,
        enforce_required: Annotated[
            bool, Field(description="Fail the verdict when a required criterion is below the threshold.")
        ] = False,
        pass_threshold: Annotated[
            float | None, Field(description="Give a pass / fail verdict (passed) at this reward.")
        ] = None,
        aggregator: Annotated[
            str | None, Field(description="The aggregator of a 'custom' rubric (min, max, geometric_mean...).")
        ] = None,
    ) -> Annotated[CallToolResult, RubricScore]:
        """Turn judgement events or an outcome into a reward with a rubric (weighted criteria, synth-ai
        compatible): the reward, each criterion's reward, weight and required flag, and a verdict when asked for.
        The same JSON as `norma rubric eval --format json`."""
        return _call(
            "score_rubric",
            lambda: served.score_rubric(
                rubric,
                events=events,
                outcome=outcome,
                enforce_required=enforce_required,
                pass_threshold=pass_threshold,
                aggregator=aggregator,
            ),
        )

    @server.tool(title="Score name variations", annotations=_READ_ONLY)
    def score_name_variations(
        name: Annotated[str, Field(description="The original name.", max_length=200)],
        variations: Annotated[list[str], Field(description="The variations to score.", max_length=500)],
        labels: Annotated[
            dict[str, Any],
            Field(
                description="The validator's query labels: variation_count, phonetic_similarity and "
                "orthographic_similarity ({Light, Medium, Far}: share), rule_based ({selected_rules, "
                "rule_percentage})."
            ),
        ],
        compat: Annotated[
            Literal["miid", "stable"],
            Field(description="miid: the validator's exact score (depends on hash_seed); stable: the same always."),
        ] = "miid",
        hash_seed: Annotated[
            int, Field(description="The validator's PYTHONHASHSEED to score under (compat miid).", ge=0, le=4294967295)
        ] = 0,
        metrics: Annotated[bool, Field(description="Also return every metric of the scorer.")] = False,
    ) -> Annotated[CallToolResult, NameScore]:
        """Score MIID name variations as the validator does: the final score, the base score, rule compliance and
        counts. One result row of `norma names score --format json`."""
        return _call(
            "score_name_variations",
            lambda: served.score_name_variations(
                name, variations, labels, compat=compat, hash_seed=hash_seed, metrics=metrics
            ),
        )

    @server.tool(title="List rules", annotations=_READ_ONLY)
    def list_rules(tenant: Tenant = None) -> Annotated[CallToolResult, RuleListOutput]:
        """The rules of the served rulebook, or of a tenant of the served store, sorted by id: id, condition_text
        (when the rule applies), action_text, priority, scope, scenario and step, enabled, tags."""
        return _call("list_rules", lambda: served.list_rules(tenant))

    return server
