"""No hidden state (issue #57): nothing under src/norma writes the environment, and every module-level container
changed after import is named, with why, in docs/design/000-layout.md ("Process-wide state").

Both read the source with ``ast``: a write is an assignment or ``del`` of ``os.environ[...]``, a call of one of its
mutating methods, ``os.putenv`` or ``os.unsetenv``; a container is a module-level name bound to a list, dict or set
display or comprehension, or to a call of a container type, that the module changes (item assignment or ``del``,
augmented assignment, a mutating method).
"""

from __future__ import annotations

import ast
import functools
import re

from tests.conftest import REPO

SRC = REPO / "src" / "norma"
LAYOUT = REPO / "docs" / "design" / "000-layout.md"

_MUTATORS = {
    "add",
    "append",
    "appendleft",
    "clear",
    "discard",
    "extend",
    "insert",
    "move_to_end",
    "pop",
    "popitem",
    "popleft",
    "remove",
    "setdefault",
    "update",
    "__delitem__",
    "__setitem__",
}
_CONTAINERS = {
    "Counter",
    "OrderedDict",
    "WeakKeyDictionary",
    "WeakSet",
    "WeakValueDictionary",
    "defaultdict",
    "deque",
    "dict",
    "list",
    "set",
}


@functools.cache
def _modules() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found.append((name, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))))
    return found


def _is_environ(node: ast.AST) -> bool:
    """``os.environ`` (or ``environ`` imported from os)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "environ" and isinstance(node.value, ast.Name) and node.value.id == "os"
    return isinstance(node, ast.Name) and node.id == "environ"


def environment_writes(tree: ast.Module) -> list[int]:
    """Lines of ``tree`` that write the process environment."""
    lines = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Subscript) and _is_environ(t.value) for t in targets):
            lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            if _is_environ(func.value) and func.attr in _MUTATORS:
                lines.append(node.lineno)
            if func.attr in ("putenv", "unsetenv") and isinstance(func.value, ast.Name) and func.value.id == "os":
                lines.append(node.lineno)
    return sorted(lines)


def _container_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        mutable = isinstance(value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp | ast.SetComp)
        if isinstance(value, ast.Call):
            func = value.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            mutable = called in _CONTAINERS
        names.update(t.id for t in targets if isinstance(t, ast.Name) and mutable)
    return names


def changed_containers(tree: ast.Module) -> set[str]:
    """The module-level containers of ``tree`` that it changes."""
    names = _container_names(tree)
    changed = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            if isinstance(target, ast.Name) and target.id in names and node.func.attr in _MUTATORS:
                changed.add(target.id)
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Subscript):
                target = target.value
            elif not isinstance(node, ast.AugAssign):
                continue
            if isinstance(target, ast.Name) and target.id in names:
                changed.add(target.id)
    return changed


def documented_state() -> set[tuple[str, str]]:
    """(module, name) of each row of the "Process-wide state" table of docs/design/000-layout.md."""
    text = LAYOUT.read_text(encoding="utf-8")
    section = text.split("## Process-wide state", 1)[1].split("\n## ", 1)[0]
    rows = set()
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 5 or not cells[0].startswith("`"):
            continue
        module = cells[1].strip("`")
        rows.update((module, name) for name in re.findall(r"`([^`]+)`", cells[0]))
    return rows


def test_nothing_in_src_writes_the_environment() -> None:
    writes = [f"{module}:{line}" for module, tree in _modules() for line in environment_writes(tree)]
    assert writes == [], "pass configuration as arguments; give a child process its environment (env=)"


def test_every_module_level_container_changed_after_import_is_named_in_the_layout() -> None:
    changed = {(module, name) for module, tree in _modules() for name in changed_containers(tree)}
    undocumented = sorted(changed - documented_state())
    assert undocumented == [], "make it an object's that a caller holds, or name it in 000-layout.md with why"


def test_every_row_of_the_table_names_a_module_level_name_of_its_module() -> None:
    rows = documented_state()
    assert len(rows) >= 5
    trees = dict(_modules())
    for module, name in sorted(rows):
        tree = trees[module]
        assigned = {
            target.id
            for node in tree.body
            if isinstance(node, ast.Assign | ast.AnnAssign)
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name)
        }
        assert name in assigned, f"{module} has no module-level {name}"


def test_the_scan_sees_writes_and_changes() -> None:
    source = (
        "import os\nfrom os import environ\n_SEEN = {}\n_ROWS: list[int] = []\n_FIXED = {'a': 1}\n"
        "def f():\n    os.environ['X'] = '1'\n    environ.setdefault('Y', '2')\n    os.putenv('Z', '3')\n"
        "    del os.environ['X']\n    _SEEN['k'] = 1\n    _ROWS.append(2)\n"
        "    return _FIXED['a'], os.environ.get('X')\n"
    )
    tree = ast.parse(source)
    assert environment_writes(tree) == [7, 8, 9, 10]
    assert changed_containers(tree) == {"_SEEN", "_ROWS"}
