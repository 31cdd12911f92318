"""Printed marker sheets and ChArUco boards (calibration.printing), measured on the raster.

The PDFs are rasterised with poppler's ``pdftoppm`` at a known dpi and read back the way
the camera would: ``cv2.aruco.ArucoDetector`` / ``CharucoDetector``. Sizes are checked in
pixels against ``mm / 25.4 * dpi`` two ways: the detector's corners (sub-pixel refined),
and the ink along a line through a marker's black border (antialiased coverage summed, so
independent of the detector). Page sizes come from ``pdfinfo``, text from ``pdftotext``.
Tests that need poppler-utils skip when it is absent.
"""

from __future__ import annotations

import doctest
import importlib
import math
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesight.calibration.dictionaries import dictionary_id
from tablesight.calibration.printing import (
    CUT_LINE_MM,
    FOOTER_MM,
    MARGIN_MM,
    RING_LINE_MM,
    SheetEntry,
    SheetEntryError,
    charuco_sheet,
    largest_marker_mm,
    marker_sheet,
    markers_per_page,
    roster_sheet,
)
from tablesight.rules.geometry import Base

POPPLER = all(shutil.which(tool) for tool in ("pdftoppm", "pdfinfo", "pdftotext"))
needs_poppler = pytest.mark.skipif(
    not POPPLER,
    reason="pdftoppm/pdfinfo/pdftotext absent: apt-get install poppler-utils to run it",
)

A4_MM = (210.0, 297.0)
LETTER_MM = (215.9, 279.4)
SCALE_LINE = (
    "this ruler is 10 mm: check your printer did not scale the page (print at 100% / actual size)"
)


def px(mm: float, dpi: int) -> float:
    return mm / 25.4 * dpi


