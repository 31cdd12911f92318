"""The layout holds: one folder a concern, layers point one way, no import cycles, the
runtime never needs the rig, and the installed wheel is one name.

Read from the source (every import statement, at module level, inside functions and under
``TYPE_CHECKING`` alike), so a crossing fails here before anyone trips over it.

The layers, lowest first, one a folder at the repository's top: ``rules`` (pure geometry
and rulesets), ``calibration`` (what the user describes in files), ``vision`` (pixels to
observations), ``match`` (the live game, the match file, the replay), ``tournament`` (the
MQTT link and the hub) and ``setup`` (the set-up page's session), ``tablesight.webui`` (the pages),
and the command line ``tablesight/cli.py``. ``rig`` (the synthetic camera, the footage
generator, the benchmarks) sits above them all: only tests, ``samples/make.py`` and
``tablesight bench`` use it. In the repository ``tablesight/`` links to each folder; the
wheel installs them under ``tablesight.``.
"""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import tablesight.rules as rules

REPO = Path(__file__).resolve().parent.parent
#: Each part's folder and layer; a module may import its own layer and those below.
LAYER = {
    "rules": 0,
    "calibration": 1,
    "vision": 2,
    "match": 3,
    "tournament": 4,
    "setup": 4,
    "webui": 5,
    "cli": 6,
    "rig": 7,
}
PARTS = tuple(p for p in LAYER if p != "cli")
RIG = "tablesight.rig"
MAX_LINES = 1000
#: The most of the runtime's lines one part may hold (the rig left out).
MAX_SHARE = 0.35
#: What vision (pixels to observations) has no business with.
NOT_IN_VISION = ("sqlite3", "paho", "flask", "waitress", "subprocess")


def _module_name(path: Path) -> str:
    parts = ["tablesight", *path.relative_to(REPO).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _product_modules() -> dict[str, Path]:
    found = {_module_name(p): p for part in PARTS for p in (REPO / part).rglob("*.py")}
    for path in (REPO / "tablesight").glob("*.py"):
        name = "tablesight" if path.stem == "__init__" else f"tablesight.{path.stem}"
        found[name] = path
    return found


MODULES = _product_modules()


def _part(module: str) -> str:
    """The part a module belongs to: its folder, or ``cli`` for ``tablesight/`` itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in PARTS else "cli"


def _imports(path: Path) -> list[tuple[str, str | None]]:
    """Every module ``path`` imports (the product's and others'), with the function it is
    imported in (None at module level)."""
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
    return out


def _product_imports(path: Path) -> list[tuple[str, str | None]]:
    return [(n, fn) for n, fn in _imports(path) if n.split(".")[0] == "tablesight"]


def _resolve(name: str) -> str:
    """The product module an import names (a package's ``__init__`` where no module is)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


GRAPH = {
    module: sorted({_resolve(name) for name, _ in _product_imports(path)} - {module})
    for module, path in MODULES.items()
}
RUNTIME = sorted(m for m in MODULES if not m.startswith(RIG))


def test_the_layout_is_read() -> None:
    # the modules the rest of this file reasons about are really there
    for module in (
        "tablesight.rules.session",
        "tablesight.rules.observation",
        "tablesight.vision.observe",
        "tablesight.match.game",
        "tablesight.cli",
    ):
        assert module in MODULES
    assert "tablesight.rules.observation" in GRAPH["tablesight.vision.observe"]
    assert _part("tablesight.cli") == "cli" and _part("tablesight.match.game") == "match"


def test_every_part_is_linked_from_the_package() -> None:
    # the checkout's tablesight/ holds the command line and a link to each folder
    for part in PARTS:
        link = REPO / "tablesight" / part
        assert link.is_symlink() and link.resolve() == REPO / part, part


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


@pytest.mark.parametrize("module", RUNTIME)
def test_lower_layers_never_import_higher_ones(module: str) -> None:
    mine = LAYER[_part(module)]
    higher = [
        t
        for t in GRAPH[module]
        if t != "tablesight" and LAYER[_part(t)] > mine and not t.startswith(RIG)
    ]
    assert higher == [], f"{module} imports from a higher layer: {higher}"


def test_parts_of_one_layer_stay_apart() -> None:
    # the tournament link and the set-up page share a layer but not their code
    crossing = [
        (m, t) for m in RUNTIME for t in GRAPH[m] if {_part(m), _part(t)} == {"tournament", "setup"}
    ]
    assert crossing == []


@pytest.mark.parametrize("module", RUNTIME)
def test_the_runtime_never_imports_the_rig(module: str) -> None:
    uses = [(n, fn) for n, fn in _product_imports(MODULES[module]) if n.startswith(RIG)]
    if module == "tablesight.cli":  # only the bench commands may, when they run
        uses = [(name, fn) for name, fn in uses if not (fn or "").startswith("bench")]
    assert uses == [], f"{module} imports the test rig: {uses}"


def test_rules_stands_alone() -> None:
    outside = {
        m: [t for t in GRAPH[m] if _part(t) != "rules"] for m in MODULES if _part(m) == "rules"
    }
    assert {m: t for m, t in outside.items() if t} == {}


def test_calibration_needs_only_rules() -> None:
    outside = {
        m: [t for t in GRAPH[m] if _part(t) not in ("rules", "calibration")]
        for m in MODULES
        if _part(m) == "calibration"
    }
    assert {m: t for m, t in outside.items() if t} == {}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _part(m) == "vision"))
