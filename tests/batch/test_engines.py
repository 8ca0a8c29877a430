"""One job, the same results in this process and in a process pool (the Ray engine: test_ray.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from norma.audit import AuditConfig, analyze, load_documents, read_requests
from norma.batch import (
    AuditJob,
    BatchRecord,
    MatchJob,
    NamesJob,
    RubricJob,
    json_records,
    match_payload,
    run_job,
)
from norma.batch._ray import drop_nulls
from norma.errors import InvalidInputError
from norma.names import score_record
from norma.rubrics import evaluate_rubric, load_rubric_file
from tests.batch.conftest import AUDIT, AUDIT_DOCS, MESSAGES, RUBRIC, RULES
from tests.conftest import EXAMPLES


def _names_records(path: Path) -> list[BatchRecord]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines.insert(4, '{"name": "x"}')  # a bad record in the middle
    lines.insert(7, "not json")
    return [BatchRecord(index, f"line {index + 1}", text) for index, text in enumerate(lines)]


def test_names_local_and_pool_equal_the_scorer(names_file: Path) -> None:
    records = _names_records(names_file)
    job = NamesJob.make(hash_seed=3)
    local = run_job(job, records)
    pool = run_job(job, records, engine="pool", workers=2)
    assert local == pool
    assert [item.index for item in local] == list(range(len(records)))
    assert "lacks variations, labels" in str(local[4].error)
    assert local[7].error is not None
    assert local[7].error.startswith("not valid JSON")
    for item in local:
        if item.error is None:
            assert item.result == score_record(json.loads(records[item.index].payload), hash_seed=3)


def test_names_job_pickles_its_hash_seed_not_the_process_salt() -> None:
    assert NamesJob.make().options.hash_seed == 0
    assert NamesJob.make(hash_seeds=[1, 2]).options.hash_seeds == (1, 2)
    with pytest.raises(InvalidInputError, match="compat"):
        NamesJob.make(compat="other")


def test_unreadable_records_are_not_sent_and_keep_their_error() -> None:
    error = InvalidInputError("not valid JSON", source="f.jsonl:2")
    records = [BatchRecord(0, "line 1", '{"name": "a"}'), BatchRecord(1, "f.jsonl:2", error)]
    results = run_job(NamesJob.make(), records, engine="pool", workers=2)
    assert [item.index for item in results] == [0, 1]
    assert results[1].error == str(error)
    assert results[1].where == "f.jsonl:2"


def test_rubric_local_and_pool(outcomes_file: Path) -> None:
    records = json_records(outcomes_file)
    job = RubricJob.make(RUBRIC, pass_threshold=0.6)
    local = run_job(job, records)
    assert local == run_job(job, records, engine="pool", workers=2)
    rubric = load_rubric_file(RUBRIC)
    first = records[0].payload
    assert local[0].result == evaluate_rubric(rubric, outcome=first, pass_threshold=0.6)
    assert {item.result["passed"] for item in local if item.result} == {True, False}


def test_audit_local_and_pool_equal_analyze() -> None:
    config = AuditConfig(embeddings=False)
    pairs = list(read_requests(AUDIT))[:6]
    records = [BatchRecord(i, where, [where, request]) for i, (where, request) in enumerate(pairs)]
    job = AuditJob.make(AUDIT_DOCS, config)
    local = run_job(job, records)
    assert local == run_job(job, records, engine="pool", workers=2)
    documents = load_documents(AUDIT_DOCS)
    for item, (_, request) in zip(local, pairs, strict=True):
        assert item.result == analyze(request, documents, config).model_dump(mode="json")


def test_audit_bad_documents_folder_is_one_error(tmp_path: Path) -> None:
    job = AuditJob.make(tmp_path / "missing")
    records = [BatchRecord(0, "r:1", ["r:1", {}]), BatchRecord(1, "r:2", ["r:2", {}])]
    with pytest.raises(InvalidInputError):
        run_job(job, records, engine="pool", workers=2)


@pytest.mark.model
def test_match_results_do_not_depend_on_the_batch() -> None:
    payloads = [match_payload(text) for text in MESSAGES]
    records = [BatchRecord(i, f"m:{i + 1}", payload) for i, payload in enumerate(payloads)]
    job = MatchJob.make(RULES)
    work = job.start()
    assert work(payloads) == [work([payload])[0] for payload in payloads]
    together = run_job(job, records)
    assert [item.result for item in together] == [result for result, _ in work(payloads)]
    assert together[0].result is not None
    assert together[0].result["matches"][0]["rule_id"] == "refund-request"
    nothing = together[2].result
    assert nothing is not None
    assert (nothing["message"], nothing["matches"]) == (MESSAGES[2], [])
    assert nothing["gate"] == together[0].result["gate"]  # the gate applied, the same for every message


def test_unknown_engine_and_bad_workers() -> None:
    with pytest.raises(InvalidInputError, match="unknown engine"):
        run_job(NamesJob.make(), [], engine="spark")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="workers"):
        run_job(NamesJob.make(), [], workers=0)


def test_drop_nulls_undoes_arrow_padding() -> None:
    padded = {"a": 1, "b": None, "c": {"d": None, "e": [{"f": None, "g": 2}]}, "h": [None]}
    assert drop_nulls(padded) == {"a": 1, "c": {"e": [{"g": 2}]}, "h": [None]}


@pytest.mark.model
def test_a_check_batch_over_a_stored_tenant_reports_the_version_it_was_pinned_to(tmp_path: Path) -> None:
    """The workers open the matcher they build of a stored tenant, pinned to the job's version, with
    ``norma.open(matcher, version=N)``: each report says which version checked it and gives what
    ``norma.open(tenant=...)`` gives for the turn."""
    import norma
    from norma.batch import CheckJob, turn_payload
    from norma.store import import_rulebook, open_store

    book = EXAMPLES / "rulebooks" / "banking-support.yaml"
    edited = tmp_path / "edited.yaml"
    edited.write_text(book.read_text(encoding="utf-8").replace("tags: [fraud, urgent]", "tags: [fraud]"), "utf-8")
    url = f"sqlite:///{tmp_path / 'rules.db'}"
    with open_store(url) as store:
        import_rulebook(store, book)
        import_rulebook(store, edited)  # a second version
    job = CheckJob(MatchJob.for_tenant("northwind-bank", url))
    assert job.match.tenant_version == 2
    turns = [json.loads(line) for line in (EXAMPLES / "turns" / "banking.jsonl").read_text("utf-8").splitlines()]
    records = [BatchRecord(i, f"line {i + 1}", turn_payload(turn)) for i, turn in enumerate(turns)]
    opened = norma.open(tenant="northwind-bank", store=url, judge=None)
    for item, turn in zip(run_job(job, records), turns, strict=True):
        assert item.error is None
        report, alone = item.result.report, opened.check(turn["message"], turn["output"])
        assert (report.tenant_id, report.rules_version, alone.rules_version) == ("northwind-bank", 2, 2)
        assert (report.verdict, [m.rule_id for m in report.matches]) == (
            alone.verdict,
            [m.rule_id for m in alone.matches],
        )
        assert [(f.rule_id, f.check_id) for f in report.failures] == [(f.rule_id, f.check_id) for f in alone.failures]
