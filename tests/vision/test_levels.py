"""Models on raised levels, seen live: put on the level they stand on, where they stand.

Rendered pictures (the synthetic camera 42" up, 12" in front of the near edge, 1080p;
terrain drawn as opaque prisms, each miniature as an opaque figure on its base) of a 5"
tower, a 7" tower and a 2" crate, each with its 30 mm (crate: 25 mm) marker on its top,
and models with 20 mm markers 4 mm above their bases' undersides. The truth is where each
marker was put; nothing is read back from the code under test.

Two pictures go through the observer in turn, as frames do: first the table with the
pieces bare (their markers seen), then the models in place:

* ``on5`` stands on the 5" tower and ``on2`` on the 2" crate, each with its figure
  between the camera and the piece's marker, which the second picture therefore does not
  show. Placed from that picture alone, their heights are measured (a little low) and
  the plan positions follow the ray of the marker to the plane at that height, off by
  the height's error times the ray's slope (about 0.8 here): the tower's model stands on
  no known level; the crate's, measured 1.4-1.8" up, may even be put on the table,
  within 2.5 uncertainties of its height below it. With the pieces as the first picture
  placed them, each is on its piece's top, at exactly its height, and where it stands to
  within 0.1".
* ``edge7`` stands on the 7" tower with its base's centre 0.25" in from the edge, its
  marker on a tab 20 mm in front of it, overhanging the edge: the base's centre is on
  the tower, the marker is not.
* ``beside5`` and ``beside2`` stand on the table, their bases touching the tower's front
  and the crate's side: on the table, never on the piece beside them.

Run with ``-s`` to see each case's plan error and height, from the second picture alone
and after the first.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tablesight.calibration.roster import RosterModel, TerrainPiece
from tablesight.calibration.table import MM_PER_IN, TableSpec
from tablesight.rig.bodies import TERRAIN_BGR, Figure, Prism, render_scene
from tablesight.rig.synth import PinholeCamera, PlacedMarker, Shot
from tablesight.rules.geometry import Pose
from tablesight.vision.frame import Frame
from tablesight.vision.locate import Placed, locate
from tablesight.vision.observe import Observer
from tablesight.vision.sight import detect, sight

CAMERA = PinholeCamera.looking_at((22.0, -12.0, 42.0), (22.0, 15.0, 0.0))
ANCHORS = [(0, 1.5, 1.5), (1, 42.5, 1.5), (2, 42.5, 28.5), (3, 1.5, 28.5)]
TABLE = '[table]\nwidth_in = 44\ndepth_in = 30\ndictionary = "4x4_50"\n' + "".join(
    f"\n[[anchors]]\nid = {i}\nx_in = {x}\ny_in = {y}\nsize_mm = 40\n" for i, x, y in ANCHORS
)
LIFT_MM = 4.0  # a model's marker face above its base's underside
BASE_R_IN = 16 / MM_PER_IN  # 32 mm round bases


@dataclass(frozen=True)
class Piece:
    id: str
    marker: int
    marker_mm: float
    corners: tuple[float, float, float, float]  # x0, y0, x1, y1: its footprint
    height: float
    marker_at: tuple[float, float]  # its marker's centre on its top

    def spec(self) -> TerrainPiece:
        x0, y0, x1, y1 = self.corners
        mx, my = self.marker_at
        return TerrainPiece(
            id=self.id,
            marker=self.marker,
            marker_size_mm=self.marker_mm,
            marker_height_mm=self.height * MM_PER_IN,
            polygon=[
                (x0 - mx, y0 - my),
                (x1 - mx, y0 - my),
                (x1 - mx, y1 - my),
                (x0 - mx, y1 - my),
            ],
            height=self.height,
            keywords=["climbable"],
        )

    def prism(self) -> Prism:
        x0, y0, x1, y1 = self.corners
        return Prism(
            np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]), 0.0, self.height, TERRAIN_BGR
        )

    def card(self) -> PlacedMarker:
        return PlacedMarker(self.marker, self.marker_mm, *self.marker_at, self.height)


@dataclass(frozen=True)
class Case:
    id: str
    marker: int
    at: tuple[float, float]  # the base's centre
    heading: float
    z: float  # the height its base stands at
    on: str  # what it stands on
    offset_mm: tuple[float, float] = (0.0, 0.0)  # its marker, forward and left of the centre
    figure: Figure | None = None
    marker_mm: float = 20.0

    def entry(self) -> RosterModel:
        return RosterModel.model_validate(
            {
                "id": self.id,
                "side": "red",
                "base": {"shape": "round", "diameter_mm": 32},
                "movement": 6,
                "marker": self.marker,
                "marker_size_mm": self.marker_mm,
                "marker_height_mm": LIFT_MM,
                "marker_offset_mm": list(self.offset_mm),
            }
        )

    def card(self) -> PlacedMarker:
        forward, left = (v / MM_PER_IN for v in self.offset_mm)
        a = math.radians(self.heading)
        x = self.at[0] + forward * math.cos(a) - left * math.sin(a)
        y = self.at[1] + forward * math.sin(a) + left * math.cos(a)
        z = self.z + LIFT_MM / MM_PER_IN
        return PlacedMarker(self.marker, self.marker_mm, x, y, z, self.heading)


TOWER5 = Piece("tower5", 20, 30.0, (18.0, 17.0, 24.0, 23.0), 5.0, (21.0, 20.0))
TOWER7 = Piece("tower7", 21, 30.0, (30.0, 17.0, 36.0, 23.0), 7.0, (33.0, 21.0))
CRATE2 = Piece("crate2", 22, 25.0, (6.0, 14.0, 10.0, 18.0), 2.0, (8.0, 16.5))
PIECES = [TOWER5, TOWER7, CRATE2]
#: A miniature facing away from the camera (heading 90), 14 mm ahead of its base's centre,
#: its marker 16 mm behind the centre, toward the camera (the marker's card clear of the
#: figure): the figure stands between the camera and the piece's marker behind the model.
HIDING = Figure(height_mm=50, width_mm=25, offset_mm=(14.0, 0.0))
CASES = [
    Case("on5", 10, (21.0, 18.4), 90.0, 5.0, "tower5", (-16.0, 0.0), HIDING),
    Case("on2", 11, (8.0, 15.3), 90.0, 2.0, "crate2", (-16.0, 0.0), HIDING),
    Case("edge7", 12, (33.5, 17.0 + 0.25), 90.0, 7.0, "tower7", (-20.0, 0.0)),
    Case("beside5", 13, (22.5, 17.0 - BASE_R_IN - 0.02), 270.0, 0.0, "table"),
    Case("beside2", 14, (10.0 + BASE_R_IN + 0.02, 16.0), 0.0, 0.0, "table"),
]
SEEDS = (1, 2, 3)


def _pictures(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The table with the pieces bare, then with the models standing."""
    fixed = [PlacedMarker(i, 40.0, x, y) for i, x, y in ANCHORS] + [p.card() for p in PIECES]
    solids = [p.prism() for p in PIECES]
    bare, _ = render_scene(CAMERA, (44, 30), fixed, solids, shot=Shot(seed=seed))
    figures = [
        c.figure.prism(c.at[0], c.at[1], c.heading, c.z) for c in CASES if c.figure is not None
    ]
    cards = fixed + [c.card() for c in CASES]
    standing, _ = render_scene(CAMERA, (44, 30), cards, solids + figures, shot=Shot(seed=seed))
    return bare, standing


