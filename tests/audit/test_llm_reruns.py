"""IR.6.02 with a real LLM client (norma.llm's OpenAI-compatible one) talking to a loopback HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from norma.audit import DocumentSet, RuleStatus, analyze
from norma.llm import OpenAIClient, RetryPolicy


class _Server(ThreadingHTTPServer):
    replies: list[str]
    prompts: list[str]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.prompts.append(body["messages"][-1]["content"])
        reply = self.server.replies[(len(self.server.prompts) - 1) % len(self.server.replies)]
        data = json.dumps({"model": body["model"], "choices": [{"message": {"content": reply}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.replies, httpd.prompts = [], []
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)  # quick shutdown
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


OUTPUT = "El `FlowShaper` usa la política inyectada (DNS §2.01)."
REQUEST = {"input": "Refactoriza el FlowShaper de NetShaper", "output": OUTPUT}


def _client(server: _Server) -> OpenAIClient:
    return OpenAIClient(f"http://127.0.0.1:{server.server_address[1]}/v1", "m", retry=RetryPolicy(max_retries=0))


@pytest.mark.model
def test_llm_reruns_that_agree(server: _Server, docs: DocumentSet) -> None:
    server.replies = [OUTPUT]
    report = analyze(REQUEST, docs, llm=_client(server))
    assert server.prompts == [REQUEST["input"]] * 2  # the prompt re-run twice
    assert {o.rule: o.status for o in report.rules}["IR.6.02"] is RuleStatus.PASSED
    assert report.metrics.determinism_score == pytest.approx(1.0, abs=1e-4)
    assert "2 re-ejecución(es) por m" in report.notes  # a Spanish input: Spanish notes


@pytest.mark.model
def test_llm_reruns_that_disagree(server: _Server, docs: DocumentSet) -> None:
    server.replies = ["Los paquetes Interactive se marcan con DSCP 46 (DR R3.01).", OUTPUT]
    report = analyze(REQUEST, docs, llm=_client(server))
    assert [v.rule for v in report.violations] == ["IR.6.02"]
    assert report.metrics.determinism_score is not None
    assert report.metrics.determinism_score < 0.95


@pytest.mark.model
def test_request_reruns_are_used_before_the_llm(server: _Server, docs: DocumentSet) -> None:
    server.replies = [OUTPUT]
    analyze({**REQUEST, "reruns": [OUTPUT]}, docs, llm=_client(server))
    assert len(server.prompts) == 1  # only the missing re-run was asked for


def test_llm_failure_is_not_evaluated_not_a_pass(docs: DocumentSet) -> None:
    dead = OpenAIClient("http://127.0.0.1:9/v1", "m", retry=RetryPolicy(max_retries=0), connect_timeout=0.5)
    report = analyze(REQUEST, docs, llm=dead)
    outcome = {o.rule: o for o in report.rules}["IR.6.02"]
    assert outcome.status is RuleStatus.NOT_EVALUATED
    assert "no pudo re-ejecutar" in outcome.reason
