"""A real model (scripts/llm_server.py: llama.cpp's server with SmolLM2-135M-Instruct, in process) behind norma's
OpenAI client and judge: plumbing and format, never the quality of a judgement. Skipped with one reason when the
server cannot start (tests/_real_llm.py); the script's own failures are tested without the model."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from norma.llm import Judge, JudgeError, JudgeVerdict, OpenAIClient, parse_vote
from tests._real_llm import SCRIPT, llm_server_script

MODEL = "smollm2-135m-instruct-q4_1"
TEXT = "I cannot share account numbers."
CRITERION = "The answer refuses to share an account number."


@pytest.mark.real_llm
def test_the_openai_client_gets_an_answer(real_llm_url: str) -> None:
    reply = OpenAIClient(real_llm_url, MODEL).chat("Say hello in one word.", max_tokens=8)
    assert reply.text.strip()
    assert (reply.model, reply.attempts) == (MODEL, 1)


@pytest.mark.real_llm
def test_the_same_prompt_at_temperature_0_gives_byte_identical_answers(real_llm_url: str) -> None:
    client = OpenAIClient(real_llm_url, MODEL)
    first = client.complete("Name a colour.", temperature=0.0, max_tokens=12)
    second = client.complete("Name a colour.", temperature=0.0, max_tokens=12)
    assert first
    assert first.encode() == second.encode()


@pytest.mark.real_llm
def test_the_judge_gets_a_parsed_verdict_through_response_format(real_llm_url: str) -> None:
    client = OpenAIClient(real_llm_url, MODEL)
    verdict = Judge(client, max_tokens=64).judge(TEXT, CRITERION)
    assert isinstance(verdict, JudgeVerdict)
    assert len(verdict.votes) == 1
    vote = verdict.votes[0]
    assert isinstance(vote.passed, bool)
    assert 0.0 <= vote.score <= 1.0
    assert isinstance(vote.reason, str)
    assert client.sends_schema is True  # the server took the schema: no fallback to the prompt alone


@pytest.mark.real_llm
def test_the_prompt_alone_does_not_give_a_verdict(real_llm_url: str) -> None:
    """Why the judge asks for structured output: the same messages without the schema get prose from this model
    (the team measured 5 of 5), which the strict reading refuses."""
    client = OpenAIClient(real_llm_url, MODEL)
    judge = Judge(client, max_tokens=64)
    reply = client.complete(judge.messages(TEXT, CRITERION), max_tokens=64, seed=0)
    with pytest.raises(JudgeError):
        parse_vote(reply, model=MODEL)


def test_a_model_file_with_the_wrong_checksum_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMA_CACHE_DIR", str(tmp_path))
    script = llm_server_script()
    bad = tmp_path / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    bad.parent.mkdir()
    bad.write_bytes(b"not a model")
    assert script.model_path() == bad
    with pytest.raises(script.Unavailable, match=r"^checksum mismatch: .* expected b179c952"):
        script.ensure_model()


def test_check_without_xllamacpp_says_so_in_one_line(tmp_path: Path) -> None:
    # -S: no site-packages, so no xllamacpp; the script needs nothing else (standard library only)
    done = subprocess.run(
        [sys.executable, "-S", str(SCRIPT), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"NORMA_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        "real model unavailable: xllamacpp is not installed: pip install 'xllamacpp==2026.10.11549' (make test does)\n"
    )


def test_the_makefile_installs_the_server_the_script_names() -> None:
    makefile = (SCRIPT.parents[1] / "Makefile").read_text(encoding="utf-8")
    assert re.findall(r"^LLM_SERVER_PACKAGE := (\S+)$", makefile, flags=re.MULTILINE) == ["xllamacpp==2026.10.11549"]
    assert llm_server_script().SERVER_PACKAGE == "xllamacpp==2026.10.11549"
