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
from norma.matching import MatchConfig
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


def test_a_stored_tenant_is_opened_at_an_earlier_version(rulebook: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'rules.db'}"
    edited = tmp_path / "edited.yaml"
    edited.write_text(RULEBOOK.replace('terms: ["refund policy"]', 'terms: ["refund rules"]'), encoding="utf-8")
    with open_store(url) as store:
        import_rulebook(store, rulebook)
        import_rulebook(store, edited)
    first = norma.open(tenant="acme", version=1, store=url, judge=None)
    latest = norma.open(tenant="acme", store=url, judge=None)
    assert (first.rules_version, latest.rules_version) == (1, 2)
    assert first.check("I want a refund for my order", GOOD).verdict is Verdict.PASS
    assert latest.check("I want a refund for my order", GOOD).verdict is Verdict.FAIL
    with pytest.raises(NotFoundError):
        norma.open(tenant="acme", version=3, store=url)


def test_a_tenants_matcher_is_opened_at_the_version_it_was_built_from(rulebook: Path, tmp_path: Path) -> None:
    """A batch worker builds the matcher of a stored tenant pinned to one version itself: ``open(matcher,
    version=N)`` reports that version, as ``open(tenant=...)`` does; rules that are no tenant's take none."""
    from norma.matching import snapshot_matcher

    url = f"sqlite:///{tmp_path / 'rules.db'}"
    with open_store(url) as store:
        import_rulebook(store, rulebook)
        matcher, version = snapshot_matcher(store, "acme"), store.version("acme")
    pinned = norma.open(matcher, version=version, judge=None)
    assert (version, pinned.rules_version) == (1, 1)
    report = pinned.check("I want a refund for my order", BAD)
    assert (
        report.to_dict()
        == norma.open(tenant="acme", store=url, judge=None).check("I want a refund for my order", BAD).to_dict()
    )
    assert norma.open(matcher, judge=None).check("I want a refund for my order", BAD).rules_version is None
    for rules in (rulebook, list(matcher.rules)):
        with pytest.raises(InvalidInputError, match="a version goes with a tenant"):
            norma.open(rules, version=1, judge=None)


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
        ({"rules": "x.yaml", "version": 1}, "version"),
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
    assert repr(turn) == "<TurnReport fail, reward none (0 passed, 0 failed, 0 skipped), audit fail>"


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


# --- the Python API's edges (issue #59, item 7) ---------------------------------------------------------------------

REFUND_ASK = "I want a refund for my order"


@pytest.mark.parametrize("message", ["", "   ", "\n\t"])
def test_an_empty_message_is_refused_as_the_cli_and_the_mcp_tools_refuse_it(rulebook: Path, message: str) -> None:
    opened = norma.open(rulebook, judge=None)
    with pytest.raises(InvalidInputError) as matched:
        opened.match(message)
    assert (str(matched.value), matched.value.location) == (
        "message: the message is empty (give the text to match)",
        "message",
    )
    with pytest.raises(InvalidInputError) as checked:
        opened.check(message, GOOD)
    assert (str(checked.value), checked.value.location) == (
        "message: the message is empty (give the user's message)",
        "message",
    )
    with pytest.raises(InvalidInputError) as many:
        opened.check_many([(REFUND_ASK, GOOD), (message, GOOD)])
    assert str(many.value) == "turns[1].message: the message is empty (give the user's message)"
    assert isinstance(many.value, norma.NormaError | ValueError)


def test_the_cli_refuses_the_same_empty_messages(rulebook: Path, run_cli: Any) -> None:
    checked = run_cli("check", "--rules", str(rulebook), "-m", "  ", "-o", GOOD)
    assert (checked.code, checked.err) == (2, "norma: error: message: the message is empty (give the user's message)\n")
    matched = run_cli("match", "--rules", str(rulebook), "  ")
    assert matched.code == 2
    assert matched.err.startswith("norma: error: MESSAGE is empty")


SESSION_HINT = "(run `norma docs matching` for the session fields)"


