"""docs/scale.md: its local Python example runs and prints what it says."""

from __future__ import annotations

import contextlib
import io
import os
import re

from tests.conftest import REPO

SCALE = (REPO / "docs" / "scale.md").read_text(encoding="utf-8")


def test_the_local_example_runs() -> None:
    blocks = [code for code in re.findall(r"```python\n(.*?)```", SCALE, flags=re.DOTALL) if "ray.init" not in code]
    assert len(blocks) == 1
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(blocks[0], "docs/scale.md", "exec"), {})
    finally:
        os.chdir(cwd)
    assert out.getvalue().startswith("engine local, 1 process: 5 records")
    assert "0.547" in out.getvalue()  # John Smith's final score under hash seed 0 (tests/names check the value)


def test_the_links_point_at_files_that_exist() -> None:
    for target in re.findall(r"\]\(([^)#]+)", SCALE):
        if not target.startswith("http"):
            assert (REPO / "docs" / target).exists(), target
    for path in re.findall(r"`(deploy/[^`\s]+)`", SCALE):
        assert (REPO / path).exists(), path
