"""norma.open: one object for a rulebook or a stored tenant, from which rules, match, check and audit are reached.

Real rulebook files, a real SQLite store and the real embedding model; the verdicts are the ones the rules' checks
give by hand (an answer without the refund policy fails the ``policy`` check).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import norma
from norma.errors import InvalidInputError, NotFoundError
from norma.rules import RulebookError, Verdict
from norma.store import import_rulebook, open_store
from norma.turns import Norma, TurnReport

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[2]

RULEBOOK = """\
format: norma.rulebook/v1
tenant: acme
rules:
  - id: refund
    condition_text: customer asks for a refund of an order
    action_text: explain the refund policy and give the form reference
    examples: ["I want my money back", "can I get a refund for my order"]
    checks:
      - {id: policy, kind: contains, terms: ["refund policy"]}
      - {id: reference, kind: regex, pattern: "REF-[0-9]{4}", weight: 3}
  - id: weather
    condition_text: customer asks about the weather forecast
    examples: ["will it rain tomorrow"]
"""

GOOD = "Our refund policy applies: fill in form REF-1234."
BAD = "Fill in form REF-1234."


@pytest.fixture
def rulebook(tmp_path: Path) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(RULEBOOK, encoding="utf-8")
    return path


def test_a_rulebook_opened_matches_checks_and_lists_its_rules(rulebook: Path) -> None:
    opened = norma.open(rulebook, judge=None)
    assert isinstance(opened, Norma)
    assert [r.id for r in opened.rules] == ["refund", "weather"]
    assert opened.tenant_id == "acme"
    assert opened.rules_version is None
    assert opened.match("can I get a refund for my order")[0].rule.id == "refund"
    good = opened.check("I want a refund for my order", GOOD)
    assert good.verdict is Verdict.PASS
    assert good.reward == 1.0
    bad = opened.check("I want a refund for my order", BAD)
    assert bad.verdict is Verdict.FAIL
    assert [(r.check_id, r.status) for r in bad.failures] == [("policy", Verdict.FAIL)]
    assert bad.reward == 0.75  # the reference (weight 3) passed, the policy (weight 1) failed
    many = opened.check_many([("I want a refund for my order", GOOD, None), ("I want my money back", BAD, None)])
    assert [r.verdict for r in many] == [Verdict.PASS, Verdict.FAIL]


def test_the_reward_criteria_are_built_once_and_kept_by_the_report(rulebook: Path) -> None:
    report = norma.open(rulebook, judge=None).check("I want a refund for my order", BAD)
    rubric = report.rubric
    assert rubric is report.rubric
    assert [(c.id, c.weight, c.required) for c in rubric.criteria] == [("refund", 4.0, True)]
    again = TurnReport.model_validate(report.model_dump())  # read back: equal, the rubric built on demand
    assert again == report
    assert [c.id for c in again.rubric.criteria] == ["refund"]
    assert "rubric" not in report.to_dict()


def test_a_stored_tenant_is_opened_at_its_version(rulebook: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'rules.db'}"
    with open_store(url) as store:
        import_rulebook(store, rulebook)
        import_rulebook(store, rulebook)  # unchanged: no new version
        version = store.version("acme")
        opened = norma.open(tenant="acme", store=store, judge=None)
    assert version == 1
    assert opened.rules_version == 1
    assert opened.check("I want a refund for my order", BAD).rules_version == 1
    by_url = norma.open(tenant="acme", store=url, judge=None)
    assert [r.id for r in by_url.rules] == ["refund", "weather"]
    assert by_url.check("I want a refund for my order", GOOD).verdict is Verdict.PASS
    with pytest.raises(NotFoundError, match="'other'"):
        norma.open(tenant="other", store=url)


def test_an_edited_rulebook_is_opened_again_and_an_unchanged_one_is_kept(rulebook: Path) -> None:
    opened = norma.open(rulebook, judge=None)
    assert opened.fresh() is opened
    rulebook.write_text(RULEBOOK.replace('terms: ["refund policy"]', 'terms: ["refund rules"]'), encoding="utf-8")
    edited = opened.fresh()
    assert edited is not opened
    assert edited.check("I want a refund for my order", GOOD).verdict is Verdict.FAIL
    assert edited.fresh() is edited


@pytest.mark.parametrize(
    ("kwargs", "location"),
    [
        ({}, "tenant"),
        ({"rules": "x.yaml", "tenant": "acme"}, "rules"),
        ({"rules": "x.yaml", "store": "sqlite:///x.db"}, "store"),
        ({"rules": "x.yaml", "judge": "disk"}, "judge"),
        ({"rules": 42}, "rules"),
    ],
)
def test_bad_arguments_are_refused_with_where(kwargs: dict[str, object], location: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        norma.open(**kwargs)  # type: ignore[arg-type]
    assert caught.value.location == location


def test_a_missing_rulebook_is_reported(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="cannot read the rulebook"):
        norma.open(tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text(RULEBOOK.replace("- id: weather", "- id: refund"), encoding="utf-8")
    with pytest.raises(RulebookError, match="duplicate"):
        norma.open(tmp_path / "bad.yaml")


def test_without_an_llm_the_default_judge_is_none(rulebook: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NORMA_LLM_URL", raising=False)
    assert norma.open(rulebook).judge is None


def test_an_output_is_audited_against_the_documents_given_to_open(rulebook: Path) -> None:
    audit = REPO / "examples" / "audit"
    request = json.loads((audit / "requests" / "fail_no_references.json").read_text(encoding="utf-8"))
    opened = norma.open(rulebook, judge=None, documents=audit / "docs", audit_config={"embeddings": False})
    report = opened.audit(request["output"], request["input"])
    assert report.result.value.upper() == "FAIL"  # the example request the audit CLI tests expect to FAIL
    assert "IR.8.01" in [v.rule for v in report.violations]
    turn = opened.check(request["input"], request["output"], audit=True)
    assert turn.audit == report


class _Counting:
    """The real embedder, counting the texts it is given."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.texts = inner, []  # type: list[str]
        self.model_id, self.dim = inner.model_id, inner.dim

    def embed(self, texts: list[str]) -> Any:
        self.texts.extend(texts)
        return self.inner.embed(texts)


def test_an_embedder_given_to_norma_embeds_every_message_it_matches_and_checks(rulebook: Path) -> None:
    plain = norma.open(rulebook, judge=None)
    counting = _Counting(plain.matcher.embedder)
    shared = Norma(plain.matcher, embedder=counting)  # type: ignore[arg-type]
    assert shared.match("can I get a refund for my order")[0].rule.id == "refund"
    assert shared.check("I want a refund for my order", GOOD).verdict is Verdict.PASS
    assert shared.check_many([("will it rain tomorrow", "No idea.", None)])[0].verdict is Verdict.SKIP
    assert counting.texts == [
        "can I get a refund for my order",
        "I want a refund for my order",
        "will it rain tomorrow",
    ]
    assert plain.check("I want a refund for my order", GOOD).verdict is Verdict.PASS  # the matcher's own
    assert len(counting.texts) == 3