def test_vision_is_pixels_to_observations(module: str) -> None:
    # no match file, no broker, no web server, no other process in the eye's code
    foreign = [name for name, _ in _imports(MODULES[module]) if name.split(".")[0] in NOT_IN_VISION]
    assert foreign == [], f"{module} imports {foreign}"


def test_no_part_holds_over_a_third_of_the_runtime() -> None:
    def lines(path: Path) -> int:
        return len(path.read_text(encoding="utf-8").splitlines())

    per_part: dict[str, int] = {}
    for module in RUNTIME:
        per_part[_part(module)] = per_part.get(_part(module), 0) + lines(MODULES[module])
    total = sum(per_part.values())
    shares = {part: round(n / total, 3) for part, n in per_part.items()}
    # every part is counted, and none is the bulk of the product
    assert set(shares) == set(LAYER) - {"rig"}
    assert max(shares.values()) <= MAX_SHARE, shares


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
        "    from tablesight.webui.app import create_app\n"
        "def f():\n"
        "    from tablesight.rig.synth import render_table\n"
    )
    assert _product_imports(source) == [
        ("tablesight.webui.app", None),
        ("tablesight.rig.synth", "f"),
    ]
    assert _part("tablesight.webui.app") == "webui"


def test_rules_imports_neither_cv2_nor_flask() -> None:
    modules = [m.name for m in pkgutil.walk_packages(rules.__path__, "tablesight.rules.")]
    code = (
        "import importlib, sys\n"
        f"for name in {['tablesight.rules', *modules]!r}:\n"
        "    importlib.import_module(name)\n"
        "print(' '.join(sorted(m for m in ('cv2', 'flask') if m in sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


@pytest.mark.slow
def test_the_wheel_installs_one_name(built_wheel: Path) -> None:
    """The wheel's top-level names are the product's own and its samples' data: no
    generic ``rules`` or ``vision`` lands in site-packages."""
    names = zipfile.ZipFile(built_wheel).namelist()
    top = {n.split("/")[0] for n in names}
    dist_info = built_wheel.name.split("-py")[0] + ".dist-info"
    assert top == {"tablesight", "tablesight_samples", dist_info}
    # each part came through the links whole: its modules, the games, the pages' files
    for part in PARTS:
        assert f"tablesight/{part}/__init__.py" in names
    assert "tablesight/rules/games/necromunda.toml" in names
    assert "tablesight/webui/templates/table.html" in names
    assert "tablesight/py.typed" in names