def raster(pdf: Path, dpi: int) -> list[np.ndarray]:
    """Every page as an 8-bit grey image, antialiased, white = 255."""
    out = pdf.with_suffix("")
    cmd = ["pdftoppm", "-r", str(dpi), "-gray", str(pdf), str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    files = sorted(pdf.parent.glob(f"{out.name}-*.pgm"), key=lambda p: int(p.stem.rsplit("-")[-1]))
    images = [cv2.imread(str(f), cv2.IMREAD_GRAYSCALE) for f in files]
    for f in files:
        f.unlink()
    return images


def page_sizes_mm(pdf: Path) -> list[tuple[float, float]]:
    """Every page's (width, height) in mm, read by pdfinfo from the PDF."""
    info = subprocess.run(
        ["pdfinfo", "-f", "1", "-l", "9999", str(pdf)], check=True, capture_output=True, text=True
    ).stdout
    sizes = re.findall(r"Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts", info)
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    assert len(sizes) == pages
    return [(float(w) * 25.4 / 72, float(h) * 25.4 / 72) for w, h in sizes]


def page_text(pdf: Path, page: int) -> str:
    text = subprocess.run(
        ["pdftotext", "-f", str(page), "-l", str(page), str(pdf), "-"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return " ".join(text.split())


def detect(gray: np.ndarray, dictionary: str) -> dict[int, np.ndarray]:
    """Marker id -> its 4 corners (px), sub-pixel refined; fails on a duplicate id."""
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(dictionary_id(dictionary)), params
    )
    corners, ids, _ = detector.detectMarkers(gray)
    found = [] if ids is None else [int(i) for i in np.asarray(ids).ravel()]
    assert len(found) == len(set(found)), f"an id was detected twice: {sorted(found)}"
    return {
        i: np.asarray(c, dtype=float).reshape(4, 2) for i, c in zip(found, corners, strict=True)
    }


def ink_length(line: np.ndarray) -> float:
    """Length in px of the black along a line of grey pixels (antialiased edges count in part)."""
    return float(((255.0 - line.astype(float)) / 255.0).sum())


def check_marker_sizes(
    gray: np.ndarray, markers: dict[int, np.ndarray], size_mm: float, cells: int, dpi: int
) -> list[float]:
    """Each marker's side by the detector and by the ink of its border: both within 1 px."""
    expected = px(size_mm, dpi)
    cell = expected / cells
    measured = []
    for marker_id, c in markers.items():
        sides = np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)
        assert np.all(np.abs(sides - expected) <= 1.0), (marker_id, sides, expected)
        left, top = c.min(axis=0)
        right, bottom = c.max(axis=0)
        pad = int(cell / 2)  # the quiet zone is wider than that: only white around
        row = gray[int(top + cell / 2), int(left) - pad : int(right) + pad]
        col = gray[int(top) - pad : int(bottom) + pad, int(left + cell / 2)]
        for length in (ink_length(row), ink_length(col)):
            assert abs(length - expected) <= 1.0, (marker_id, length, expected)
            measured.append(length)
    return measured


def check_ruler(gray: np.ndarray, dpi: int) -> float:
    """Find the 10 mm ruler in the footer band of the page and measure it."""
    height = gray.shape[0]
    top = int(height - px(MARGIN_MM + FOOTER_MM, dpi))
    band = gray[top:, : int(px(MARGIN_MM + 14, dpi))]
    n, _, stats, _ = cv2.connectedComponentsWithStats((band < 128).astype(np.uint8))
    ten = px(10, dpi)
    candidates = [s for s in stats[1:n] if abs(s[cv2.CC_STAT_WIDTH] - ten) <= 2]
    assert len(candidates) == 1, f"no single 10 mm wide mark in the footer: {stats[1:n]}"
    x, y, w, h = candidates[0][:4]
    bar_row = band[y + h - int(px(0.4, dpi)), max(x - 5, 0) : x + w + 5]
    length = ink_length(bar_row)
    assert abs(length - ten) <= 1.0, (length, ten)
    return length


def check_margins(gray: np.ndarray, dpi: int) -> None:
    """Nothing printed within 10 mm of the paper's edges."""
    m = math.floor(px(MARGIN_MM, dpi)) - 1
    for strip in (gray[:m], gray[-m:], gray[:, :m], gray[:, -m:]):
        assert strip.min() >= 250


def test_dictionary_by_name() -> None:
    assert dictionary_id("4x4_50") == cv2.aruco.DICT_4X4_50
    assert dictionary_id("6X6_250") == cv2.aruco.DICT_6X6_250
    assert dictionary_id("apriltag_36h11") == cv2.aruco.DICT_APRILTAG_36h11
    assert dictionary_id("DICT_5X5_100") == cv2.aruco.DICT_5X5_100
    assert dictionary_id("aruco_original") == cv2.aruco.DICT_ARUCO_ORIGINAL
    with pytest.raises(ValueError) as err:
        dictionary_id("4x4_64")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("unknown ArUco dictionary '4x4_64'; valid names: ")
    for name in ("4x4_50", "6x6_250", "7x7_1000", "apriltag_36h11", "aruco_original"):
        assert name in message


def test_capacity_and_page_count(tmp_path: Path) -> None:
    # 4x4 markers: quiet zone 1 cell (size/6) + 2 mm, 3 mm between quiet zones,
    # A4 inside margins and footer: 190 x 263 mm.
    # 4x4 markers: quiet zone 1 cell (size/6) + 2 mm, 3 mm between quiet zones.
    # A4 inside margins and footer is 190 x 263 mm; a 15 mm marker takes a 24 mm tile,
    # 27 mm apart: 7 columns, 9 rows.
    assert [markers_per_page(s) for s in (15, 20, 25)] == [7 * 9, 5 * 7, 4 * 6]
    assert markers_per_page(15, paper="letter") == 7 * 9  # 195.9 x 245.4 mm
    # A 12 mm marker in a 25 mm ring: 25.15 mm tiles (ring and its line), 28.15 mm apart.
    assert markers_per_page(12, ring_mm=25) == 6 * 9
    per_page = markers_per_page(15, "4x4_1000")
    pdf = tmp_path / "many.pdf"
    assert marker_sheet(pdf, range(2 * per_page + 1), 15, "4x4_1000") == 3
    assert pdf.read_bytes().startswith(b"%PDF-")


@needs_poppler
def test_a4_sheet_markers_ruler_margins(tmp_path: Path) -> None:
    dpi, size = 600, 20.0
    ids = [0, 1, 3, 7, 12, 19, 25, 31, 38, 42, 47, 49]
    pdf = tmp_path / "a4.pdf"
    assert marker_sheet(pdf, ids, size, "4x4_50", "a4") == 1
    ((w, h),) = page_sizes_mm(pdf)
    assert (w, h) == pytest.approx(A4_MM, abs=0.05)

    (gray,) = raster(pdf, dpi)
    assert gray.shape == (round(px(h, dpi)), round(px(w, dpi)))
    markers = detect(gray, "4x4_50")
    assert sorted(markers) == ids
    check_marker_sizes(gray, markers, size, 6, dpi)
    check_ruler(gray, dpi)
    check_margins(gray, dpi)
    text = page_text(pdf, 1)
    assert f"markers are 20 mm; {SCALE_LINE}" in text
    for marker_id in ids:
        assert f"id {marker_id} " in text + " "


@needs_poppler
def test_letter_sheet_spans_pages(tmp_path: Path) -> None:
    dpi, size = 300, 25.0
    per_page = markers_per_page(size, "6x6_250", "letter")
    ids = list(range(100, 100 + per_page + 4))
    pdf = tmp_path / "letter.pdf"
    assert marker_sheet(pdf, ids, size, "6x6_250", "letter") == 2
    sizes = page_sizes_mm(pdf)
    assert sizes == [pytest.approx(LETTER_MM, abs=0.05)] * 2

    found: list[int] = []
    for number, gray in enumerate(raster(pdf, dpi), start=1):
        markers = detect(gray, "6x6_250")
        found += markers
        check_marker_sizes(gray, markers, size, 8, dpi)
        check_ruler(gray, dpi)
        check_margins(gray, dpi)
        text = page_text(pdf, number)
        assert f"markers are 25 mm; {SCALE_LINE}" in text
        assert f"page {number} of 2" in text
    assert sorted(found) == ids  # every id once, over both pages
    assert len(found) == len(ids)


@needs_poppler
def test_rings_for_round_bases(tmp_path: Path) -> None:
    dpi, size, ring = 400, 12.0, 25.0
    ids = list(range(10))
    pdf = tmp_path / "rings.pdf"
    marker_sheet(pdf, ids, size, "4x4_50", "a4", ring_mm=ring)
    (gray,) = raster(pdf, dpi)
    markers = detect(gray, "4x4_50")
    assert sorted(markers) == ids
    check_marker_sizes(gray, markers, size, 6, dpi)

    # The grey cut lines: thin rings, one per marker, centred on it.
    n, _, stats, _ = cv2.connectedComponentsWithStats((gray < 200).astype(np.uint8))
    outer = px(ring + RING_LINE_MM, dpi)
    rings = [
        np.array([x + (w - 1) / 2, y + (h - 1) / 2])  # centre of the box, in pixel centres
        for x, y, w, h, _ in stats[1:n]
        if abs(w - outer) <= 2 and abs(h - outer) <= 2
    ]
    assert len(rings) == len(ids)
    for c in markers.values():
        centre = c.mean(axis=0)
        assert min(np.hypot(*(centre - r)) for r in rings) <= 1.0


# -- a roster's sheet ----------------------------------------------------------------------

#: Every kind of entry: round, oval and rect bases, markers off their bases' centres
#: (dominion, sybil), a tab in front of its base (runt) and a terrain piece. The last two
#: are cut square: the marker and one cell + 2 mm on each side (``SQUARE_CUT_MM``).
ROSTER = [
    SheetEntry(10, 16.0, "krotos", "goliath", Base.round(32)),
    SheetEntry(11, 12.0, "brakk", "goliath", Base.round(25)),
    SheetEntry(12, 22.0, "outrider", "goliath, unit bikers", Base("oval", 60, 35)),
    SheetEntry(13, 30.0, "dominion", "navy", Base("rect", 80, 50), (15.0, 0.0)),
    SheetEntry(14, 10.0, "sybil", "escher", Base.round(40), (8.0, -5.0)),
    SheetEntry(15, 12.0, "runt", "escher", Base.round(25), (20.0, 0.0)),  # a tab in front
    SheetEntry(30, 24.0, "bulkhead", "terrain"),
]
SQUARE_CUT_MM = {15: 12 + 2 * (2 + 2), 30: 24 + 2 * (4 + 2)}


def guide_extent_mm(gray: np.ndarray, box_mm: tuple[float, float, float, float], dpi: int):
    """Width and height (mm) of the cut guide's grey line inside ``box_mm`` (left, top,
    right, bottom, in mm on the page), from the centre of its line on one side to the centre
    on the other: the extent of its pixels darker than 200, less the line's width."""
    left, top, right, bottom = (round(px(v, dpi)) for v in box_mm)
    window = gray[top:bottom, left:right]
    ys, xs = np.nonzero(window < 200)
    assert len(xs) > 0, f"no cut guide in {box_mm}"
    width = (xs.max() - xs.min() + 1) / dpi * 25.4 - CUT_LINE_MM
    height = (ys.max() - ys.min() + 1) / dpi * 25.4 - CUT_LINE_MM
    return width, height


def measure_roster_sheet(pdf: Path, entries: list[SheetEntry], dpi: int) -> list[tuple]:
    """Every entry found on the raster: (marker, side asked, side measured, guide asked,
    guide measured), sides in mm; each guide's window is the base's or square's box around
    the marker the detector found, 0.4 mm wider on every side, the marker blanked out."""
    rows = []
    found: list[int] = []
    for gray in raster(pdf, dpi):
        markers = detect(gray, "4x4_50")
        found += markers
        for e in entries:
            if e.marker not in markers:
                continue
            c = markers[e.marker]
            side = float(np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1).mean()) / dpi * 25.4
            cx, cy = (c.mean(axis=0) + 0.5) / dpi * 25.4  # pixel centres to mm on the page
            half = e.size_mm / 2 + e.size_mm / 12  # the marker and half a cell round it
            x0, x1 = round(px(cx - half, dpi)), round(px(cx + half, dpi))
            y0, y1 = round(px(cy - half, dpi)), round(px(cy + half, dpi))
            blank = gray.copy()
            blank[y0:y1, x0:x1] = 255
            if e.marker in SQUARE_CUT_MM:
                asked = (float(SQUARE_CUT_MM[e.marker]),) * 2
                bx, by = cx, cy
            else:
                asked = (e.base.width_mm, e.base.length_mm)
                forward, left = e.offset_mm
                bx, by = cx + left, cy + forward
            pad = 0.4 + CUT_LINE_MM / 2
            box = (bx - asked[0] / 2 - pad, by - asked[1] / 2 - pad)
            box += (bx + asked[0] / 2 + pad, by + asked[1] / 2 + pad)
            rows.append((e.marker, e.size_mm, side, asked, guide_extent_mm(blank, box, dpi)))
    assert sorted(found) == sorted(e.marker for e in entries)  # every marker once
    return rows


