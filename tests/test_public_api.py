"""The public surface is explicit: every package's ``__all__`` is sorted, importable and complete; it comes from one
table per package (``_PUBLIC``, and ``_INTERNAL`` for what only norma's own tools use), which the package's
``TYPE_CHECKING`` imports match exactly; it stays small; and no script imports a private module of norma."""

from __future__ import annotations
import __future__

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path
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


def _tables(module: ModuleType) -> tuple[dict[str, str], dict[str, str]]:
    public: dict[str, str] = module._PUBLIC
    internal: dict[str, str] = module._INTERNAL
    return public, internal


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_complete_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    public, internal = _tables(module)
    assert module.__all__ == sorted(public), f"{name}.__all__ is not its _PUBLIC table"
    assert not set(public) & set(internal), f"{name}: a name in both tables"
    missing = [n for n in [*public, *internal] if not hasattr(module, n)]
    assert not missing, f"{name}'s tables name what the package does not define: {missing}"
    untabled = _public_names(module) - set(public) - set(internal)
    assert not untabled, f"{name} defines public names in neither table: {sorted(untabled)}"


def _bound_by_imports(path: Path) -> dict[str, tuple[str, str]]:
    """What an ``__init__``'s imports from norma (module level and under ``if TYPE_CHECKING:``) and its aliases there
    bind: name -> (module, attribute); the loader's own imports (``_exports``) left out."""
    bound: dict[str, tuple[str, str]] = {}

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("norma"):
                for alias in node.names:
                    bound[alias.asname or alias.name] = (node.module or "", alias.name)
            elif isinstance(node, ast.If):
                visit(node.body)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
                for target in node.targets:
                    assert isinstance(target, ast.Name)
                    bound[target.id] = bound[node.value.id]

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return {
        name: (f"{module}.{attribute}", "*")
        if attribute.startswith("_") and attribute != name
        else (module, attribute)  # a module itself
        for name, (module, attribute) in bound.items()
        if not name.startswith("_") or name == "__version__"
    }


def _resolved(package: str, where: str, name: str) -> tuple[str, str]:
    module, _, attribute = where.partition(":")
    return (module if module.startswith("norma") else f"{package}.{module}", attribute or name)


@pytest.mark.parametrize("name", PACKAGES)
def test_type_checking_imports_are_exactly_the_tables(name: str) -> None:
    """mypy reads the imports, the package loads from the tables: the two say the same, name for name and module for
    module, so they cannot drift apart."""
    module = importlib.import_module(name)
    public, internal = _tables(module)
    tables = {n: _resolved(name, where, n) for n, where in {**public, **internal}.items()}
    assert module.__file__ is not None
    bound = _bound_by_imports(Path(module.__file__))
    assert bound == tables


def test_the_tables_reject_a_name_in_neither() -> None:
    import norma.audit

    with pytest.raises(AttributeError, match=r"module 'norma\.audit' has no attribute 'nothing_here'"):
        _ = norma.audit.nothing_here


MAX_PUBLIC_NAMES = 260
"""Issue #48: what a user calls, not what the command line uses (433 unique names before)."""


def _unique_public_names() -> set[str]:
    return {n for package in PACKAGES for n in importlib.import_module(package).__all__}


def test_the_public_surface_stays_small() -> None:
    names = _unique_public_names()
    assert len(names) <= MAX_PUBLIC_NAMES, f"{len(names)} unique public names (at most {MAX_PUBLIC_NAMES})"


def test_command_line_plumbing_is_not_public() -> None:
    import norma.batch
    import norma.cli
    import norma.mcp_server

    assert norma.cli.__all__ == []
    assert norma.mcp_server.__all__ == ["build_server"]
    assert "audit_shard_json" not in norma.batch.__all__
    assert norma.batch.audit_shard_json is not None  # still importable for the command line (internal table)


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
        ("Norma", "norma.turns"),
        ("open", "norma.turns"),
        ("Tenants", "norma.turns"),
        ("TurnReport", "norma.turns"),
    ],
)
def test_root_entry_points_are_the_capabilities_own(name: str, home: str) -> None:
    assert name in norma.__all__
    assert getattr(norma, name) is getattr(importlib.import_module(home), name)


def test_one_way_at_the_top_to_check_a_turn() -> None:
    """Issue #57: ``norma.open(rules).check(...)`` (or ``Tenants.get``) is the way. The one-shot helper and the old
    spelling ``TurnChecker(rules)`` are gone: neither is importable from ``norma`` nor ``norma.turns``, and the
    checker under a :class:`~norma.turns.Norma` is private to it."""
    import norma.turns
    from norma.rules import Rule
    from norma.turns._checker import TurnChecker as Engine

    for name in ("check_turn", "TurnChecker", "legacy_turn_checker"):
        assert not hasattr(norma, name), name
        assert not hasattr(norma.turns, name), name
        assert name not in dir(norma.turns), name
    with pytest.raises(ImportError):
        from norma.turns import TurnChecker  # noqa: F401
    assert not hasattr(Engine, "check")
    assert not hasattr(Engine, "check_many")
    opened = norma.open([Rule(id="one", condition_text="customer asks about fees")], judge=None)
    assert not hasattr(opened, "checker")


