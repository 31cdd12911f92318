"""``tablesight demo`` from an installed wheel, away from the checkout: the sample match
is in the package, and the demo referees it.

The wheel is built from the checkout (``pip wheel``, the build backend from the package
index) and installed without its dependencies into a new virtual environment; the
dependencies come from the test's own environment, whose site-packages is put on that
environment's path behind its own (by a ``.pth`` line: the checkout's editable install
of TableSight, itself made of ``.pth`` files there, is not taken along). The test checks
that ``tablesight`` is imported from the new environment, not the checkout.
"""

from __future__ import annotations

import json
import re
import site
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run(*args: str | Path, cwd: Path, timeout: float = 300) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.slow
def test_the_demo_plays_from_an_installed_wheel(tmp_path: Path, built_wheel: Path) -> None:
    env, elsewhere = tmp_path / "env", tmp_path / "elsewhere"
    elsewhere.mkdir()
    wheel = built_wheel
    size_mb = wheel.stat().st_size / 1e6
    print(f"wheel {wheel.name}: {size_mb:.1f} MB")
    assert size_mb < 20

    _run(sys.executable, "-m", "venv", "--without-pip", env, cwd=tmp_path)
    python = env / "bin" / "python"
    _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "-q",
        "--no-deps",
        "--no-index",
        wheel,
        cwd=tmp_path,
    )
    own_site = Path(
        _run(python, "-c", "import site; print(site.getsitepackages()[0])", cwd=elsewhere).strip()
    )
    (own_site / "zz_dependencies.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n", encoding="utf-8"
    )
    where = _run(python, "-c", "import tablesight; print(tablesight.__file__)", cwd=elsewhere)
    assert Path(where.strip()).is_relative_to(env), where
    assert not Path(where.strip()).is_relative_to(REPO)

    proc = subprocess.Popen(
        [env / "bin" / "tablesight", "demo", "--no-browser", "--port", "0", "--speed", "2"],
        cwd=elsewhere,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    violations: list[dict[str, object]] = []
    try:
        deadline = time.monotonic() + 90
        port = None
        while port is None and time.monotonic() < deadline:
            assert proc.poll() is None, "".join(lines)
            found = re.search(r"table view: http://127\.0\.0\.1:(\d+)/", "".join(lines))
            port = int(found.group(1)) if found else None
            time.sleep(0.1)
        assert port is not None, "".join(lines)
        while not violations and time.monotonic() < deadline:
            assert proc.poll() is None, "".join(lines)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/events?since=0") as r:
                events = json.load(r)["events"]
            violations = [e for e in events if e["kind"] == "violation"]
            time.sleep(0.5)
    finally:
        proc.terminate()
        code = proc.wait(timeout=30)
        reader.join(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
    output = "".join(lines)
    assert violations, output
    print("first violation:", violations[0]["message"])
    assert code == 0, output
    assert "Traceback" not in output and "[ WARN" not in output
    # the sample played is the installed one
    assert f"{env}/lib/" in output and "tablesight_samples/necromunda" in output, output
