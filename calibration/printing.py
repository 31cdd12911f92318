"""Print-ready PDFs of ArUco markers and ChArUco boards at exact physical size.

Everything is drawn as vector black rectangles in millimetres (fpdf2, ``unit="mm"``), from
the bit patterns OpenCV itself uses (``cv2.aruco.generateImageMarker``), so a marker printed
at 100 % is exactly ``size_mm`` wide: the side of its black square, border included. Every
page carries a 10 mm ruler and a line asking the user to check the printer did not scale
the page; the PDF also asks the print dialogue for no scaling (``/PrintScaling /None``).

>>> markers_per_page(15.0, "4x4_50", "a4")
63
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np
from fpdf import FPDF
from fpdf.enums import PathPaintRule
from fpdf.prefs import ViewerPreferences

from calibration.dictionaries import dictionary_id

Paper = Literal["a4", "letter"]

#: Page sizes in mm, portrait (width, height).
PAPER_MM: dict[str, tuple[float, float]] = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
#: White margin on every side of the page: home printers cannot print within ~5 mm.
MARGIN_MM = 10.0
#: Space kept at the bottom of every page for the ruler and the two lines of text.
FOOTER_MM = 14.0
#: Length of the ruler printed on every page.
RULER_MM = 10.0
#: White quiet zone around a marker beyond the one-cell minimum the detector needs.
QUIET_EXTRA_MM = 2.0
#: Space between neighbouring quiet zones (the id label sits in it, under each marker).
GAP_MM = 3.0
#: Line width of the cut-out circles drawn with ``ring_mm``.
RING_LINE_MM = 0.15

_LABEL_PT = 6.0
_LABEL_BASELINE_MM = 2.2  # below the quiet zone, inside the gap
_SCALE_TEXT = (
    "this ruler is 10 mm: check your printer did not scale the page (print at 100% / actual size)"
)


#: Dictionary names as users write them ("4x4_50", "apriltag_36h11") -> OpenCV ids.
def _dictionary(name: str) -> cv2.aruco.Dictionary:
    return cv2.aruco.getPredefinedDictionary(dictionary_id(name))


def _dictionary_len(d: cv2.aruco.Dictionary) -> int:
    return int(d.bytesList.shape[0])


def marker_bits(d: cv2.aruco.Dictionary, marker_id: int) -> np.ndarray:
    """The marker's cells, black border included, as a bool array (True = black)."""
    cells = d.markerSize + 2
    img = cv2.aruco.generateImageMarker(d, int(marker_id), cells, borderBits=1)
    return np.asarray(img) < 128


def _check_paper(paper: str) -> tuple[float, float]:
    if paper not in PAPER_MM:
        raise ValueError(f"paper must be 'a4' or 'letter', got {paper!r}")
    return PAPER_MM[paper]