def test_root_names_nothing_else() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = norma.nothing_here  # type: ignore[attr-defined]


def test_import_norma_loads_no_capability() -> None:
    """The entry points are loaded on first use: ``import norma`` (and so ``norma.errors``) stays cheap."""
    import subprocess
    import sys

    code = "import sys, norma; print(sorted(m for m in sys.modules if m.startswith('norma')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['norma', 'norma._lazy', 'norma._version', 'norma.errors']"


MATCHING = {
    "CalibratedGate", "ConfidenceGate", "Diagnosis", "DroppedRule", "Enforcement", "FixedGate", "Gate", "HeldOut",
    "LabelledMessagesError", "MatchConfig", "MatchExplanation", "MatchResult", "MatchedRule", "NoGate", "Rule",
    "RuleMatcher", "Scope", "SessionState", "TenantMatchers", "calibrate_gate",
    "candidate_matcher", "diagnose_rulebook", "evaluate_rulebook", "file_matcher", "fill_examples",
    "generate_examples", "load_labelled", "load_rules", "read_held_out", "snapshot_matcher", "synthesize_labelled",
    "tenant_matcher", "tenant_matchers",
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


REPO = Path(__file__).resolve().parents[1]
SCRIPT_FOLDERS = ("benchmarks", "experiments", "scripts", "examples")


def _private_imports(path: Path) -> list[str]:
    """Each import of a private module of norma in a script (``norma._x``, ``norma.x._y``, ``from norma.x import
    _y``), and each string naming one (``importlib.import_module("norma.x._y")``), as ``line: what``."""

    def private(dotted: str) -> bool:
        parts = dotted.split(".")
        return parts[0] == "norma" and any(p.startswith("_") and not p.startswith("__") for p in parts[1:])

    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: {a.name}" for a in node.names if private(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [
                f"{node.lineno}: {node.module}.{a.name}" for a in node.names if private(f"{node.module}.{a.name}")
            ]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and private(node.value.strip()):
            found.append(f"{node.lineno}: {node.value!r}")
    return found


def test_a_private_import_is_found() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "s.py"
        script.write_text(
            "import norma.matching._pipeline as p\nfrom norma.names import _compat\nfrom norma._lazy import exports\n"
            "import importlib\nimportlib.import_module('norma.audit._models')\nfrom norma import __version__\n"
            "from norma.matching import RuleMatcher\n",
            encoding="utf-8",
        )
        assert _private_imports(script) == [
            "1: norma.matching._pipeline",
            "2: norma.names._compat",
            "3: norma._lazy.exports",
            "5: 'norma.audit._models'",
        ]


def test_scripts_use_public_names_only() -> None:
    """Benchmarks, experiments, scripts and examples import norma's packages (their ``__all__`` or internal table),
    never a private module: what they need that a user does not is in the package's ``_INTERNAL`` table."""
    scripts = [p for folder in SCRIPT_FOLDERS for p in sorted((REPO / folder).rglob("*.py"))]
    assert len(scripts) > 20
    bad = {str(p.relative_to(REPO)): found for p in scripts if (found := _private_imports(p))}
    assert not bad


CHECK_HOMES = {"norma", "norma.checks", "norma.rules", "norma.turns", "norma.testing", "norma.batch"}
"""Where a public name may say "check": the output checks (their models, evaluation, the turn check, its batch job
and test helpers). Old names kept for scripts (``norma.rubrics.check_rubric_file``) import, outside ``__all__``."""


def test_check_means_the_output_checks() -> None:
    elsewhere = sorted(
        f"{name}.{n}"
        for name in PACKAGES
        if name not in CHECK_HOMES
        for n in importlib.import_module(name).__all__
        if "check" in n.lower()
    )
    assert elsewhere == []


def test_renamed_names_keep_working_without_being_public() -> None:
    import norma.llm
    import norma.rubrics

    assert norma.rubrics.check_rubric is norma.rubrics.validate_rubric
    assert norma.rubrics.RubricCheck is norma.rubrics.RubricValidity
    assert norma.rubrics.check_rubric_inputs is norma.rubrics.validate_rubric_inputs
    assert not {"check_rubric", "RubricCheck", "check_rubric_inputs", "check_rubric_file"} & set(norma.rubrics.__all__)
    assert norma.rubrics.check_rubric_file(REPO / "examples" / "rubrics" / "code_review.json").valid
    assert hasattr(norma.llm, "ping_llm")
    assert not hasattr(norma.llm, "Verdict")  # the judge's is JudgeVerdict: one Verdict, norma.rules'
