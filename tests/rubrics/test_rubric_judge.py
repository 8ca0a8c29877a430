"""Rubric criteria without a reward judged by an LLM (the loopback fake server): the library and ``norma rubric
judge`` on task rubrics and synth-ai's backend judge format, with exit codes and JSON output."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from norma.errors import RubricError
from norma.llm import Judge, JudgeCache, JudgeError, OllamaClient, RetryPolicy
from norma.rubrics import Rubric, backend_judge_rubric, judge_rubric, judge_rubric_file
from tests._llm_server import FakeLLMServer
from tests.conftest import CliResult

Run = Callable[..., CliResult]
FAST = RetryPolicy(max_retries=0)

TASK = {
    "version": "1",
    "goal_text": "Fix the login bug.",
    "criteria": [
        {"id": "tests", "description": "Tests pass.", "weight": 1.0},
        {"id": "explains", "description": "The answer explains the root cause.", "weight": 3.0, "required": True},
    ],
}
BACKEND = {
    "event": [{"id": "progress", "description": "Each step makes progress.", "weight": 1.0, "scale": "bounded"}],
    "outcome": [
        {"id": "solved", "description": "The task is solved.", "weight": 0.6, "scale": "bounded"},
        {"id": "clean", "description": "The final state is clean.", "weight": 0.4, "scale": "unbounded"},
    ],
}


def reply(passed: bool, score: float, reason: str) -> str:
    return json.dumps({"pass": passed, "score": score, "reason": reason})


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as running:
        yield running


@pytest.fixture
def llm_env(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeLLMServer:
    monkeypatch.setenv("NORMA_LLM_URL", server.url)
    monkeypatch.setenv("NORMA_LLM_MODEL", "llama3.2")
    monkeypatch.setenv("NORMA_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("NORMA_LLM_API_KEY", "NORMA_LLM_KIND", "NORMA_LLM_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    return server


def write(path: Path, data: object) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def judge_of(server: FakeLLMServer) -> Judge:
    return Judge(OllamaClient(server.url, "llama3.2", retry=FAST), cache=JudgeCache())


def test_given_rewards_are_kept_and_the_others_judged_with_the_same_arithmetic(server: FakeLLMServer) -> None:
    server.reply(reply(False, 0.5, "names the symptom only"))
    outcome = {"tests": 1.0, "answer": "The login failed; I restarted the server."}
    result = judge_rubric(Rubric.model_validate(TASK), judge_of(server), outcome=outcome, enforce_required=True)
    assert result["reward"] == 0.625  # (1.0 * 1 + 0.5 * 3) / 4
    assert result["per_criterion"]["explains"] == {"reward": 0.5, "weight": 3.0, "required": True}
    assert (result["given"], list(result["judged"]), result["model_calls"]) == (["tests"], ["explains"], 1)
    assert result["judged"]["explains"]["reason"] == "names the symptom only"
    assert (result["passed"], result["failed_required"]) == (True, [])
    user = server.requests[0].messages[1]["content"]
    assert "The answer explains the root cause.\n(The goal of the whole rubric: Fix the login bug.)" in user
    assert '"answer": "The login failed; I restarted the server."' in user  # the input is the evidence


def test_events_give_rewards_by_criterion_id_and_the_rest_is_evidence(server: FakeLLMServer) -> None:
    server.reply(reply(True, 0.8, "explains the token expiry"))
    events = [{"criterion_id": "tests", "reward": 0.0}, {"step": 1, "observation": "token expired"}]
    result = judge_rubric(Rubric.model_validate(TASK), judge_of(server), events=events)
    assert result["reward"] == pytest.approx(0.6)  # (0.0 * 1 + 0.8 * 3) / 4
    assert "token expired" in server.requests[0].messages[1]["content"]


def test_votes_are_asked_per_judged_criterion(server: FakeLLMServer) -> None:
    server.reply(reply(True, 1.0, "a")).reply(reply(False, 0.0, "b")).reply(reply(True, 0.5, "c"))
    result = judge_rubric(Rubric.model_validate(TASK), judge_of(server), outcome={"tests": 1}, votes=3)
    assert len(server.requests) == 3
    assert result["judged"]["explains"]["votes_for"] == 2
    assert result["reward"] == 0.625  # (1 + 0.5 * 3) / 4


def test_an_invalid_reply_is_an_error_not_a_reward(server: FakeLLMServer) -> None:
    server.reply("Looks good to me!")
    with pytest.raises(JudgeError):
        judge_rubric(Rubric.model_validate(TASK), judge_of(server), outcome={"tests": 1})


def test_the_backend_judge_format_gives_its_event_or_outcome_criteria() -> None:
    outcome = backend_judge_rubric(BACKEND, "outcome")
    assert [(c.id, c.weight) for c in outcome.criteria] == [("solved", 0.6), ("clean", 0.4)]
    assert outcome.aggregation == "weighted_sum"
    assert [c.id for c in backend_judge_rubric(BACKEND, "event").criteria] == ["progress"]


@pytest.mark.parametrize(
    ("data", "location", "message"),
    [
        ({"event": [], "outcome": "x"}, "outcome", "'outcome' must be a list of criteria"),
        ({"event": [], "outcome": []}, "outcome", "the backend judge rubric has no 'outcome' criteria"),
        ({"event": [], "outcome": [3]}, "outcome[0]", "a criterion must be an object"),
        ({"event": [], "outcome": [{"id": "a", "description": "d", "scale": "big"}]}, "outcome[0].scale", "scale is"),
        ({"event": [], "outcome": [{"id": "a", "description": "d", "weight": -1}]}, "outcome[0].weight", "positive"),
        ({"event": [], "outcome": [{"description": "d"}]}, "outcome[0].id", "Field required"),
    ],
)
def test_a_bad_backend_judge_rubric_names_the_field(data: dict[str, object], location: str, message: str) -> None:
    with pytest.raises(RubricError) as caught:
        backend_judge_rubric(data, "outcome", source="b.json")
    assert (caught.value.source, caught.value.location) == ("b.json", location)
    assert message in caught.value.message


def test_judge_rubric_file_reads_a_backend_judge_rubric(server: FakeLLMServer, tmp_path: Path) -> None:
    server.reply(reply(True, 1.0, "solved")).reply(reply(False, 0.5, "leftovers"))
    rubric = write(tmp_path / "crafter_backend_judge.json", BACKEND)
    outcome = write(tmp_path / "outcome.json", {"final": "all achievements"})
    result = judge_rubric_file(rubric, judge_of(server), outcome_path=outcome)
    assert result["rubric_format"] == "backend_judge"
    assert result["reward"] == pytest.approx(0.8)  # 1.0 * 0.6 + 0.5 * 0.4
    assert list(result["judged"]) == ["solved", "clean"]


# --- the command line -------------------------------------------------------------------------------------------


def test_cli_task_rubric_outcome_then_a_free_rerun(llm_env: FakeLLMServer, run_cli: Run, tmp_path: Path) -> None:
    llm_env.reply(reply(True, 0.75, "explains the expiry"))
    rubric = write(tmp_path / "task.json", TASK)
    outcome = write(tmp_path / "outcome.json", {"tests": 1.0, "answer": "the token expired"})
    first = run_cli("rubric", "judge", rubric, "--outcome", outcome)
    assert first.code == 0, first.err
    assert "reward: 0.8125 (weighted_sum)" in first.out  # (1 + 0.75 * 3) / 4
    assert "judged by llama3.2: 1 criteria, 1 model call" in first.out
    assert "explains: pass, score 0.75: explains the expiry" in first.out
    second = run_cli("rubric", "judge", rubric, "--outcome", outcome, "--format", "json")
    assert second.code == 0
    assert len(llm_env.requests) == 1  # the second run read the cache file
    payload = json.loads(second.out)
    assert (payload["reward"], payload["model_calls"], payload["rubric_format"]) == (0.8125, 0, "task")
    assert payload["judged"]["explains"]["cached"] == 1


def test_cli_backend_judge_events_json(llm_env: FakeLLMServer, run_cli: Run, tmp_path: Path) -> None:
    llm_env.reply(reply(False, 0.25, "goes in circles"))
    rubric = write(tmp_path / "crafter_backend_judge.json", BACKEND)
    events = write(tmp_path / "events.json", [{"step": 1, "action": "noop"}, {"step": 2, "action": "noop"}])
    result = run_cli("rubric", "judge", rubric, "--events", events, "--format", "json", "--pass-threshold", "0.5")
    assert result.code == 1  # 0.25 < 0.5
    payload = json.loads(result.out)
    assert (payload["reward"], payload["passed"], payload["rubric_format"]) == (0.25, False, "backend_judge")
    assert payload["judged"]["progress"]["reason"] == "goes in circles"


def test_cli_without_an_llm_exits_2_saying_how_to_configure_one(
    run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NORMA_LLM_URL", raising=False)
    rubric = write(tmp_path / "task.json", TASK)
    outcome = write(tmp_path / "outcome.json", {"tests": 1.0})
    result = run_cli("rubric", "judge", rubric, "--outcome", outcome)
    assert result.code == 2
    assert result.out == ""
    assert "no LLM is configured (set NORMA_LLM_URL and NORMA_LLM_MODEL" in result.err


def test_cli_an_invalid_reply_exits_2(llm_env: FakeLLMServer, run_cli: Run, tmp_path: Path) -> None:
    llm_env.reply('{"pass": true}')
    rubric = write(tmp_path / "task.json", TASK)
    outcome = write(tmp_path / "outcome.json", {"tests": 1.0})
    result = run_cli("rubric", "judge", rubric, "--outcome", outcome, "--no-cache")
    assert result.code == 2
    assert "the judge's reply is not a verdict: it has no 'score', 'reason'" in result.err


def test_cli_refuses_both_or_neither_input_and_a_bad_rubric(
    llm_env: FakeLLMServer, run_cli: Run, tmp_path: Path
) -> None:
    rubric = write(tmp_path / "task.json", TASK)
    assert run_cli("rubric", "judge", rubric).code == 2
    assert run_cli("rubric", "judge", rubric, "--events", rubric, "--outcome", rubric).code == 2
    bad = write(tmp_path / "bad_backend_judge.json", {"event": [], "outcome": [{"id": "a", "scale": "x"}]})
    result = run_cli("rubric", "judge", bad, "--outcome", write(tmp_path / "o.json", {}))
    assert result.code == 2
    assert "bad_backend_judge.json:outcome[0].scale: scale is 'x'" in result.err
    assert llm_env.requests == []
