"""The Makefile as a newcomer meets it: ``make test`` says first, in one line, how long it
takes and what it needs that is missing here (with what then skips or fails, and the
packages to install); installing TableSight from the checkout prints no setuptools
warnings."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MAKE = shutil.which("make")

pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")

HEAD = "make test: about 12-15 minutes on two cores (make test-fast: under a minute)"
#: Each need ``make test`` looks for: what is said when it is missing, its Debian package
#: and the programs it is found by.
NEEDS = {
    "chromium": ("chromium (the browser tests skip)", "chromium", ["chromium"]),
    "mosquitto": ("mosquitto (the broker tests fail)", "mosquitto", ["mosquitto"]),
    "ffmpeg": ("ffmpeg (the network camera tests skip)", "ffmpeg", ["ffmpeg"]),
    "poppler": (
        "poppler-utils (the printed-marker tests skip)",
        "poppler-utils",
        ["pdftoppm", "pdftotext", "pdfinfo"],
    ),
}


def _needs(tmp_path: Path, present: set[str], shared: bool) -> str:
    """What ``make test-needs`` prints where only ``present`` are installed (each a
    program that does nothing, on a PATH of its own) and ``../shared`` is there or not."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in present:
        for program in NEEDS[name][2]:
            path = bin_dir / program
            path.write_text("#!/bin/sh\nexit 0\n")
            path.chmod(0o755)
    shared_dir = tmp_path / "shared"
    if shared:
        shared_dir.mkdir()
    where = [f"CHROMIUM={bin_dir / 'chromium'}", f"MOSQUITTO={bin_dir / 'mosquitto'}"]
    done = subprocess.run(
        [str(MAKE), "-s", "-C", str(REPO), "test-needs", *where, f"SHARED={shared_dir}"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": str(bin_dir)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def test_make_test_says_how_long_and_that_all_it_needs_is_here(tmp_path: Path) -> None:
    said = _needs(tmp_path, set(NEEDS), shared=True)
    shared = tmp_path / "shared"
    assert said == (
        f"{HEAD}; Chromium, Mosquitto, FFmpeg, poppler-utils and {shared} are all here.\n"
    )


def test_make_test_names_everything_missing_and_how_to_install_it(tmp_path: Path) -> None:
    said = _needs(tmp_path, set(), shared=False)
    shared = tmp_path / "shared"
    assert said == (
        f"{HEAD}. Missing: chromium (the browser tests skip), mosquitto (the broker tests "
        "fail), ffmpeg (the network camera tests skip), poppler-utils (the printed-marker "
        f"tests skip), {shared} (the real-photo tests skip); install with: sudo apt-get "
        "install chromium mosquitto ffmpeg poppler-utils.\n"
    )


@pytest.mark.parametrize("missing", sorted(NEEDS))
def test_make_test_names_the_one_program_missing(tmp_path: Path, missing: str) -> None:
    said = _needs(tmp_path, set(NEEDS) - {missing}, shared=True)
    assert said == (
        f"{HEAD}. Missing: {NEEDS[missing][0]}; install with: sudo apt-get install "
        f"{NEEDS[missing][1]}.\n"
    )


def test_the_shared_photos_missing_name_no_package(tmp_path: Path) -> None:
    said = _needs(tmp_path, set(NEEDS), shared=False)
    assert said == f"{HEAD}. Missing: {tmp_path / 'shared'} (the real-photo tests skip).\n"


def test_make_test_says_it_first() -> None:
    done = subprocess.run(
        [str(MAKE), "-n", "-C", str(REPO), "test"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if not line.startswith("make")]
    assert lines[0].startswith('missing=""'), lines[:3]  # the note's check, before all else


# -- installing --------------------------------------------------------------------------


def _editable_quiet() -> dict[str, str]:
    """The environment the Makefile installs with (its ``EDITABLE_QUIET``)."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    found = re.search(r'^EDITABLE_QUIET := (\w+)="([^"]*)"$', text, re.M)
    assert found, "the Makefile sets EDITABLE_QUIET"
    return {found.group(1): found.group(2)}


@pytest.mark.slow
def test_installing_from_the_checkout_prints_no_setuptools_warnings(tmp_path: Path) -> None:
    """A wheel built from the checkout, and the Makefile's editable install (``pip install
    --quiet -e .``) into a new environment, as a user's pip does them (the build backend
    from the package index): not one warning."""
    leftover = REPO / "build"
    kept = leftover.exists()
    env = tmp_path / "env"
    try:
        built = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), str(REPO)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
        python = env / "bin" / "python"
        install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
        editable = subprocess.run(
            [*install, "--no-deps", "-e", str(REPO)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, **_editable_quiet()},
        )
    finally:
        if not kept:
            shutil.rmtree(leftover, ignore_errors=True)
    assert built.returncode == 0, built.stdout + built.stderr[-2000:]
    assert list(tmp_path.glob("tablesight-*.whl")), built.stdout
    warned = [line for line in (built.stdout + built.stderr).splitlines() if "arning" in line]
    assert warned == []
    assert editable.returncode == 0, editable.stderr[-2000:]
    assert editable.stdout + editable.stderr == ""
