"""Without Ray installed, ``--engine ray`` is one readable error with the install command, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.batch.conftest import NAMES
from tests.conftest import REPO

BLOCKER = '''
import sys

class _NoRay:
    """Act as if ray and pyarrow were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("ray", "pyarrow"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoRay())
'''


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO / "src")])}
    return subprocess.run(
        [sys.executable, "-m", "norma", *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_engine_ray_without_ray(tmp_path: Path) -> None:
    probe = _run(tmp_path, "--version")
    assert probe.returncode == 0
    result = _run(tmp_path, "names", "score", str(NAMES), "--engine", "ray")
    assert result.returncode == 2
    assert result.stderr == (
        "norma: error: the Ray engine (--engine ray) needs a package that is not installed "
        "(install it with: pip install 'norma-rules[ray]')\n"
    )
    assert result.stdout == ""
    parquet = _run(tmp_path, "names", "score", str(tmp_path / "sitecustomize.py"), "--output", "x.parquet")
    assert parquet.returncode == 2
    assert "Parquet input and output needs a package that is not installed" in parquet.stderr
    assert "pip install 'norma-rules[ray]'" in parquet.stderr