@dataclass(frozen=True)
class Seen:
    """Where a case's model was placed: plan error against the truth, height, level."""

    off_in: float
    z: float
    on: str | None


def _observe(table: TableSpec, frames: list[np.ndarray]) -> dict[str, Seen]:
    """The models as the observer has them after ``frames``, in turn."""
    roster = [c.entry() for c in CASES]
    observer = Observer(table, roster, CAMERA.calibrated(), [p.spec() for p in PIECES])
    for i, picture in enumerate(frames):
        observation = observer.observe(Frame(picture, i / 30, i))
        assert observation.health is not None and observation.health.healthy
    truth = {c.id: c for c in CASES}
    out = {}
    for model in observation.models:
        case = truth[model.id]
        off = math.dist(model.pose.xy, case.at)
        out[model.id] = Seen(off, model.pose.z, _level_of(model.pose.z))
    return out


def _level_of(z: float) -> str | None:
    """The level a height is exactly (the table or a piece's top: each piece here has a
    height of its own), else None."""
    levels = {0.0: "table"} | {p.height: p.id for p in PIECES}
    return levels.get(z)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> TableSpec:
    path: Path = tmp_path_factory.mktemp("levels") / "table.toml"
    path.write_text(TABLE)
    return TableSpec.from_toml(path)


