"""Architecture rules that keep the data flowing one way."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import rules


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
