"""The storyboard file: a match's footage script in TOML (see :mod:`tablesight.rig.footage` for
its keys), loaded into a :class:`~tablesight.rig.footage.Storyboard`; a malformed one is one
line naming the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tablesight.calibration.roster import RosterModel, TerrainPiece
from tablesight.calibration.table import Anchor, TableKeys, TableSpec
from tablesight.rig.bodies import Figure
from tablesight.rig.footage import Action, Bump, Cover, Flicker, Move, Side, Storyboard
from tablesight.rig.synth import PinholeCamera, Shot
from tablesight.rig.webcam import Codec, Webcam
from tablesight.rules.errors import InputError, load_toml


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


PoseIn = tuple[float, float] | tuple[float, float, float] | tuple[float, float, float, float]
Seconds = Annotated[float, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]
Length = Annotated[float, Field(gt=0, le=1000)]
Colour = Annotated[float, Field(ge=0, le=255)]


class _FigureIn(_Strict):
    height_mm: Length = 45.0
    width_mm: Length = 25.0
    offset_mm: tuple[float, float] = (0.0, 0.0)
    shape: Literal["cylinder", "box"] = "cylinder"
    depth_mm: Length | None = None
    base_mm: Annotated[float, Field(ge=0, le=1000)] = 4.0
    colour: tuple[Colour, Colour, Colour] = (70.0, 84.0, 104.0)

    def figure(self) -> Figure:
        fields = self.model_dump(exclude={"colour"})
        return Figure(**fields, colour_bgr=self.colour)


class _StoryModel(RosterModel):
    start: PoseIn
    figure: _FigureIn | None = None


class _StoryTerrain(TerrainPiece):
    at: PoseIn


class _CameraIn(_Strict):
    position: tuple[float, float, float]
    look_at: tuple[float, float, float]
    size: tuple[Annotated[int, Field(ge=16)], Annotated[int, Field(ge=16)]] = (1280, 720)
    hfov_deg: Annotated[float, Field(gt=0, lt=180)] = 70.0
    dist: tuple[float, float, float, float, float] = (-0.12, 0.05, 0.0005, -0.0003, 0.0)


class _ShotIn(_Strict):
    seed: int = 0
    blur_px: Annotated[float, Field(ge=0)] = 0.6
    noise_sigma: Annotated[float, Field(ge=0)] = 2.0
    gradient: Annotated[float, Field(ge=0, le=1)] = 0.25
    jpeg_quality: Annotated[int, Field(ge=1, le=100)] | None = 90
    supersample: Annotated[int, Field(ge=1, le=8)] = 3


class _WebcamIn(_Strict):
    motion_blur_s: Annotated[float, Field(ge=0, le=1)] = 0.0
    exposure_drift: Annotated[float, Field(ge=0, lt=1)] = 0.0
    exposure_period_s: Positive = 5.0
    codec: Codec | None = None
    bitrate_kbps: Annotated[float, Field(ge=50, le=100_000)] | None = None
    jpeg_quality: Annotated[int, Field(ge=1, le=100)] | None = None
    seed: int = 0


class _MoveIn(_Strict):
    kind: Literal["move"]
    model: str
    to: PoseIn
    at: Seconds
    seconds: Positive
    via: list[tuple[float, float]] = []
    arm: Side | None = None


class _CoverIn(_Strict):
    kind: Literal["cover"]
    at: Seconds
    seconds: Positive
    point: tuple[float, float] | None = None
    models: list[str] = []
    arm: Side | None = None

    @model_validator(mode="after")
    def _point_or_models(self) -> _CoverIn:
        if (self.point is None) == (not self.models):
            raise ValueError("a cover names a point or models (one of the two)")
        return self


class _BumpIn(_Strict):
    kind: Literal["bump"]
    at: Seconds
    position: tuple[float, float, float]
    look_at: tuple[float, float, float]


class _FlickerIn(_Strict):
    kind: Literal["flicker"]
    model: str
    at: Seconds
    frames: Annotated[int, Field(ge=1)] = 1


class _StoryboardFile(_Strict):
    duration_s: Positive
    fps: Positive = 30.0
    motion_hz: Positive = 10.0
    texture_seed: int = 0
    decorate: bool = True
    solid_terrain: bool = False
    shot: _ShotIn = _ShotIn()
    webcam: _WebcamIn = _WebcamIn()
    table: TableKeys
    anchors: list[Anchor]
    camera: _CameraIn
    models: list[_StoryModel]
    terrain: list[_StoryTerrain] = []
    actions: list[
        Annotated[_MoveIn | _CoverIn | _BumpIn | _FlickerIn, Field(discriminator="kind")]
    ] = []


def _action(spec: _MoveIn | _CoverIn | _BumpIn | _FlickerIn) -> Action:
    if isinstance(spec, _MoveIn):
        return Move(spec.model, tuple(spec.to), spec.at, spec.seconds, tuple(spec.via), spec.arm)
    if isinstance(spec, _CoverIn):
        return Cover(spec.at, spec.seconds, spec.point, tuple(spec.models), spec.arm)
    if isinstance(spec, _FlickerIn):
        return Flicker(spec.model, spec.at, spec.frames)
    return Bump(spec.at, spec.position, spec.look_at)


def load_storyboard(path: Path) -> Storyboard:
    """A storyboard TOML file, validated completely; a problem is one ``InputError`` line."""
    path = Path(path)
    spec = load_toml(path, _StoryboardFile)
    cam = spec.camera
    try:
        camera = PinholeCamera.looking_at(
            cam.position, cam.look_at, cam.size[0], cam.size[1], cam.hfov_deg, cam.dist
        )
    except ValueError as exc:
        raise InputError(f"{path}: camera.look_at: {exc}") from None
    try:
        return Storyboard(
            table=TableSpec(table=spec.table, anchors=spec.anchors),
            roster=[
                RosterModel.model_validate(m.model_dump(exclude={"start", "figure"}))
                for m in spec.models
            ],
            start={**{m.id: m.start for m in spec.models}, **{t.id: t.at for t in spec.terrain}},
            camera=camera,
            duration_s=spec.duration_s,
            actions=[_action(a) for a in spec.actions],
            terrain=[
                TerrainPiece.model_validate(t.model_dump(exclude={"at"})) for t in spec.terrain
            ],
            fps=spec.fps,
            shot=Shot(**spec.shot.model_dump()),
            motion_hz=spec.motion_hz,
            texture_seed=spec.texture_seed,
            decorate=spec.decorate,
            figures={m.id: m.figure.figure() for m in spec.models if m.figure is not None},
            solid_terrain=spec.solid_terrain,
            webcam=Webcam(**spec.webcam.model_dump()),
        )
    except ValueError as exc:
        where, _, what = str(exc).partition(": ")
        where = "models" + where.removeprefix("roster") if where.startswith("roster") else where
        raise InputError(f"{path}: {where}: {what}") from None
