"""Re-make every generated file of the samples from the files written by hand.

    .venv/bin/python samples/make.py                 # every game
    .venv/bin/python samples/make.py necromunda ...  # only these
    .venv/bin/python samples/make.py render STORYBOARD.toml OUT.mp4   # one clip

For each game folder ``samples/<game>/`` (the folder is named after the game):

* checks that ``table.toml``, ``roster.toml`` and ``terrain.toml`` describe the same table,
  models and terrain as the footage script ``storyboard.toml`` (the script adds only where
  things stand and what happens);
* renders ``match.mp4`` from ``storyboard.toml`` (``tablesight.rig.footage``);
* writes ``camera.toml``: the intrinsics of the storyboard's camera, as a calibration of
  that camera would give them;
* prints ``markers.pdf`` with ``tablesight markers``: the anchors, then the roster's sheet
  (``--roster``): every model's marker at its size on its base's outline, and the terrain's.

And once: ``charuco-board.pdf``, the ChArUco board ``board.toml`` describes, to calibrate a
real camera with. Everything is deterministic: the same inputs give the same files (the
PDFs' creation date is pinned).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent
REPO = SAMPLES.parent
GAMES = ("necromunda", "trench-crusade", "cosmic-combat", "cosmic-combat-revised", "battlestations")
#: The creation date written into every PDF, so that re-making one changes nothing.
PDF_DATE = b"D:20250101000000Z"

sys.path.insert(0, str(REPO))


def tablesight(*args: str) -> None:
    """Run the ``tablesight`` command of this checkout's environment."""
    exe = Path(sys.executable).with_name("tablesight")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "tablesight"]
    subprocess.run([*cmd, *args], check=True, cwd=REPO, stdout=subprocess.DEVNULL)


def pin_pdf(path: Path) -> None:
    """Replace the PDF's creation date and file id (both differ run to run) by fixed values
    of the same length, so that the byte offsets in its cross-reference table stay right."""
    data = path.read_bytes()
    data = re.sub(rb"D:\d{14}Z", PDF_DATE, data)
    digest = hashlib.md5(re.sub(rb"/ID \[[^\]]*\]", b"", data)).hexdigest().upper().encode()
    ids = b"/ID [<%s><%s>]" % (digest, digest)
    data = re.sub(rb"/ID \[<[0-9A-F]{32}><[0-9A-F]{32}>\]", ids, data)
    path.write_bytes(data)


def check_files(folder: Path) -> None:
    """table.toml, roster.toml and terrain.toml say what the storyboard films."""
    from tablesight.calibration.roster import load_roster, load_terrain
    from tablesight.calibration.table import TableSpec
    from tablesight.rig.storyboard_file import load_storyboard

    story = load_storyboard(folder / "storyboard.toml")
    table = TableSpec.from_toml(folder / "table.toml")
    if (table.table, table.anchors) != (story.table.table, story.table.anchors):
        sys.exit(f"{folder}/table.toml: table or anchors differ from storyboard.toml's")
    if load_roster(folder / "roster.toml") != list(story.roster):
        sys.exit(f"{folder}/roster.toml: the models differ from storyboard.toml's")
    if load_terrain(folder / "terrain.toml") != list(story.terrain):
        sys.exit(f"{folder}/terrain.toml: the terrain differs from storyboard.toml's")


def camera_toml(folder: Path) -> str:
    """camera.toml for the storyboard's camera, as ``tablesight calibrate camera`` writes it."""
    from tablesight.rig.storyboard_file import load_storyboard

    camera = load_storyboard(folder / "storyboard.toml").camera
    rows = ", ".join("[" + ", ".join(repr(float(v)) for v in r) + "]" for r in camera.camera_matrix)
    dist = ", ".join(repr(float(v)) for v in camera.dist_coeffs)
    return (
        "# The camera's intrinsics: what `tablesight calibrate camera` measures from photos of\n"
        "# the ChArUco board (see samples/board.toml) and writes here. These are the exact\n"
        "# intrinsics of the camera that filmed match.mp4 (a rendered 1080p webcam with a 70\n"
        "# degree lens, the [camera] of storyboard.toml); written by samples/make.py.\n"
        "#   image_size     the picture's width and height in pixels\n"
        "#   camera_matrix  [[fx, 0, cx], [0, fy, cy], [0, 0, 1]]: focal lengths and principal\n"
        "#                  point, in pixels\n"
        "#   dist_coeffs    OpenCV's lens distortion [k1, k2, p1, p2, k3]\n"
        f"image_size = [{camera.width_px}, {camera.height_px}]\n"
        f"camera_matrix = [{rows}]\n"
        f"dist_coeffs = [{dist}]\n"
    )


