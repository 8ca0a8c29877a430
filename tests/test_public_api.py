"""The public surface is explicit: every package's ``__all__`` is sorted, importable and complete."""

from __future__ import annotations
import __future__

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import norma


def _packages() -> list[str]:
    names = ["norma"]
    for info in pkgutil.walk_packages(norma.__path__, "norma."):
        leaf = info.name.rsplit(".", 1)[-1]
        if info.ispkg and not leaf.startswith("_"):
            names.append(info.name)
    return sorted(names)


def _public_names(module: ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not inspect.ismodule(value) and not isinstance(value, __future__._Feature)
    }


PACKAGES = _packages()


def test_subpackages_are_found() -> None:
    assert "norma" in PACKAGES
    assert "norma.cli" in PACKAGES


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported), f"{name}.__all__ is not sorted"
    assert len(exported) == len(set(exported)), f"{name}.__all__ has duplicates"


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_complete_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = set(module.__all__)
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what the package does not define: {missing}"
    unexported = _public_names(module) - exported
    assert not unexported, f"{name} defines public names missing from __all__: {sorted(unexported)}"


def test_version_is_exported() -> None:
    assert norma.__version__.count(".") == 2
    assert "__version__" in norma.__all__


def test_root_docstring_names_the_capabilities() -> None:
    doc = norma.__doc__ or ""
    for capability in ("rubrics", "matching", "audit", "names"):
        assert f"**{capability}** (``norma.{capability}``)" in doc
    assert "**checks and the turn check** (``norma.turns``)" in doc
    assert "Four capabilities" not in doc


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("Rubric", "norma.rubrics"),
        ("evaluate_events_against_rubric", "norma.rubrics"),
        ("RuleMatcher", "norma.matching"),
        ("tenant_matcher", "norma.matching"),
        ("analyze", "norma.audit"),
        ("quality_from_labels", "norma.names"),
        ("Rule", "norma.rules"),
        ("open_store", "norma.store"),
        ("get_embedder", "norma.embeddings"),
        ("TurnChecker", "norma.turns"),
        ("check_turn", "norma.turns"),
        ("TurnReport", "norma.turns"),
    ],
)
def test_root_entry_points_are_the_capabilities_own(name: str, home: str) -> None:
    assert name in norma.__all__
    assert getattr(norma, name) is getattr(importlib.import_module(home), name)


def test_root_names_nothing_else() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = norma.nothing_here  # type: ignore[attr-defined]


def test_import_norma_loads_no_capability() -> None:
    """The entry points are loaded on first use: ``import norma`` (and so ``norma.errors``) stays cheap."""
    import subprocess
    import sys

    code = "import sys, norma; print(sorted(m for m in sys.modules if m.startswith('norma')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['norma', 'norma._version', 'norma.errors']"


MATCHING = {
    "AdaptedGate", "CalibratedGate", "Diagnosis", "DroppedRule", "Enforcement", "EnforcementReason", "FixedGate",
    "Gate", "HeldOut", "LabelledMessage",
    "LabelledMessagesError", "MatchConfig", "MatchExplanation", "MatchResult", "MatchedRule", "MatchedRuleData",
    "NoGate", "Rule",
    "RuleMatcher", "RulebookEvaluation", "RulebookGate", "Scope", "SessionState", "TenantMatchers", "calibrate_gate",
    "candidate_matcher", "diagnose_rulebook", "evaluate_rulebook", "file_matcher", "fill_examples",
    "generate_examples", "load_labelled", "load_rules", "read_held_out", "snapshot_matcher", "synthesize_labelled",
    "tenant_gate", "tenant_matcher", "tenant_matchers",
}  # fmt: skip


def test_matching_exports_what_a_user_needs_and_no_study_hook() -> None:
    import norma.matching

    assert set(norma.matching.__all__) == MATCHING
    for hook in ("observe", "fit_gate", "Observed", "CALIBRATION_PRIOR", "GATE_MIN_PROBES", "probe_similarities"):
        with pytest.raises(AttributeError):
            getattr(norma.matching, hook)


def test_importing_matching_loads_none_of_its_modules_until_a_name_is_used() -> None:
    import subprocess
    import sys

    code = (
        "import sys, norma.matching\n"
        "print(sorted(m for m in sys.modules if m.startswith('norma.matching.')))\n"
        "norma.matching.MatchConfig\n"
        "print(sorted(m for m in sys.modules if m.startswith('norma.matching.')))\n"
    )
    before, after = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert before == "[]"
    assert after == "['norma.matching._config']"
