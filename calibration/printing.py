"""Print-ready PDFs of ArUco markers and ChArUco boards at exact physical size.

Everything is drawn as vector black rectangles in millimetres (fpdf2, ``unit="mm"``), from
the bit patterns OpenCV itself uses (``cv2.aruco.generateImageMarker``), so a marker printed
at 100 % is exactly ``size_mm`` wide: the side of its black square, border included. Every
page carries a 10 mm ruler and a line asking the user to check the printer did not scale
the page; the PDF also asks the print dialogue for no scaling (``/PrintScaling /None``).
A roster's sheet (:func:`roster_sheet`) prints each model's marker at its own size inside
a dashed outline of its base, to cut along, and its name under it.

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

from tablesight.calibration.dictionaries import dictionary_id
from tablesight.rules.geometry import Base

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


# -- a roster's sheet: each marker at its own size, with the outline of what it goes on --

#: Line width of the dashed cut guides of a roster sheet, and their dashes and gaps.
CUT_LINE_MM = 0.2
CUT_DASH_MM = (1.2, 0.8)
_CUT_GREY = 110
_LABEL_LINE_MM = 2.4  # from one line of a label to the next
_LABEL_MM = _LABEL_BASELINE_MM + _LABEL_LINE_MM + 0.8  # the label under a cut guide


class SheetEntryError(ValueError):
    """Entries of a roster sheet that cannot be printed, as ``entries[3].size_mm: ...``
    (or ``entries[1, 4].size_mm``: every one at once); ``indices``, ``field`` and
    ``reason`` let a caller name them in its own file instead (:meth:`where`)."""

    def __init__(self, index: int | Sequence[int], field: str, reason: str) -> None:
        self.indices = [index] if isinstance(index, int) else list(index)
        self.field = field
        self.reason = reason
        entries = [f"entries[{k}]" for k in range(max(self.indices) + 1)]
        super().__init__(f"{self.where(entries)}: {reason}")

    def where(self, names: Sequence[str], field: str | None = None) -> str:
        """The entries as the caller's file names them (``names[k]`` for entry ``k``, as
        ``models[3]``) with the field: see :func:`named_fields`."""
        return named_fields(names, self.indices, field or self.field)


def named_fields(names: Sequence[str], indices: Sequence[int], field: str) -> str:
    """Field ``field`` of the entries ``indices``, each named as ``names`` names it, in one:
    ``models[1, 4].marker_size_mm`` for two models (a path with brackets is kept whole).

    >>> names = [f"roster.toml: models[{k}]" for k in range(5)]
    >>> named_fields(names, [1, 4], "marker_size_mm"), named_fields(names, [2], "marker")
    ('roster.toml: models[1, 4].marker_size_mm', 'roster.toml: models[2].marker')
    >>> named_fields(["models[0]", "terrain[0]"], [0, 1], "marker")
    'models[0].marker, terrain[0].marker'
    """
    named = [names[k] for k in indices]
    heads = {n.rsplit("[", 1)[0] for n in named}
    if len(heads) == 1 and all(n.endswith("]") for n in named):
        inside = ", ".join(n.rsplit("[", 1)[1][:-1] for n in named)
        return f"{heads.pop()}[{inside}].{field}"
    return ", ".join(f"{n}.{field}" for n in named)


@dataclass(frozen=True)
class SheetEntry:
    """One marker of a roster sheet and what it is cut out for.

    ``name`` and ``detail`` are printed under it (a model's id; its side and unit).
    ``base`` is the base it is glued on (``length_mm`` runs up the page, the way the
    marker's top edge faces), or None for a terrain piece: then the cut guide is a square
    at the quiet zone's edge. ``offset_mm`` = (forward, left) is where the marker's centre
    sits from the base's centre, as ``marker_offset_mm`` in ``roster.toml``; a marker
    that, so placed, does not lie on its base with its quiet zone (a tab, a card on the
    figure) is cut out square too.
    """

    marker: int
    size_mm: float
    name: str
    detail: str = ""
    base: Base | None = None
    offset_mm: tuple[float, float] = (0.0, 0.0)


def _on_base(base: Base, centre: tuple[float, float], half: float) -> bool:
    """Whether the square of half-side ``half`` around the marker's centre lies inside the
    base whose centre is at ``centre`` from the marker's (mm, x right, y down the page)."""
    a, b = base.width_mm / 2, base.length_mm / 2
    corners = [(sx * half - centre[0], sy * half - centre[1]) for sx in (-1, 1) for sy in (-1, 1)]
    if base.shape == "rect":
        return all(abs(x) <= a + 1e-9 and abs(y) <= b + 1e-9 for x, y in corners)
    return all((x / a) ** 2 + (y / b) ** 2 <= 1 + 1e-9 for x, y in corners)


def largest_marker_mm(base: Base, dictionary: str = "4x4_50") -> float:
    """The side of the largest marker that lies on ``base``, centred, with its one-cell
    quiet zone (mm, floored to 0.1 mm): what a roster sheet prints at most.

    >>> largest_marker_mm(Base.round(32)), largest_marker_mm(Base("oval", 60, 35))
    (16.9, 22.6)
    >>> largest_marker_mm(Base("rect", 80, 50)), largest_marker_mm(Base.round(32), "6x6_250")
    (37.5, 18.1)
    """
    cells = _dictionary(dictionary).markerSize + 2
    a, b = base.width_mm / 2, base.length_mm / 2
    half = min(a, b) if base.shape == "rect" else a * b / math.hypot(a, b)
    return math.floor(2 * half * cells / (cells + 2) * 10 + 1e-9) / 10


def misfits(
    entries: Sequence[tuple[str, Base, float]], dictionary: str = "4x4_50"
) -> tuple[list[int], str]:
    """Which of ``(name, base, marker size_mm)`` have a marker that with its one-cell quiet
    zone does not fit its base, centred: their indices, and one sentence naming every one
    with the largest marker its base takes (empty when all fit).

    >>> misfits([("a", Base.round(32), 24), ("b", Base.round(32), 16), ("c", Base.round(25), 20)])
    ([0, 2], 'markers that with their quiet zone do not fit their bases: a 24 mm on a 32 mm \
round base (at most 16.9 mm), c 20 mm on a 25 mm round base (at most 13.2 mm)')
    """
    cells = _dictionary(dictionary).markerSize + 2
    bad = [
        k
        for k, (_, base, size) in enumerate(entries)
        if not _on_base(base, (0.0, 0.0), size / 2 + size / cells)
    ]
    said = [
        f"{entries[k][0]} {entries[k][2]:g} mm on a {_base_text(entries[k][1])} "
        f"(at most {largest_marker_mm(entries[k][1], dictionary):g} mm)"
        for k in bad
    ]
    one = "a marker that with its quiet zone does not fit its base"
    many = "markers that with their quiet zone do not fit their bases"
    return bad, (f"{one if len(bad) == 1 else many}: " + ", ".join(said)) if bad else ""


def _base_text(base: Base) -> str:
    if base.shape == "round":
        return f"{base.length_mm:g} mm round base"
    return f"{base.length_mm:g} x {base.width_mm:g} mm {base.shape} base"


@dataclass(frozen=True)
class _Tile:
    """An entry laid out around its marker's centre (mm, x right, y down the page)."""

    entry: SheetEntry
    cell: float
    cut: Base | None  # the base outline to cut along; None: a square at the quiet zone
    centre: tuple[float, float]  # of the cut guide, from the marker's centre
    box: Rect  # the cut guide with its line, and the marker: (left, top, right, bottom)
    width: float  # of the tile: the box, or the label if wider
    height: float  # the box and the label under it


def _label(e: SheetEntry) -> tuple[str, str]:
    """The two lines printed under a marker: ``krotos``, ``id 10, goliath``."""
    return e.name, f"id {int(e.marker)}" + (f", {e.detail}" if e.detail else "")


def _check_entry(index: int, e: SheetEntry, count: int, dictionary: str) -> float:
    """The entry's marker size, once its fields are sound; else a SheetEntryError."""
    if isinstance(e.marker, bool) or not isinstance(e.marker, int | np.integer):
        raise SheetEntryError(index, "marker", f"expected an integer, got {e.marker!r}")
    if not 0 <= e.marker < count:
        raise SheetEntryError(
            index, "marker", f"expected a marker of {dictionary} (0 to {count - 1}), got {e.marker}"
        )
    try:
        size = _positive("size_mm", e.size_mm)
    except ValueError as exc:
        raise SheetEntryError(index, "size_mm", str(exc).removeprefix("size_mm ")) from None
    if e.base is not None:
        dims = (e.base.length_mm, e.base.width_mm)
        if e.base.shape not in ("round", "oval", "rect") or not all(
            math.isfinite(v) and v > 0 for v in dims
        ):
            raise SheetEntryError(
                index, "base", f"expected a round, oval or rect base of sizes > 0, got {e.base}"
            )
    if not all(math.isfinite(v) for v in e.offset_mm):
        raise SheetEntryError(index, "offset_mm", f"expected numbers, got {e.offset_mm!r}")
    for field, text in (("name", e.name), ("detail", e.detail)):
        try:
            text.encode("latin-1")
        except UnicodeEncodeError:
            raise SheetEntryError(
                index, field, f"expected Latin-1 text to print, got {text!r}"
            ) from None
    return size


def _tile(pdf: FPDF, e: SheetEntry, size: float, cells: int) -> _Tile:
    """The entry's cut guide and label around its marker (which fits its base)."""
    cell = size / cells
    half = size / 2 + cell
    cut = e.base
    forward, left = e.offset_mm
    centre = (left, forward)  # the base's centre from the marker's, on the page
    if cut is None or not _on_base(cut, centre, half):
        cut, centre = None, (0.0, 0.0)
        r = half + QUIET_EXTRA_MM + CUT_LINE_MM / 2
        box: Rect = (-r, -r, r, r)
    else:
        a, b = cut.width_mm / 2 + CUT_LINE_MM / 2, cut.length_mm / 2 + CUT_LINE_MM / 2
        box = (
            min(centre[0] - a, -half),
            min(centre[1] - b, -half),
            max(centre[0] + a, half),
            max(centre[1] + b, half),
        )
    pdf.set_font("Helvetica", size=_LABEL_PT)
    label = max(pdf.get_string_width(line) for line in _label(e))
    width = max(box[2] - box[0], label)
    return _Tile(e, cell, cut, centre, box, width, box[3] - box[1] + _LABEL_MM)


Placed = tuple[_Tile, float, float]  # a tile and its top-left corner on the page (mm)


def _pack(tiles: Sequence[_Tile], paper: str) -> list[list[Placed]]:
    """The tiles in rows, in order, left to right and top to bottom, page after page."""
    width, height = PAPER_MM[paper]
    avail_w = width - 2 * MARGIN_MM
    avail_h = height - 2 * MARGIN_MM - FOOTER_MM
    pages: list[list[Placed]] = [[]]
    x = y = row = 0.0
    for t in tiles:
        if x > 0 and x + t.width > avail_w + 1e-9:
            x, y, row = 0.0, y + row + GAP_MM, 0.0
        if y > 0 and y + t.height > avail_h + 1e-9:
            pages.append([])
            x = y = row = 0.0
        pages[-1].append((t, MARGIN_MM + x, MARGIN_MM + y))
        x += t.width + GAP_MM
        row = max(row, t.height)
    return pages


def _draw_tile(pdf: FPDF, d: cv2.aruco.Dictionary, t: _Tile, left: float, top: float) -> None:
    box_w = t.box[2] - t.box[0]
    mx = left + (t.width - box_w) / 2 - t.box[0]
    my = top - t.box[1]
    size = float(t.entry.size_mm)
    bits = marker_bits(d, t.entry.marker)
    _fill(pdf, _bit_rects(bits, mx - size / 2, my - size / 2, t.cell))
    pdf.set_line_width(CUT_LINE_MM)
    pdf.set_draw_color(_CUT_GREY, _CUT_GREY, _CUT_GREY)
    pdf.set_dash_pattern(*CUT_DASH_MM)
    if t.cut is None:
        r = size / 2 + t.cell + QUIET_EXTRA_MM
        pdf.rect(mx - r, my - r, 2 * r, 2 * r, style="D")
    else:
        w, h = t.cut.width_mm, t.cut.length_mm
        cx, cy = mx + t.centre[0], my + t.centre[1]
        if t.cut.shape == "rect":
            pdf.rect(cx - w / 2, cy - h / 2, w, h, style="D")
        else:
            pdf.ellipse(cx - w / 2, cy - h / 2, w, h, style="D")
    pdf.set_dash_pattern()
    pdf.set_font("Helvetica", size=_LABEL_PT)
    middle = left + t.width / 2
    baseline = top + t.box[3] - t.box[1] + _LABEL_BASELINE_MM
    for i, line in enumerate(_label(t.entry)):
        pdf.text(middle - pdf.get_string_width(line) / 2, baseline + i * _LABEL_LINE_MM, line)


def _sizes_text(sizes: Sequence[float]) -> str:
    """``[24, 30, 20]`` -> ``"20, 24 and 30 mm"``."""
    words = [f"{s:g}" for s in sorted(set(sizes))]
    return (", ".join(words[:-1]) + " and " if len(words) > 1 else "") + words[-1] + " mm"


def roster_sheet(
    path: str | os.PathLike[str],
    entries: Sequence[SheetEntry],
    dictionary: str = "4x4_50",
    paper: Paper = "a4",
) -> int:
    """Write a PDF of a roster's markers, each at its own size with what to cut it out along.

    Each marker is printed exactly ``size_mm`` wide, on white, inside a thin dashed cut
    guide: its base's outline (a circle, an oval or a rectangle, ``length_mm`` up the page,
    placed by ``offset_mm``), or for a terrain piece, a tab or a card a square one cell
    plus 2 mm beyond the marker; its name and ``id N, detail`` are printed under it. The
    entries fill the pages in rows, in order. Returns the number of pages written. Bad
    entries raise :class:`SheetEntryError` (a marker that with its one-cell quiet zone does
    not fit its base, centred, names the largest that does), other bad arguments
    ValueError, before anything is written.

    """
    _check_paper(paper)
    d = _dictionary(dictionary)
    count = _dictionary_len(d)
    cells = d.markerSize + 2
    entry_list = list(entries)
    if not entry_list:
        raise ValueError("entries is empty: give at least one marker to print")
    pdf = _new_pdf(paper)
    width, height = PAPER_MM[paper]
    avail_w, avail_h = width - 2 * MARGIN_MM, height - 2 * MARGIN_MM - FOOTER_MM
    sizes = [_check_entry(i, e, count, dictionary) for i, e in enumerate(entry_list)]
    on_bases = [(k, (e.name, b, sizes[k])) for k, e in enumerate(entry_list) if (b := e.base)]
    bad, said = misfits([entry for _, entry in on_bases], dictionary)
    if bad:  # every one named at once, not the first alone
        raise SheetEntryError([on_bases[k][0] for k in bad], "size_mm", said)
    first: dict[int, int] = {}
    tiles: list[_Tile] = []
    for i, e in enumerate(entry_list):
        size = sizes[i]
        if int(e.marker) in first:
            raise SheetEntryError(
                i, "marker", f"marker {e.marker} is printed twice (also entries[{first[e.marker]}])"
            )
        first[int(e.marker)] = i
        t = _tile(pdf, e, size, cells)
        if t.width > avail_w + 1e-9 or t.height > avail_h + 1e-9:
            raise SheetEntryError(
                i,
                "size_mm" if e.base is None else "base",
                f"{e.name}: its cut-out and label take {t.width:.1f} x {t.height:.1f} mm; too "
                f"big for the {paper} page ({avail_w:g} x {avail_h:g} mm inside margins and "
                "footer)",
            )
        tiles.append(t)

    pages = _pack(tiles, paper)
    pdf.set_title(f"TableSight ArUco markers, {dictionary}, {len(tiles)} of a roster")
    top_line = f"markers are {_sizes_text([t.entry.size_mm for t in tiles])}; {_SCALE_TEXT}"
    for number, placed in enumerate(pages, start=1):
        pdf.add_page()
        for t, left, top in placed:
            _draw_tile(pdf, d, t, left, top)
        _draw_footer(
            pdf,
            top_line,
            f"TableSight ArUco markers, dictionary {dictionary}; cut along the dashed lines "
            f"(the bases' outlines); page {number} of {len(pages)}",
        )
    pdf.output(os.fspath(path))
    return len(pages)


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