@needs_poppler
def test_roster_sheet_prints_each_marker_and_base_at_size(tmp_path: Path) -> None:
    dpi = 600
    pdf = tmp_path / "roster.pdf"
    assert roster_sheet(pdf, ROSTER, "4x4_50", "a4") == 1
    assert page_sizes_mm(pdf) == [pytest.approx(A4_MM, abs=0.05)]
    for marker, asked, side, guide_asked, guide in measure_roster_sheet(pdf, ROSTER, dpi):
        assert abs(side - asked) <= 0.3, (marker, side, asked)
        assert guide == pytest.approx(guide_asked, abs=0.5), (marker, guide, guide_asked)
    (gray,) = raster(pdf, dpi)
    check_ruler(gray, dpi)
    check_margins(gray, dpi)
    text = page_text(pdf, 1)
    assert f"markers are 10, 12, 16, 22, 24 and 30 mm; {SCALE_LINE}" in text
    assert "cut along the dashed lines (the bases' outlines); page 1 of 1" in text
    for label in ["krotos", "id 10, goliath", "id 12, goliath, unit bikers", "id 30, terrain"]:
        assert label in text
    for e in ROSTER:
        assert e.name in text and f"id {e.marker}, {e.detail}" in text


@needs_poppler
def test_roster_sheet_fills_pages_in_order(tmp_path: Path) -> None:
    # 40 models on 40 mm bases with 21 mm markers (the largest is 21.2): circles 40.2 mm
    # wide with their line, 3 mm apart, 4 to a row of 195.9 mm; rows 40.2 + 5.4 (the
    # label) + 3 mm apart, 5 in the 245.4 mm of a Letter page: 20 a page.
    entries = [SheetEntry(i, 21.0, f"m{i}", "orlock", Base.round(40)) for i in range(40)]
    pdf = tmp_path / "letter.pdf"
    assert roster_sheet(pdf, entries, "4x4_50", "letter") == 2
    assert page_sizes_mm(pdf) == [pytest.approx(LETTER_MM, abs=0.05)] * 2
    first, second = raster(pdf, 200)
    assert sorted(detect(first, "4x4_50")) == list(range(20))
    assert sorted(detect(second, "4x4_50")) == list(range(20, 40))
    assert "page 2 of 2" in page_text(pdf, 2)