@pytest.fixture(scope="module")
def seen(table: TableSpec) -> dict[int, tuple[dict[str, Seen], dict[str, Seen], set[int]]]:
    """Per seed: the models from the second picture alone, after both pictures, and the
    markers the second picture shows."""
    out = {}
    for seed in SEEDS:
        bare, standing = _pictures(seed)
        shown = set(detect(standing, "4x4_50").ids.tolist())
        out[seed] = (_observe(table, [standing]), _observe(table, [bare, standing]), shown)
    return out


def test_the_figures_hide_the_pieces_markers_and_the_models_markers_show(seen) -> None:
    """The premise: the second picture shows every model's marker and the 7" tower's, not
    the 5" tower's nor the crate's (each behind the figure of the model on it)."""
    for _, _, shown in seen.values():
        assert {c.marker for c in CASES} <= shown
        assert TOWER7.marker in shown
        assert not {TOWER5.marker, CRATE2.marker} & shown


def test_a_model_on_a_piece_whose_marker_it_hides_is_put_on_that_piece(seen) -> None:
    for alone, after, _ in seen.values():
        for mid in ("on5", "on2"):
            case = next(c for c in CASES if c.id == mid)
            assert after[mid].on == case.on, (mid, after[mid])
            assert after[mid].z == case.z, (mid, after[mid])
            assert after[mid].off_in < 0.1, (mid, after[mid])
        # from the picture alone the tower is not known: its model is at the height
        # measured (within 0.5"), on no known level, off in plan along its marker's ray
        assert alone["on5"].on is None and abs(alone["on5"].z - 5.0) < 0.5, alone["on5"]


def test_a_model_at_a_towers_edge_with_its_marker_over_the_edge_is_on_the_tower(seen) -> None:
    for alone, after, _ in seen.values():
        for placed in (alone["edge7"], after["edge7"]):  # the tower's marker is seen
            assert placed.on == "tower7" and placed.z == 7.0, placed
            assert placed.off_in < 0.1, placed


def test_models_on_the_table_beside_a_piece_stay_on_the_table(seen) -> None:
    for alone, after, _ in seen.values():
        for mid in ("beside5", "beside2"):
            for placed in (alone[mid], after[mid]):
                assert placed.on == "table" and placed.z == 0.0, (mid, placed)
                assert placed.off_in < 0.1, (mid, placed)


def _worst(placed: list[Seen], z: float) -> str:
    """The largest plan error and the height furthest from ``z``."""
    off = max(p.off_in for p in placed)
    far = max(placed, key=lambda p: abs(p.z - z)).z
    return f'{off:.3f}" off, z {far:.2f}'


def test_print_each_case(seen) -> None:
    """The figures, the worst over the seeds (run with -s)."""
    print(f"\n{'case':8} {'truth':>22}  {'picture alone':>22}  {'after the bare table':>22}")
    for case in CASES:
        alone = _worst([seen[s][0][case.id] for s in SEEDS], case.z)
        after = _worst([seen[s][1][case.id] for s in SEEDS], case.z)
        truth = f"({case.at[0]:.2f}, {case.at[1]:.2f}) z {case.z:.2f}"
        print(f"{case.id:8} {truth:>22}  {alone:>22}  {after:>22}")


