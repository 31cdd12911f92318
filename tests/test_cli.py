"""The ``tablesight`` entry point, run as a user would: as a subprocess (the
``tablesight`` and ``tablesight_command`` fixtures of tests/conftest.py)."""

from __future__ import annotations

import subprocess

import pytest

SUBCOMMANDS = [
    "demo",
    "run",
    "analyze",
    "replay",
    "export",
    "detect",
    "doctor",
    "reach",
    "setup",
    "check",
    "calibrate",
    "markers",
    "bench",
    "hub",
]


def test_help_lists_every_subcommand(tablesight) -> None:
    result = tablesight("--help")
    assert result.returncode == 0, result.stderr
    listed = [
        line.split()[0]
        for line in result.stdout.split("Commands:")[1].splitlines()
        if line.startswith("  ") and not line.startswith("   ")
    ]
    assert sorted(listed) == sorted(SUBCOMMANDS)


def test_unknown_subcommand_is_usage_error(tablesight) -> None:
    result = tablesight("fly")
    assert result.returncode == 2
    assert "No such command 'fly'" in result.stderr


@pytest.mark.slow
def test_run_in_a_terminal_answers_its_keys(tmp_path, tablesight_command) -> None:
    """``run`` on a sample clip in a real terminal (a pty): ``?`` lists the keys from
    webui/keys.py again, ``m`` ends the phase that started by itself and starts another,
    ``q`` quits with status 0."""
    import os
    import pty
    import select
    import time
    from pathlib import Path

    sample = Path(__file__).resolve().parent.parent / "samples" / "necromunda"
    args = ["run", "--source", str(sample / "match.mp4"), "--game", "necromunda"]
    for name in ("table", "roster", "terrain", "camera"):
        args += [f"--{name}", str(sample / f"{name}.toml")]
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [*tablesight_command, *args, "--port", "0"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    seen = b""

    def read_until(text: bytes, within_s: float, times: int = 1) -> bool:
        nonlocal seen
        end = time.monotonic() + within_s
        while seen.count(text) < times and time.monotonic() < end:
            if select.select([leader], [], [], 0.1)[0]:
                try:
                    seen += os.read(leader, 4096)
                except OSError:
                    break
        return seen.count(text) >= times

    try:
        assert read_until(b"phase_started", 30), seen.decode(errors="replace")
        assert b"m start a movement phase" in seen and seen.count(b"q quit") == 1
        time.sleep(1.5)  # a person reads the help, then presses a key
        os.write(leader, b"?")
        assert read_until(b"q quit", 5, times=2)
        assert b"phase_ended" not in seen
        os.write(leader, b"m")
        assert read_until(b"phase_ended", 10), seen.decode(errors="replace")
        assert read_until(b"phase_started", 10, times=2)
        os.write(leader, b"q")
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)


# -- markers --roster: a roster's sheet, each marker at its size inside its base ----------

ROSTER_TOML = """
[[models]]
id = "krotos"
side = "goliath"
base = { shape = "round", diameter_mm = 32 }
movement = 4
marker = 10
marker_size_mm = 16

[[models]]
id = "outrider"
side = "goliath"
unit = "bikers"
base = { shape = "oval", length_mm = 60, width_mm = 35 }
movement = 8
marker = 11
marker_size_mm = 22
"""
TERRAIN_TOML = """
[[terrain]]
id = "bulkhead"
marker = 30
marker_size_mm = 24
polygon = [[-2.5, -0.5], [2.5, -0.5], [2.5, 0.5], [-2.5, 0.5]]
"""
TABLE_TOML = """
[table]
width_in = 30
depth_in = 22
dictionary = "4x4_50"

[[anchors]]
id = 0
x_in = 1.2
y_in = 1.2
size_mm = 40
"""