def test_largest_marker_fits_and_a_tenth_more_does_not(tmp_path: Path) -> None:
    pdf = tmp_path / "edge.pdf"
    for base in (Base.round(32), Base("oval", 60, 35), Base("rect", 80, 50)):
        largest = largest_marker_mm(base)
        roster_sheet(pdf, [SheetEntry(1, largest, "fits", "a", base)])
        with pytest.raises(SheetEntryError):
            roster_sheet(pdf, [SheetEntry(1, largest + 0.1, "too-big", "a", base)])


def test_roster_sheet_errors(tmp_path: Path) -> None:
    pdf = tmp_path / "bad.pdf"
    ok = SheetEntry(1, 16, "krotos", "goliath", Base.round(32))
    cases = [
        (  # every marker too big named at once, each entry in front
            [
                ok,
                SheetEntry(2, 24, "brakk", "goliath", Base.round(32)),
                SheetEntry(3, 23, "outrider", "goliath", Base("oval", 60, 35)),
                SheetEntry(4, 30, "bulkhead", "terrain"),  # no base: any size
                SheetEntry(5, 40, "dominion", "navy", Base("rect", 80, 50)),
            ],
            "entries[1, 2, 4].size_mm: markers that with their quiet zone do not fit their bases: "
            "brakk 24 mm on a 32 mm round base (at most 16.9 mm), outrider 23 mm on a 60 x 35 "
            "mm oval base (at most 22.6 mm), dominion 40 mm on a 80 x 50 mm rect base (at most "
            "37.5 mm)",
        ),
        (
            [SheetEntry(2, 24, "outrider", "goliath", Base("oval", 60, 35))],
            "entries[0].size_mm: a marker that with its quiet zone does not fit its base: "
            "outrider 24 mm on a 60 x 35 mm oval base (at most 22.6 mm)",
        ),
        (
            [ok, SheetEntry(50, 16, "varg", "goliath", Base.round(32))],
            "entries[1].marker: expected a marker of 4x4_50 (0 to 49), got 50",
        ),
        (
            [ok, SheetEntry(1, 16, "varg", "goliath", Base.round(32))],
            "entries[1].marker: marker 1 is printed twice (also entries[0])",
        ),
        ([SheetEntry(2, 0, "varg", "goliath")], "entries[0].size_mm: must be > 0, got 0"),
        (
            [SheetEntry(2, 20, "fortress", "terrain", Base.round(300))],
            "entries[0].base: fortress: its cut-out and label take 300.2 x 305.6 mm; too big "
            "for the a4 page (190 x 263 mm inside margins and footer)",
        ),
        ([], "entries is empty: give at least one marker to print"),
    ]
    for entries, message in cases:
        raises_one_line(lambda entries=entries: roster_sheet(pdf, entries), message, pdf)
    with pytest.raises(SheetEntryError) as err:
        roster_sheet(pdf, [ok, SheetEntry(2, 24, "brakk", "goliath", Base.round(32))])
    assert (err.value.indices, err.value.field) == ([1], "size_mm")
    assert err.value.reason.endswith(": brakk 24 mm on a 32 mm round base (at most 16.9 mm)")
    with pytest.raises(ValueError, match=r"^unknown ArUco dictionary '4x4_49'; valid names: "):
        roster_sheet(pdf, [ok], "4x4_49")