@pytest.mark.parametrize(
    ("message", "output", "session", "expected"),
    [
        (3, GOOD, None, "message: the message must be text, not int (pass the user's message as a string)"),
        (REFUND_ASK, None, None, "output: the output to check must be text, not NoneType (pass the AI's answer as a "
         "string)"),
        (REFUND_ASK, GOOD, 5, f"session: a session must be a mapping of fields, got int {SESSION_HINT}"),
        (REFUND_ASK, GOOD, {"turn": -1}, "session: invalid session: turn: Input should be greater than or equal to 0 "
         f"{SESSION_HINT}"),
    ],
)  # fmt: skip
def test_a_turn_that_is_not_text_or_has_a_bad_session_is_refused_where_it_is(
    rulebook: Path, message: object, output: object, session: object, expected: str
) -> None:
    opened = norma.open(rulebook, judge=None)
    with pytest.raises(InvalidInputError) as caught:
        opened.check(message, output, session)  # type: ignore[arg-type]
    assert str(caught.value) == expected
    with pytest.raises(InvalidInputError) as many:
        opened.check_many([(REFUND_ASK, GOOD), (message, output, session)])  # type: ignore[list-item]
    assert str(many.value) == f"turns[1].{expected}"


def _decided(report: TurnReport) -> tuple[object, ...]:
    """What a turn check decided: one embedding call for many messages moves the scores in their last bits."""
    return (
        report.verdict,
        report.reward,
        report.counts,
        [(m.rule_id, m.enforced) for m in report.matches],
        [(r.rule_id, r.verdict, r.score) for r in report.rules],
        [(c.rule_id, c.check_id, c.status, c.message) for c in report.checks],
    )


def test_check_many_takes_pairs_triples_and_turn_records_and_gives_what_check_gives(rulebook: Path) -> None:
    opened = norma.open(rulebook, judge=None)
    session = {"turn": 3}
    expected = [
        opened.check(REFUND_ASK, GOOD),
        opened.check(REFUND_ASK, BAD),
        opened.check("will it rain tomorrow", "No idea.", session),
    ]
    assert [r.verdict for r in expected] == [Verdict.PASS, Verdict.FAIL, Verdict.SKIP]
    shapes: list[list[Any]] = [
        [(REFUND_ASK, GOOD), (REFUND_ASK, BAD, None), ("will it rain tomorrow", "No idea.", session)],
        [[REFUND_ASK, GOOD], [REFUND_ASK, BAD], ["will it rain tomorrow", "No idea.", session]],
        [
            {"message": REFUND_ASK, "output": GOOD},
            {"id": "t2", "message": REFUND_ASK, "output": BAD, "session": None},
            {"id": 3, "message": "will it rain tomorrow", "output": "No idea.", "session": session},
        ],
        [(REFUND_ASK, GOOD), {"message": REFUND_ASK, "output": BAD}, ("will it rain tomorrow", "No idea.", session)],
    ]
    for turns in shapes:
        assert [_decided(r) for r in opened.check_many(turns)] == [_decided(r) for r in expected], turns
    generated = opened.check_many((m, o) for m, o in [(REFUND_ASK, GOOD), (REFUND_ASK, BAD)])
    assert [r.verdict for r in generated] == [Verdict.PASS, Verdict.FAIL]
    assert opened.check_many([]) == []


SHAPES = "a turn is a (message, output) pair, a (message, output, session) triple or a turn record"
SHAPE_HINT = 'write ("hi", "hello"), ("hi", "hello", {"turn": 2}) or {"message": "hi", "output": "hello"}'
NOT_A_LIST = "turns: check_many() takes a list of turns, not {} (each turn is " + SHAPES[10:] + "; check() checks one)"


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        ([("hi", "hello"), ("hi",)], f"turns[1]: {SHAPES}, not a tuple of 1 item ({SHAPE_HINT})"),
        ([("hi", "hello", None, "x")], f"turns[0]: {SHAPES}, not a tuple of 4 items ({SHAPE_HINT})"),
        ([("hi", "hello"), "hi"], f"turns[1]: {SHAPES}, not a str ({SHAPE_HINT})"),
        ([None], f"turns[0]: {SHAPES}, not a NoneType ({SHAPE_HINT})"),
        ([1], f"turns[0]: {SHAPES}, not an int ({SHAPE_HINT})"),
        (
            [{"message": "hi"}],
            'turns[0]: a turn record needs "message" and "output" (no "output" here) '
            '(write {"message": "...", "output": "...", "session": {}})',
        ),
        (
            [{"message": "hi", "output": "x", "reply": "y"}],
            "turns[0]: unknown field 'reply' in a turn record (a turn record has id, message, output, session)",
        ),
        (
            ("hi", "hello"),
            f"turns[0]: {SHAPES}, not a str ({SHAPE_HINT})",  # one pair, not a list of them: its first item
        ),
        ("hi", NOT_A_LIST.format("a str")),
        ({"message": "hi", "output": "x"}, NOT_A_LIST.format("a dict")),
        (42, NOT_A_LIST.format("an int")),
    ],
)
def test_check_many_refuses_anything_else_naming_the_bad_item(rulebook: Path, turns: Any, expected: str) -> None:
    opened = norma.open(rulebook, judge=None)
    with pytest.raises(InvalidInputError) as caught:
        opened.check_many(turns)
    assert str(caught.value) == expected
    assert caught.value.location == expected.split(":", 1)[0]