def markers_pdf(folder: Path) -> None:
    """markers.pdf: the anchors' markers at their size, then the roster's sheet
    (``tablesight markers --roster``): every model's marker at its own size on its base's
    outline to cut along, and the terrain's."""
    table = tomllib.loads((folder / "table.toml").read_text())
    sizes: dict[float, list[int]] = {}
    for a in table["anchors"]:
        sizes.setdefault(float(a["size_mm"]), []).append(a["id"])
    out = folder / "markers.pdf"
    with tempfile.TemporaryDirectory() as tmp:
        parts = []
        for size, ids in sorted(sizes.items()):
            part = Path(tmp) / f"anchors-{size:g}.pdf"
            tablesight(
                "markers",
                "-o",
                str(part),
                "--ids",
                ",".join(map(str, sorted(ids))),
                "--size-mm",
                f"{size:g}",
                "--dictionary",
                table["table"]["dictionary"],
            )
            parts.append(part)
        roster = Path(tmp) / "roster.pdf"
        files = [f"--{name}={folder / f'{name}.toml'}" for name in ("roster", "terrain", "table")]
        tablesight("markers", "-o", str(roster), *files)
        parts.append(roster)
        if not shutil.which("pdfunite"):
            sys.exit(f"{out}: the anchors' and the roster's sheets need pdfunite (poppler-utils)")
        subprocess.run(["pdfunite", *map(str, parts), str(out)], check=True)
    pin_pdf(out)


def make(game: str) -> str:
    folder = SAMPLES / game
    from tablesight.rig.footage import write_video
    from tablesight.rig.storyboard_file import load_storyboard

    check_files(folder)
    info = write_video(load_storyboard(folder / "storyboard.toml"), folder / "match.mp4")
    (folder / "camera.toml").write_text(camera_toml(folder))
    markers_pdf(folder)
    return f"{game}: {info.frames} frames, {info.seconds:.1f} s, {info.bytes / 1e6:.1f} MB"


def charuco_board() -> None:
    board = tomllib.loads((SAMPLES / "board.toml").read_text())
    out = SAMPLES / "charuco-board.pdf"
    tablesight(
        "markers",
        "--charuco",
        "-o",
        str(out),
        "--squares",
        f"{board['squares_x']}x{board['squares_y']}",
        "--square-mm",
        f"{board['square_mm']:g}",
        "--marker-mm",
        f"{board['marker_mm']:g}",
        "--dictionary",
        board["dictionary"],
    )
    pin_pdf(out)


def render(storyboard: str, out: str) -> int:
    """Render one storyboard to a video file (``.mp4`` or ``.avi``)."""
    from tablesight.rig.footage import write_video
    from tablesight.rig.storyboard_file import load_storyboard
    from tablesight.rules.errors import InputError

    try:
        info = write_video(load_storyboard(Path(storyboard)), Path(out))
    except InputError as exc:
        print(f"make.py: {exc}", file=sys.stderr)
        return 2
    rate = info.bytes / info.seconds / 1e6 if info.seconds else 0.0
    print(
        f"{info.frames} frames, {info.seconds:.2f} s, {info.bytes} bytes "
        f"({rate:.2f} MB per second, {info.fourcc}): {info.path}"
    )
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["render"]:
        if len(argv) != 3:
            print("usage: samples/make.py render STORYBOARD.toml OUT.mp4|OUT.avi", file=sys.stderr)
            return 2
        return render(argv[1], argv[2])
    games = argv or list(GAMES)
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        print(f"make.py: no sample {', '.join(unknown)}; there are: {', '.join(GAMES)}")
        return 2
    with ProcessPoolExecutor(max_workers=2) as pool:
        for line in pool.map(make, games):
            print(line)
    charuco_board()
    print(f"charuco-board.pdf from {SAMPLES / 'board.toml'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