# ------------------------------------------------------------------------------------------
# Random tables: the spread of measured heights, and every model on its level

#: Six pieces on a grid, each 5 x 5 in, of a height drawn from these.
GRID = [(9.0, 9.0), (22.0, 9.0), (35.0, 9.0), (9.0, 21.0), (22.0, 21.0), (35.0, 21.0)]
HEIGHTS = (2.0, 3.0, 5.0, 7.0)
#: Set-ups: the models' markers (mm) and the camera (where, at 1080p or 4K).
SETUPS = {
    "20 mm, 42 in up": (20.0, CAMERA),
    "25 mm, 42 in up": (25.0, CAMERA),
    "20 mm, 32 in up": (20.0, PinholeCamera.looking_at((22.0, -10.0, 32.0), (22.0, 15.0, 0.0))),
    "25 mm, 60 in up": (25.0, PinholeCamera.looking_at((22.0, -20.0, 60.0), (22.0, 15.0, 0.0))),
    "15 mm, 60 in up, 4K": (
        15.0,
        PinholeCamera.looking_at((22.0, -20.0, 60.0), (22.0, 15.0, 0.0), 3840, 2160),
    ),
}


def _random_table(
    seed: int, marker_mm: float = 20.0, camera: PinholeCamera = CAMERA
) -> tuple[list[TerrainPiece], list[Placed], list[Case], np.ndarray]:
    """Six pieces (as ``terrain.toml`` has them and as an earlier frame placed them), two
    models on each one's top, their cards wholly on it whichever way they turn, and one on
    the table beside it, its card clear of the piece's side; and the picture."""
    rng = np.random.default_rng(seed)
    reach = marker_mm * 8 / 6 / 2 / MM_PER_IN * math.sqrt(2)  # a card's half-diagonal
    specs, placed, cases, solids = [], [], [], []
    for k, (tx, ty) in enumerate(GRID):
        h = float(rng.choice(HEIGHTS))
        piece = Piece(
            f"piece{k}", 40 + k, 30.0, (tx - 2.5, ty - 2.5, tx + 2.5, ty + 2.5), h, (tx, ty)
        )
        specs.append(piece.spec())
        x0, y0, x1, y1 = piece.corners
        square = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        placed.append(Placed(piece.id, piece.marker, Pose(tx, ty, 0.0), polygon=square))
        solids.append(piece.prism())
        ats = [
            (
                tx + side * rng.uniform(reach + 0.05, 2.5 - reach),
                ty + rng.uniform(reach - 2.5, 2.5 - reach),
            )
            for side in (-1, 1)  # its left and right halves
        ]
        dx, dy = [(0, -1), (1, 0), (-1, 0)][rng.integers(3)]  # in front, right or left
        gap = 2.5 + reach + rng.uniform(0.05, 0.5)
        along = rng.uniform(-2.0, 2.0)
        ats.append((tx + dx * gap + along * (dx == 0), ty + dy * gap + along * (dy == 0)))
        for at, z, on in zip(ats, (h, h, 0.0), (piece.id, piece.id, "table"), strict=True):
            n = len(cases)
            heading = rng.uniform(0, 360)
            cases.append(Case(f"m{n}", 10 + n, at, heading, z, on, marker_mm=marker_mm))
    cards = [PlacedMarker(i, 40.0, x, y) for i, x, y in ANCHORS] + [c.card() for c in cases]
    picture, _ = render_scene(camera, (44, 30), cards, solids, shot=Shot(seed=seed))
    return specs, placed, cases, picture


def _within(z: np.ndarray, u: np.ndarray, k: float) -> str:
    """How many heights ``z`` are within the table's level tolerance at ``k`` uncertainties
    ``u`` (at least 0.75 in) of the table."""
    return f"{np.sum(abs(z) <= np.maximum(0.75, k * u))} of {len(z)}"