def charuco_corners(
    gray: np.ndarray, sx: int, sy: int, square: float, marker: float, dictionary: str, dpi: int
) -> dict[int, np.ndarray]:
    """Inner corner id -> position (px); also checks every marker of the board is found once
    and is ``marker`` mm wide within 1 px."""
    board = cv2.aruco.CharucoBoard(
        (sx, sy), square, marker, cv2.aruco.getPredefinedDictionary(dictionary_id(dictionary))
    )
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.CharucoDetector(board, cv2.aruco.CharucoParameters(), params)
    corners, ids, marker_corners, marker_ids = detector.detectBoard(gray)
    assert ids is not None, "no ChArUco corner found"
    assert sorted(np.asarray(marker_ids).ravel()) == sorted(np.asarray(board.getIds()).ravel())
    for c in marker_corners:
        c = np.asarray(c, dtype=float).reshape(4, 2)
        sides = np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)
        assert np.all(np.abs(sides - px(marker, dpi)) <= 1.0), (sides, px(marker, dpi))
    ids = [int(i) for i in np.asarray(ids).ravel()]
    return dict(zip(ids, np.asarray(corners, dtype=float).reshape(-1, 2), strict=True))


def check_squares(corners: dict[int, np.ndarray], sx: int, square_px: float) -> float:
    """Distances between neighbouring inner corners, each within 1 px of the square side."""
    per_row = sx - 1
    gaps = [np.hypot(*(corners[i + 1] - corners[i])) for i in corners if (i + 1) % per_row]
    gaps += [
        np.hypot(*(corners[i + per_row] - corners[i])) for i in corners if i + per_row in corners
    ]
    assert np.all(np.abs(np.array(gaps) - square_px) <= 1.0), (min(gaps), max(gaps), square_px)
    return float(np.mean(gaps))


