"""The tests share through fixtures (the conftest.py files), never by importing one
another: under ``--import-mode=importlib`` an imported test module is a second copy, and
a fixture imported with it is set up once more."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_test_file_imports_the_tests_package() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                # a relative import can only name another file of the tests
                names = ["." * node.level + (node.module or "")]
            else:
                continue
            found += [
                f"{path.relative_to(TESTS.parent)}:{node.lineno}: {name}"
                for name in names
                if name == "tests" or name.startswith(("tests.", "."))
            ]
    assert found == [], "tests import test modules; share through a fixture:\n" + "\n".join(found)