def _positive(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number > 0, got {value!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return v


@dataclass(frozen=True)
class _Grid:
    cols: int
    rows: int
    body: float  # side of the square tile: marker + quiet zone (or the ring, if larger)
    pitch: float
    x0: float
    y0: float
    cell: float  # side of one marker cell


def _marker_grid(size_mm: float, cells: int, paper: str, ring_mm: float | None, name: str) -> _Grid:
    """Lay out the tiles on one page; ValueError if even one does not fit."""
    width, height = PAPER_MM[paper]
    cell = size_mm / cells
    quiet = cell + QUIET_EXTRA_MM
    body = size_mm + 2 * quiet
    if ring_mm is not None:
        needed = (size_mm + 2 * cell) * math.sqrt(2)
        if needed > ring_mm + 1e-9:
            largest = ring_mm / math.sqrt(2) * cells / (cells + 2)
            raise ValueError(
                f"a {size_mm:g} mm {name} marker with its {cell:.3g} mm quiet zone needs a "
                f"{needed:.1f} mm circle; ring_mm={ring_mm:g} is too small "
                f"(largest marker for it: {math.floor(largest * 10) / 10:g} mm)"
            )
        body = max(body, ring_mm + RING_LINE_MM)
    pitch = body + GAP_MM
    avail_w = width - 2 * MARGIN_MM
    avail_h = height - 2 * MARGIN_MM - FOOTER_MM
    cols = math.floor((avail_w - body) / pitch + 1e-9) + 1 if body <= avail_w + 1e-9 else 0
    tall = body + _LABEL_BASELINE_MM
    rows = math.floor((avail_h - tall) / pitch + 1e-9) + 1 if tall <= avail_h + 1e-9 else 0
    if cols < 1 or rows < 1:
        what = "its quiet zone" if ring_mm is None else f"its {ring_mm:g} mm ring"
        raise ValueError(
            f"a {size_mm:g} mm marker needs {body:.1f} mm with {what}; too big for the "
            f"{paper} page ({avail_w:g} x {avail_h:g} mm inside margins and footer)"
        )
    x0 = MARGIN_MM + (avail_w - (cols * pitch - GAP_MM)) / 2
    return _Grid(cols, rows, body, pitch, x0, MARGIN_MM, cell)


def markers_per_page(
    size_mm: float,
    dictionary: str = "4x4_50",
    paper: Paper = "a4",
    ring_mm: float | None = None,
) -> int:
    """How many markers of ``size_mm`` one page of :func:`marker_sheet` holds."""
    size = _positive("size_mm", size_mm)
    _check_paper(paper)
    ring = None if ring_mm is None else _positive("ring_mm", ring_mm)
    d = _dictionary(dictionary)
    grid = _marker_grid(size, d.markerSize + 2, paper, ring, dictionary)
    return grid.cols * grid.rows


def _new_pdf(paper: str) -> FPDF:
    pdf = FPDF(orientation="P", unit="mm", format=paper)
    pdf.set_auto_page_break(False)
    pdf.set_margins(MARGIN_MM, MARGIN_MM, MARGIN_MM)
    pdf.set_creator("TableSight")
    pdf.viewer_preferences = ViewerPreferences(print_scaling="None")
    pdf.set_fill_color(0, 0, 0)
    pdf.set_text_color(0, 0, 0)
    return pdf


Rect = tuple[float, float, float, float]


def _fill(pdf: FPDF, rects: Sequence[Rect]) -> None:
    """Fill the rectangles ``(x, y, w, h)`` in black as ONE path (one ``re`` per rectangle).

    A single fill of the union leaves no hairline seams where rectangles share an edge;
    separate fills would, in viewers that snap or antialias each rectangle on its own.
    """
    if not rects:
        return
    x, y = rects[0][0], rects[0][1]
    with pdf.new_path(x=x, y=y, paint_rule=PathPaintRule.FILL_NONZERO) as path:
        path.style.fill_color = "#000000"
        for rx, ry, rw, rh in rects:
            path.rectangle(rx, ry, rw, rh)


def _bit_rects(bits: np.ndarray, x: float, y: float, cell: float) -> list[Rect]:
    """The black cells as rectangles; horizontal runs of black cells share one rectangle."""
    rects: list[Rect] = []
    for r, row in enumerate(bits):
        c = 0
        n = len(row)
        while c < n:
            if not row[c]:
                c += 1
                continue
            start = c
            while c < n and row[c]:
                c += 1
            rects.append((x + start * cell, y + r * cell, (c - start) * cell, cell))
    return rects


def _draw_ruler(pdf: FPDF, x: float, y: float) -> None:
    """A 10 mm ruler: a 0.8 mm bar whose top edge is at ``y``, with mm ticks above it."""
    tick_w = 0.2
    rects: list[Rect] = [(x, y, RULER_MM, 0.8)]
    for i in range(int(RULER_MM) + 1):
        tall = 2.0 if i % 5 == 0 else 1.0
        tx = min(max(x + i - tick_w / 2, x), x + RULER_MM - tick_w)
        rects.append((tx, y - tall, tick_w, tall + 0.01))
    _fill(pdf, rects)


def _draw_footer(pdf: FPDF, first: str, second: str) -> None:
    """Ruler and two lines of text in the footer band of the current page."""
    width, height = pdf.w, pdf.h
    top = height - MARGIN_MM - FOOTER_MM
    _draw_ruler(pdf, MARGIN_MM, top + 4.0)
    pdf.set_font("Helvetica", size=_LABEL_PT)
    pdf.text(MARGIN_MM + 1.5, top + 8.0, "10 mm")
    x = MARGIN_MM + RULER_MM + 5.0
    room = width - MARGIN_MM - x
    size = 8.0
    pdf.set_font("Helvetica", size=size)
    while size > 4.0 and max(pdf.get_string_width(first), pdf.get_string_width(second)) > room:
        size -= 0.25
        pdf.set_font("Helvetica", size=size)
    pdf.text(x, top + 4.5, first)
    pdf.text(x, top + 8.5, second)


def marker_sheet(
    path: str | os.PathLike[str],
    ids: Sequence[int],
    size_mm: float,
    dictionary: str = "4x4_50",
    paper: Paper = "a4",
    ring_mm: float | None = None,
) -> int:
    """Write a PDF of the markers ``ids`` with black squares exactly ``size_mm`` wide.

    Markers fill each page in a grid, each with a white quiet zone of one cell plus
    2 mm and its id printed underneath; with ``ring_mm`` each also gets a thin cut-out
    circle of that diameter (for a round base), which must hold the marker and its
    one-cell quiet zone. Returns the number of pages written. Bad arguments raise
    ValueError before anything is written.
    """
    size = _positive("size_mm", size_mm)
    _check_paper(paper)
    ring = None if ring_mm is None else _positive("ring_mm", ring_mm)
    d = _dictionary(dictionary)
    count = _dictionary_len(d)
    id_list = list(ids)
    if not id_list:
        raise ValueError("ids is empty: give at least one marker id")
    seen: set[int] = set()
    for raw in id_list:
        if isinstance(raw, bool) or not isinstance(raw, int | np.integer):
            raise ValueError(f"marker ids must be integers, got {raw!r}")
        if not 0 <= raw < count:
            raise ValueError(
                f"id {raw} is out of range for dictionary {dictionary} (ids 0-{count - 1})"
            )
        if raw in seen:
            raise ValueError(f"id {raw} is listed twice: each marker id must be printed once")
        seen.add(int(raw))
    grid = _marker_grid(size, d.markerSize + 2, paper, ring, dictionary)

    per_page = grid.cols * grid.rows
    pages = math.ceil(len(id_list) / per_page)
    first = f"markers are {size:g} mm; {_SCALE_TEXT}"
    pdf = _new_pdf(paper)
    pdf.set_title(f"TableSight ArUco markers, {dictionary}, {size:g} mm")
    inset = (grid.body - size) / 2
    for page in range(pages):
        pdf.add_page()
        chunk = id_list[page * per_page : (page + 1) * per_page]
        for i, marker_id in enumerate(chunk):
            bx = grid.x0 + (i % grid.cols) * grid.pitch
            by = grid.y0 + (i // grid.cols) * grid.pitch
            _fill(pdf, _bit_rects(marker_bits(d, marker_id), bx + inset, by + inset, grid.cell))
            centre_x = bx + grid.body / 2
            if ring is not None:
                pdf.set_line_width(RING_LINE_MM)
                pdf.set_draw_color(90, 90, 90)
                pdf.circle(centre_x, by + grid.body / 2, ring / 2, style="D")
            pdf.set_font("Helvetica", size=_LABEL_PT)
            label = f"id {int(marker_id)}"
            pdf.text(
                centre_x - pdf.get_string_width(label) / 2,
                by + grid.body + _LABEL_BASELINE_MM,
                label,
            )
        second = f"TableSight ArUco markers, dictionary {dictionary}"
        if ring is not None:
            second += f", cut along the circles for {ring:g} mm round bases"
        second += f"; page {page + 1} of {pages}"
        _draw_footer(pdf, first, second)
    pdf.output(os.fspath(path))
    return pages


def _count(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 2:
        raise ValueError(f"{name} must be an integer >= 2, got {value!r}")
    return int(value)


def charuco_sheet(
    path: str | os.PathLike[str],
    squares_x: int,
    squares_y: int,
    square_mm: float,
    marker_mm: float,
    dictionary: str = "6x6_250",
    paper: Paper = "a4",
) -> None:
    """Write a one-page PDF of OpenCV's ChArUco board at exact size.

    The layout is OpenCV's own (``cv2.aruco.CharucoBoard``, current pattern: top-left
    square black, markers in the white squares). The page turns to landscape when the
    board is wider than tall and fits that way, or only fits that way; ValueError if it
    fits neither.
    """
    sx = _count("squares_x", squares_x)
    sy = _count("squares_y", squares_y)
    square = _positive("square_mm", square_mm)
    marker = _positive("marker_mm", marker_mm)
    if marker >= square:
        raise ValueError(
            f"marker_mm ({marker:g}) must be smaller than square_mm ({square:g}): "
            "each marker sits inside a white square"
        )
    width, height = _check_paper(paper)
    d = _dictionary(dictionary)
    needed = sx * sy // 2
    if needed > _dictionary_len(d):
        raise ValueError(
            f"a {sx} x {sy} board needs {needed} markers; dictionary {dictionary} has only "
            f"{_dictionary_len(d)}"
        )
    board_w, board_h = sx * square, sy * square
    portrait = (width - 2 * MARGIN_MM, height - 2 * MARGIN_MM - FOOTER_MM)
    landscape = (height - 2 * MARGIN_MM, width - 2 * MARGIN_MM - FOOTER_MM)
    eps = 1e-9
    fits_p = board_w <= portrait[0] + eps and board_h <= portrait[1] + eps
    fits_l = board_w <= landscape[0] + eps and board_h <= landscape[1] + eps
    if not (fits_p or fits_l):
        raise ValueError(
            f"a {sx} x {sy} board of {square:g} mm squares is {board_w:g} x {board_h:g} mm; "
            f"it does not fit the {paper} page ({portrait[0]:g} x {portrait[1]:g} mm inside "
            "margins and footer, portrait or landscape)"
        )
    use_landscape = fits_l and (not fits_p or board_w > board_h)
    avail = landscape if use_landscape else portrait

    board = cv2.aruco.CharucoBoard((sx, sy), square, marker, d)
    obj_points = [np.asarray(p, dtype=float).reshape(-1, 3) for p in board.getObjPoints()]
    marker_ids = np.asarray(board.getIds()).ravel()
    white: set[tuple[int, int]] = set()
    for corners in obj_points:
        cx, cy = corners[:, :2].mean(axis=0)
        white.add((int(cx // square), int(cy // square)))
    if len(white) != len(obj_points):  # pragma: no cover - OpenCV layout guard
        raise RuntimeError("unexpected ChArUco layout: two markers in one square")

    pdf = _new_pdf(paper)
    pdf.set_title(f"TableSight ChArUco board {sx}x{sy}, {square:g}/{marker:g} mm, {dictionary}")
    pdf.add_page(orientation="L" if use_landscape else "P")
    ox = MARGIN_MM + (avail[0] - board_w) / 2
    oy = MARGIN_MM + (avail[1] - board_h) / 2
    squares: list[Rect] = [
        (ox + col * square, oy + row * square, square, square)
        for row in range(sy)
        for col in range(sx)
        if (col, row) not in white
    ]
    _fill(pdf, squares)
    cell = marker / (d.markerSize + 2)
    for corners, marker_id in zip(obj_points, marker_ids, strict=True):
        left, top = corners[:, 0].min(), corners[:, 1].min()
        _fill(pdf, _bit_rects(marker_bits(d, int(marker_id)), ox + left, oy + top, cell))
    first = f"squares are {square:g} mm; {_SCALE_TEXT}"
    second = (
        f"ChArUco board (OpenCV CharucoBoard): {sx} x {sy} squares, square {square:g} mm, "
        f"marker {marker:g} mm, dictionary {dictionary}, {sx - 1} x {sy - 1} inner corners"
    )
    _draw_footer(pdf, first, second)
    pdf.output(os.fspath(path))
