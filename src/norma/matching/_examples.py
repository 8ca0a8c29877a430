"""Example messages for a rule, written by an LLM (ADR-002 option D), and a way to store them with the rule.

:func:`generate_examples` asks the model for ``n`` user messages the rule should match and parses its reply
whatever shape it takes (a JSON array, a JSON object holding one, a numbered or bulleted list, plain lines).
:func:`fill_examples` writes them into a tenant's rules through the :class:`~norma.store.RuleStore` contract, in
one atomic upsert, which re-embeds the changed rules. The examples become ordinary ``Rule.examples``: visible in
``norma rules`` output and rulebook exports, and editable like any other field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from norma.errors import ConfigError, InvalidInputError
from norma.llm import reply_text
from norma.rules import Rule

if TYPE_CHECKING:
    from norma.embeddings import Embedder
    from norma.llm import LLMClient
    from norma.store import RuleStore

__all__ = [
    "MAX_EXAMPLE_CHARS",
    "ExamplesResult",
    "examples_prompt",
    "fill_examples",
    "generate_examples",
    "parse_examples",
]

MAX_EXAMPLE_CHARS = 300
"""Longest example kept; longer ones are cut at a word boundary."""
MAX_EXAMPLES = 100
"""Most examples one call asks for."""

_SYSTEM = (
    "You write realistic messages that users send to a chat assistant. "
    "Reply with a JSON array of strings and nothing else."
)
_THINK = re.compile(r"^\s*<think>.*?</think>\s*", flags=re.DOTALL)
_FENCE = re.compile(r"```[\w-]*\s*\n?(.*?)```", flags=re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*•+]\s+|\(?\d{1,3}[.):]\s*|\[\d{1,3}\]\s*)")
_QUOTES = "\"'“”‘’`"


@dataclass(frozen=True)
class ExamplesResult:
    """What :func:`fill_examples` did, per rule id."""

    tenant_id: str
    version: int
    """The tenant's rule-set version after the write (unchanged when nothing was written)."""
    updated: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Rules given examples, with the examples written."""
    skipped: tuple[str, ...] = ()
    """Rules left alone because they already had examples (pass ``overwrite=True`` to replace them)."""
    failed: dict[str, str] = field(default_factory=dict)
    """Rules for which the model's reply held no usable example, with the reason; they are unchanged."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the fields."""
        return {
            "tenant_id": self.tenant_id,
            "version": self.version,
            "updated": {rule_id: list(examples) for rule_id, examples in self.updated.items()},
            "skipped": list(self.skipped),
            "failed": dict(self.failed),
        }


def examples_prompt(rule: Rule, n: int = 10) -> list[dict[str, str]]:
    """The chat messages asking for ``n`` user messages that ``rule`` should match."""
    _check_n(n)
    lines = [f"A rule of a chat assistant applies when: {rule.condition_text.strip()}"]
    if rule.action_text.strip():
        lines.append(f"When it applies, the assistant will: {rule.action_text.strip()}")
    lines += [
        f"Write {n} different messages a user might send that this rule should apply to.",
        "Vary the wording, length and tone; write each as the user would type it, in the first person.",
        f"Reply with a JSON array of {n} strings.",
    ]
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def parse_examples(text: str, *, max_chars: int = MAX_EXAMPLE_CHARS) -> list[str]:
    """The examples in a model's reply: a JSON array (or an object holding one), else one per list item or line.

    Bullets, numbering and surrounding quotes are removed, whitespace collapsed, blanks and case-insensitive
    repeats dropped (first kept), and each example cut to ``max_chars`` at a word boundary.
    """
    body = _THINK.sub("", text, count=1).strip()
    fence = _FENCE.search(body)
    if fence:
        body = fence.group(1).strip()
    items = _json_items(body)
    if items is None:
        items = [line for line in body.splitlines() if not _is_preamble(line)]
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        cleaned = _clean(item, max_chars)
        key = cleaned.casefold()
        if cleaned and key not in seen:
            seen.add(key)
            out.append(cleaned)
    return out


