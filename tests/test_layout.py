"""The layout holds: layers point one way, no import cycles, the runtime never needs the rig.

Read from the source (every import statement, at module level, inside functions and under
``TYPE_CHECKING`` alike), so a crossing fails here before anyone trips over it.

The layers, lowest first: ``rules`` (pure geometry and rulesets), ``calibration`` (what
the user describes in files), ``vision`` (frames to observations, the live game, the match
file), ``webui`` (the pages), and the command line ``tablesight.py``. ``vision/rig`` (the
synthetic camera, the footage generator, the benchmarks) sits above them all: only tests,
``samples/make.py`` and ``tablesight bench`` use it.
"""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import rules

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("rules", "calibration", "vision", "webui")
LAYER = {"rules": 0, "calibration": 1, "vision": 2, "webui": 3, "tablesight": 4}
RIG = "vision.rig"
MAX_LINES = 1000


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _product_modules() -> dict[str, Path]:
    found = {_module_name(p): p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")}
    found["tablesight"] = REPO / "tablesight.py"
    return found


MODULES = _product_modules()


def _imports(path: Path) -> list[tuple[str, str | None]]:
    """Every product module ``path`` imports, with the function it is imported in (None at
    module level)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[str, str | None]] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = function
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                inner = function or child.name
            if isinstance(child, ast.Import):
                out.extend((alias.name, inner) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                base = child.module
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    out.append((sub if sub in MODULES else base, inner))
            visit(child, inner)

    visit(tree, None)
    return [(name, fn) for name, fn in out if name.split(".")[0] in LAYER]


def _resolve(name: str) -> str:
    """The product module an import names (a package's ``__init__`` where no module is)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


GRAPH = {
    module: sorted({_resolve(name) for name, _ in _imports(path)} - {module})
    for module, path in MODULES.items()
}


def test_the_layout_is_read() -> None:
    # the modules the rest of this file reasons about are really there
    for module in ("rules.session", "rules.observation", "vision.observe", "vision.game"):
        assert module in MODULES
    assert "rules.observation" in GRAPH["vision.observe"]


def test_no_import_cycles() -> None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in GRAPH.get(module, []):
            if state.get(target) == 1:
                cycle = [*stack[stack.index(target) :], target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                walk(target)
        stack.pop()
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state:
            walk(module)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.startswith(RIG)))
def test_lower_layers_never_import_higher_ones(module: str) -> None:
    mine = LAYER[module.split(".")[0]]
    higher = [t for t in GRAPH[module] if LAYER[t.split(".")[0]] > mine]
    assert higher == [], f"{module} imports from a higher layer: {higher}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.startswith(RIG)))
def test_the_runtime_never_imports_the_rig(module: str) -> None:
    uses = [(name, fn) for name, fn in _imports(MODULES[module]) if name.startswith(RIG)]
    if module == "tablesight":  # only the bench commands may, when they run
        uses = [(name, fn) for name, fn in uses if not (fn or "").startswith("bench")]
    assert uses == [], f"{module} imports the test rig: {uses}"


def test_rules_stands_alone() -> None:
    outside = {m: [t for t in GRAPH[m] if not t.startswith("rules")] for m in MODULES}
    assert {m: t for m, t in outside.items() if m.startswith("rules") and t} == {}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_product_module_is_over_a_thousand_lines(module: str) -> None:
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{module}: {lines} lines"


def test_a_crossing_is_caught(tmp_path: Path) -> None:
    """The reader sees an import inside a function and one under TYPE_CHECKING."""
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from webui.app import create_app\n"
        "def f():\n"
        "    from vision.rig.synth import render_table\n"
    )
    assert _imports(source) == [("webui.app", None), ("vision.rig.synth", "f")]


def test_rules_imports_neither_cv2_nor_flask() -> None:
    modules = [m.name for m in pkgutil.walk_packages(rules.__path__, "rules.")]
    code = (
        "import importlib, sys\n"
        f"for name in {['rules', *modules]!r}:\n"
        "    importlib.import_module(name)\n"
        "print(' '.join(sorted(m for m in ('cv2', 'flask') if m in sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