def test_markers_prints_a_roster_sheet(tablesight, tmp_path) -> None:
    """The models' and pieces' markers, measured on the raster (300 dpi): each id once,
    its side within 0.3 mm of marker_size_mm; their labels in the PDF's text."""
    import shutil

    import cv2
    import numpy as np

    if not (shutil.which("pdftoppm") and shutil.which("pdftotext")):
        pytest.skip("pdftoppm/pdftotext absent: apt-get install poppler-utils to run it")
    for name, text in [("roster", ROSTER_TOML), ("terrain", TERRAIN_TOML), ("table", TABLE_TOML)]:
        (tmp_path / f"{name}.toml").write_text(text)
    pdf = tmp_path / "sheet.pdf"
    args = ["markers", "-o", str(pdf), "--roster", str(tmp_path / "roster.toml")]
    args += ["--terrain", str(tmp_path / "terrain.toml"), "--table", str(tmp_path / "table.toml")]
    result = tablesight(*args)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"wrote {pdf}: 1 page(s), 3 markers; print at 100%\n"

    subprocess.run(["pdftoppm", "-r", "300", "-gray", str(pdf), str(tmp_path / "page")], check=True)
    gray = cv2.imread(str(tmp_path / "page-1.pgm"), cv2.IMREAD_GRAYSCALE)
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50))
    corners, ids, _ = detector.detectMarkers(gray)
    sides_mm = {}
    for i, c in zip(np.asarray(ids).ravel(), corners, strict=True):
        c = c.reshape(4, 2)
        sides_mm[int(i)] = np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1).mean() / 300 * 25.4
    assert sides_mm == {
        10: pytest.approx(16, abs=0.3),
        11: pytest.approx(22, abs=0.3),
        30: pytest.approx(24, abs=0.3),
    }
    text = subprocess.run(
        ["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    for label in ["krotos", "id 10, goliath", "outrider", "id 11, goliath, unit bikers"]:
        assert label in text
    assert "bulkhead" in text and "id 30, terrain" in text


@pytest.mark.parametrize(
    ("roster", "extra", "message"),
    [
        (
            ROSTER_TOML.replace("marker_size_mm = 16", "marker_size_mm = 24").replace(
                "marker_size_mm = 22", "marker_size_mm = 23"
            ),
            ["--table", "table.toml"],
            "roster.toml: models[0, 1].marker_size_mm: markers that with their quiet zone do not "
            "fit their bases: krotos 24 mm on a 32 mm round base (at most 16.9 mm), outrider "
            "23 mm on a 60 x 35 mm oval base (at most 22.6 mm)",
        ),
        (
            ROSTER_TOML.replace("marker = 11", "marker = 60"),
            ["--dictionary", "4x4_50"],
            "roster.toml: models[1].marker: expected a marker of 4x4_50 (0 to 49), got 60",
        ),
        (
            ROSTER_TOML.replace("marker = 10", "marker = 0"),
            ["--table", "table.toml"],
            "roster.toml: models[0].marker: marker 0 is used twice (an anchor or a model "
            "already carries it)",
        ),
        (
            ROSTER_TOML,
            ["--dictionary", "4x4_49"],
            "unknown ArUco dictionary '4x4_49'; valid names: ",
        ),
        (ROSTER_TOML, [], "--roster: give --table table.toml (for its dictionary) or --dictionary"),
        (
            ROSTER_TOML,
            ["--table", "table.toml", "--dictionary", "6x6_250"],
            "--dictionary 6x6_250: table.toml has dictionary 4x4_50",
        ),
        (
            ROSTER_TOML,
            ["--dictionary", "4x4_50", "--size-mm", "20"],
            "--size-mm: the roster gives each marker's id and size; leave them out",
        ),
    ],
)
def test_markers_refuses_a_bad_roster(tablesight, tmp_path, monkeypatch, roster, extra, message):
    """One line naming the file and the field (or the option), exit status 2, no PDF."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "roster.toml").write_text(roster)
    (tmp_path / "table.toml").write_text(TABLE_TOML)
    result = tablesight("markers", "-o", "sheet.pdf", "--roster", "roster.toml", *extra)
    assert result.returncode == 2
    assert result.stderr.startswith(f"tablesight: {message}")
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "sheet.pdf").exists()