@pytest.mark.slow
def test_on_random_tables_every_model_is_on_the_level_it_stands_on(table: TableSpec) -> None:
    """Six tables of six pieces 2-7" high and 18 models in each of five set-ups (the
    models the pieces hide from the camera left out), the pieces known: no model is put
    on a level it does not stand on; 99% are on theirs, at exactly its height and within
    0.1" of where they stand. Run with -s for the spread of the measured heights, in
    inches and in their own uncertainties (the level tolerance is 2.5 of them), and how
    many models on pieces would be put on the table if the pieces were not known."""
    print(
        f"\n{'':20} {'':6} {'height off, in':^24}   {'in uncertainties u':^17}   "
        f"{'beyond':^9}   {'unknown, on the table':^21}"
        f"\n{'set-up':20} {'models':>6} {'mean':>6} {'sd':>5} {'p99':>5} {'worst':>5}   "
        f"{'p50':>5} {'p99':>5} {'worst':>5}   {'2u':>4} {'2.5u':>4}   "
        f"{'at 2.5u':>10} {'at 4u':>10}"
    )
    for name, (marker_mm, camera) in SETUPS.items():
        errors: list[float] = []
        ratios: list[float] = []
        raised: list[tuple[float, float]] = []
        missed = 0
        for seed in range(6):
            specs, placed, cases, picture = _random_table(seed, marker_mm, camera)
            roster = [c.entry() for c in cases]
            seen = sight(picture, table, camera.calibrated())
            assert seen.pose is not None and seen.pose.healthy
            found = locate(seen.detections, table, seen.pose, roster, specs, placed)
            truth = {c.id: c for c in cases}
            assert len(found.models) >= 12, (name, seed)
            for model in found.models:
                case = truth[model.id]
                assert model.on in (case.on, None), (name, seed, case, model)
                if model.on is None:
                    missed += 1
                else:
                    assert model.pose.z == case.z, (name, seed, case, model)
                    assert math.dist(model.pose.xy, case.at) < 0.1, (name, seed, case, model)
                assert model.z_measured_in is not None and model.z_uncertainty_in is not None
                errors.append(model.z_measured_in - case.z)
                ratios.append(abs(errors[-1]) / model.z_uncertainty_in)
                if case.z > 0:  # on a piece: would the table take it, were no piece known?
                    raised.append((model.z_measured_in, model.z_uncertainty_in))
        e, r = np.asarray(errors), np.asarray(ratios)
        assert missed <= 0.01 * len(e), name
        z, u = np.asarray(raised).T
        print(
            f"{name:20} {len(e):6} {e.mean():+6.2f} {e.std():5.2f} "
            f"{np.percentile(abs(e), 99):5.2f} {abs(e).max():5.2f}   {np.median(r):5.2f} "
            f"{np.percentile(r, 99):5.2f} {r.max():5.2f}   {np.sum(r > 2):4} {np.sum(r > 2.5):4}   "
            f"{_within(z, u, 2.5):>10} {_within(z, u, 4.0):>10}"
        )


def test_print_what_the_levels_cost(table: TableSpec) -> None:
    """Locating a random table's 18 models among its 6 pieces, with the pieces and
    without (run with -s; the time is printed, not asserted)."""
    specs, placed, cases, picture = _random_table(0)
    roster = [c.entry() for c in cases]
    seen = sight(picture, table, CAMERA.calibrated())
    assert seen.pose is not None

    def ms(*terrain: list) -> float:
        best = math.inf
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(100):
                locate(seen.detections, table, seen.pose, roster, *terrain)
            best = min(best, (time.perf_counter() - start) * 10)
        return best

    found = locate(seen.detections, table, seen.pose, roster, specs, placed)
    on = sum(m.on not in ("table", None) for m in found.models)
    print(
        f"\n{len(found.models)} models ({on} on pieces), 6 pieces: {ms(specs, placed):.2f} ms; "
        f"without the pieces {ms():.2f} ms"
    )