def test_the_counts_are_one_dict_a_property(rulebook: Path) -> None:
    report = norma.open(rulebook, judge=None).check(REFUND_ASK, BAD)
    assert report.counts == {"pass": 1, "fail": 1, "skip": 0}
    assert report.counts == report.to_dict()["counts"]
    assert isinstance(report.counts, dict)
    assert type(report.to_dict()["counts"]) is dict  # the JSON form is unchanged
    with pytest.raises(TypeError):
        report.counts()  # type: ignore[operator]  # a property now, as in to_dict(): not a method


def test_a_report_reads_in_one_line_and_prints_its_failures(rulebook: Path) -> None:
    opened = norma.open(rulebook, judge=None)
    bad = opened.check(REFUND_ASK, BAD)
    assert repr(bad) == "<TurnReport fail, reward 0.750 (1 passed, 1 failed, 0 skipped), failed refund/policy>"
    assert str(bad) == (
        "fail, reward 0.750 (1 passed, 1 failed, 0 skipped), failed refund/policy\n"
        "  failed refund/policy (error): mentions none of 'refund policy'"
    )
    good = opened.check(REFUND_ASK, GOOD)
    assert repr(good) == "<TurnReport pass, reward 1.000 (2 passed, 0 failed, 0 skipped)>"
    assert str(good) == "pass, reward 1.000 (2 passed, 0 failed, 0 skipped)"
    nothing = opened.check("will it rain tomorrow", "No idea.")
    assert repr(nothing) == "<TurnReport skip, reward none (0 passed, 0 failed, 0 skipped)>"
    assert repr([bad, good]) == f"[{bad!r}, {good!r}]"


def test_a_report_names_five_failed_checks_at_most(tmp_path: Path) -> None:
    checks = "".join(f'      - {{id: c{n}, kind: contains, terms: ["word{n}"]}}\n' for n in range(1, 8))
    path = tmp_path / "many.yaml"
    path.write_text(RULEBOOK.split("  - id: weather")[0].split("    checks:")[0] + "    checks:\n" + checks)
    report = norma.open(path, judge=None).check(REFUND_ASK, "Nothing.")
    assert repr(report) == (
        "<TurnReport fail, reward 0.000 (0 passed, 7 failed, 0 skipped), "
        "failed refund/c1, refund/c2, refund/c3, refund/c4, refund/c5 and 2 more>"
    )
    assert len(str(report).splitlines()) == 8  # the summary and every failed check


def test_a_match_result_reads_as_its_rules_with_their_confidence() -> None:
    book = REPO / "examples" / "rulebooks" / "banking-support.yaml"
    opened = norma.open(book, judge=None)
    found = opened.match("I lost my card")
    assert repr(found) == "<MatchResult 1 rule: lost-or-stolen-card governs 1.00>"
    low = norma.open(book, judge=None, config=MatchConfig(threshold=0.3)).match("I lost my card")
    assert repr(low) == (  # under a similarity threshold, the rules that pass it and do not govern: neighbours
        "<MatchResult 4 rules: lost-or-stolen-card governs 1.00, fraud-suspected neighbour 0.03, "
        "never-ask-full-pin neighbour 0.00, refund-card-payment neighbour 0.00>"
    )
    assert str(found) == repr(found)
    assert repr(found[0]) == "<MatchedRule lost-or-stolen-card governs 1.00, final score 0.883>"
    assert repr(opened.match("what is the weather like")) == "<MatchResult 0 rules>"