@needs_poppler
def test_charuco_a4_portrait(tmp_path: Path) -> None:
    dpi, sx, sy, square, marker = 600, 5, 7, 30.0, 22.0
    pdf = tmp_path / "charuco.pdf"
    charuco_sheet(pdf, sx, sy, square, marker, "6x6_250", "a4")
    assert page_sizes_mm(pdf) == [pytest.approx(A4_MM, abs=0.05)]
    (gray,) = raster(pdf, dpi)
    corners = charuco_corners(gray, sx, sy, square, marker, "6x6_250", dpi)
    assert sorted(corners) == list(range((sx - 1) * (sy - 1)))
    check_squares(corners, sx, px(square, dpi))
    check_ruler(gray, dpi)
    check_margins(gray, dpi)
    text = page_text(pdf, 1)
    assert f"squares are 30 mm; {SCALE_LINE}" in text
    assert "5 x 7 squares, square 30 mm, marker 22 mm, dictionary 6x6_250" in text


@needs_poppler
def test_charuco_letter_landscape_matches_opencv(tmp_path: Path) -> None:
    # 240 x 150 mm only fits a Letter page turned to landscape. At 254 dpi a 30 mm
    # square is exactly 300 px, so the raster can be compared with OpenCV's own image.
    dpi, sx, sy, square, marker = 254, 8, 5, 30.0, 22.0
    pdf = tmp_path / "landscape.pdf"
    charuco_sheet(pdf, sx, sy, square, marker, "6x6_250", "letter")
    assert page_sizes_mm(pdf) == [pytest.approx(LETTER_MM[::-1], abs=0.05)]
    (gray,) = raster(pdf, dpi)
    corners = charuco_corners(gray, sx, sy, square, marker, "6x6_250", dpi)
    assert sorted(corners) == list(range((sx - 1) * (sy - 1)))
    check_squares(corners, sx, 300.0)
    check_ruler(gray, dpi)
    check_margins(gray, dpi)

    board = cv2.aruco.CharucoBoard(
        (sx, sy), square, marker, cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_6X6_250)
    )
    reference = board.generateImage((sx * 300, sy * 300), marginSize=0, borderBits=1) < 128
    above_footer = gray[: int(gray.shape[0] - px(MARGIN_MM + FOOTER_MM, dpi))] < 128
    ys, xs = np.nonzero(above_footer)
    printed = above_footer[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    assert printed.shape == reference.shape
    assert np.mean(printed != reference) < 0.005  # only antialiased edge pixels differ


def raises_one_line(call: Callable[[], object], message: str, path: Path) -> None:
    with pytest.raises(ValueError) as err:
        call()
    assert "\n" not in str(err.value)
    assert str(err.value) == message
    assert not path.exists(), "nothing is written when the arguments are bad"


def test_marker_sheet_errors(tmp_path: Path) -> None:
    pdf = tmp_path / "bad.pdf"
    cases = [
        (lambda: marker_sheet(pdf, [1], 0), "size_mm must be > 0, got 0"),
        (lambda: marker_sheet(pdf, [1], -5.0), "size_mm must be > 0, got -5.0"),
        (
            lambda: marker_sheet(pdf, [3, 50], 15),
            "id 50 is out of range for dictionary 4x4_50 (ids 0-49)",
        ),
        (
            lambda: marker_sheet(pdf, [-1], 15, "6x6_250"),
            "id -1 is out of range for dictionary 6x6_250 (ids 0-249)",
        ),
        (lambda: marker_sheet(pdf, [], 15), "ids is empty: give at least one marker id"),
        (
            lambda: marker_sheet(pdf, [4, 4], 15),
            "id 4 is listed twice: each marker id must be printed once",
        ),
        (
            lambda: marker_sheet(pdf, [1], 15, paper="a3"),
            "paper must be 'a4' or 'letter', got 'a3'",
        ),
        (
            lambda: marker_sheet(pdf, [1], 150),
            "a 150 mm marker needs 204.0 mm with its quiet zone; too big for the a4 page "
            "(190 x 263 mm inside margins and footer)",
        ),
        (
            lambda: marker_sheet(pdf, [1], 15, ring_mm=25),
            "a 15 mm 4x4_50 marker with its 2.5 mm quiet zone needs a 28.3 mm circle; "
            "ring_mm=25 is too small (largest marker for it: 13.2 mm)",
        ),
        (lambda: marker_sheet(pdf, [1], 15, ring_mm=0), "ring_mm must be > 0, got 0"),
    ]
    for call, message in cases:
        raises_one_line(call, message, pdf)
    with pytest.raises(ValueError, match=r"^unknown ArUco dictionary '4x4_49'; valid names: "):
        marker_sheet(pdf, [1], 15, "4x4_49")


def test_charuco_sheet_errors(tmp_path: Path) -> None:
    pdf = tmp_path / "bad.pdf"
    cases = [
        (lambda: charuco_sheet(pdf, 1, 7, 30, 22), "squares_x must be an integer >= 2, got 1"),
        (lambda: charuco_sheet(pdf, 5, 7, 0, 22), "square_mm must be > 0, got 0"),
        (
            lambda: charuco_sheet(pdf, 5, 7, 30, 30),
            "marker_mm (30) must be smaller than square_mm (30): "
            "each marker sits inside a white square",
        ),
        (
            lambda: charuco_sheet(pdf, 11, 11, 10, 7, "4x4_50"),
            "a 11 x 11 board needs 60 markers; dictionary 4x4_50 has only 50",
        ),
        (
            lambda: charuco_sheet(pdf, 10, 10, 30, 22),
            "a 10 x 10 board of 30 mm squares is 300 x 300 mm; it does not fit the a4 page "
            "(190 x 263 mm inside margins and footer, portrait or landscape)",
        ),
    ]
    for call, message in cases:
        raises_one_line(call, message, pdf)


def test_docstring_examples() -> None:
    result = doctest.testmod(importlib.import_module("tablesight.calibration.printing"))
    assert result.attempted > 0
    assert result.failed == 0
