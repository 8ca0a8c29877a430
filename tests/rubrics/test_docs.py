"""The README's rubric example runs and prints what it says."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO


def _readme_rubric_example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Rubrics", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1
    return blocks[0]


def test_readme_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(_readme_rubric_example(), "README.md", "exec"), {})
    reward, passed = capsys.readouterr().out.split()
    assert float(reward) == pytest.approx((0.9 * 2 + 0.8) / 3)
    assert passed == "False"