def generate_examples(
    rule: Rule,
    n: int = 10,
    *,
    llm: LLMClient | None = None,
    temperature: float = 0.7,
    seed: int | None = None,
    max_chars: int = MAX_EXAMPLE_CHARS,
) -> list[str]:
    """Up to ``n`` example user messages for ``rule``, from ``llm`` (default: :func:`norma.llm.get_llm`).

    Examples equal to the rule's condition are dropped. Raises :class:`~norma.errors.ConfigError` when no LLM is
    given or configured, and lets :class:`~norma.errors.BackendError` through when the model fails.
    """
    _check_n(n)
    client = llm if llm is not None else _default_llm()
    reply = reply_text(client.complete(examples_prompt(rule, n), temperature=temperature, seed=seed))
    condition = " ".join(rule.condition_text.split()).casefold()
    examples = [text for text in parse_examples(reply, max_chars=max_chars) if text.casefold() != condition]
    return examples[:n]


def fill_examples(
    store: RuleStore,
    tenant_id: str,
    rule_ids: Sequence[str] | None = None,
    *,
    llm: LLMClient | None = None,
    n: int = 10,
    overwrite: bool = False,
    embedder: Embedder | None = None,
    seed: int | None = None,
) -> ExamplesResult:
    """Generate examples for the tenant's rules (all, or ``rule_ids``) and store them in one atomic upsert.

    Rules that already have examples are skipped unless ``overwrite``. Every reply is collected before anything
    is written, so a :class:`~norma.errors.BackendError` (the model failed) leaves the store untouched; a
    :class:`~norma.errors.NotFoundError` is raised for an unknown rule id before the model is called.
    """
    _check_n(n)
    client = llm if llm is not None else _default_llm()
    if rule_ids is None:
        rules = store.list_rules(tenant_id)
    else:
        if isinstance(rule_ids, str):
            raise InvalidInputError("rule_ids must be a list of rule ids, not one string", location="rule_ids")
        rules = [store.get_rule(tenant_id, rule_id) for rule_id in dict.fromkeys(rule_ids)]
    updated: dict[str, tuple[str, ...]] = {}
    skipped: list[str] = []
    failed: dict[str, str] = {}
    changed: list[Rule] = []
    for rule in rules:
        if rule.examples and not overwrite:
            skipped.append(rule.id)
            continue
        examples = tuple(generate_examples(rule, n, llm=client, seed=seed))
        if not examples:
            failed[rule.id] = "the model's reply held no usable example"
            continue
        updated[rule.id] = examples
        changed.append(rule.model_copy(update={"examples": examples}))
    version = store.upsert_rules(tenant_id, changed, embedder=embedder) if changed else store.version(tenant_id)
    return ExamplesResult(tenant_id, version, updated, tuple(skipped), failed)


def _default_llm() -> LLMClient:
    from norma.llm import URL_ENV, get_llm

    client = get_llm()
    if client is None:
        raise ConfigError(
            "no LLM is configured to write rule examples",
            hint=f"set {URL_ENV} and NORMA_LLM_MODEL (run `norma docs llm`), or pass llm=",
        )
    return client


def _check_n(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_EXAMPLES:
        raise InvalidInputError(f"the number of examples must be an integer from 1 to {MAX_EXAMPLES}, not {n!r}")


def _json_items(body: str) -> list[str] | None:
    candidates = [body]
    start, end = body.find("["), body.rfind("]")
    if 0 <= start < end:
        candidates.append(body[start : end + 1])
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            lists = [value for value in data.values() if isinstance(value, list)]
            data = lists[0] if lists else None
        if isinstance(data, list):
            return [_item_text(item) for item in data]
    return None


def _item_text(item: object) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in ("message", "text", "example", "content"):
            if isinstance(item.get(key), str):
                return str(item[key])
    return ""


def _is_preamble(line: str) -> bool:
    stripped = line.strip()
    if not stripped:
        return True
    if _BULLET.match(line):
        return False
    lowered = stripped.lower()
    return stripped.endswith(":") or lowered.startswith(("here are", "here is", "sure", "certainly", "json"))


def _clean(text: str, max_chars: int) -> str:
    cleaned = " ".join(_BULLET.sub("", text, count=1).split())
    while len(cleaned) >= 2 and cleaned[0] in _QUOTES and cleaned[-1] in _QUOTES:
        cleaned = cleaned[1:-1].strip()
    cleaned = cleaned.rstrip(",").strip()
    while len(cleaned) >= 2 and cleaned[0] in _QUOTES and cleaned[-1] in _QUOTES:
        cleaned = cleaned[1:-1].strip()
    if len(cleaned) > max_chars:
        cut = cleaned[:max_chars]
        space = cut.rfind(" ")
        cleaned = (cut[:space] if space > max_chars // 2 else cut).rstrip(" ,;:")
    return cleaned
