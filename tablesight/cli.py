"""The ``tablesight`` command line: one entry point for every job the product does.

Each subcommand is a thin translation from arguments to calls on the packages
(``rules``, ``vision``, ``calibration``, ``webui``); heavy imports happen inside
the command so that ``tablesight --help`` stays instant.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tablesight.options import (
    FilePath,
    Host,
    OutputPath,
    Source,
    broker_link,
    broker_options,
    broker_target,
    cannot_listen,
    check_port,
    fail,
    login_of,
    publish_table,
    serve,
    table_options,
)
from tablesight.process import few_arenas

# OpenCV's own "[ WARN ...]" lines (a camera not found, a stream retried) never reach the
# terminal: every problem is told once, in our words. Read when cv2 is first imported.
os.environ.setdefault("OPENCV_LOG_LEVEL", "ERROR")
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")

if TYPE_CHECKING:
    from tablesight.calibration.printing import SheetEntry
    from tablesight.calibration.setup import Setup
    from tablesight.match.game import Game
    from tablesight.match.writer import MatchWriter
    from tablesight.rules.session import Event

__version__ = "0.1.0"

#: What ``--ruleset`` takes.
RULESET_HELP = "A game's TOML file outside the package (see README, Adding a game)."


class _Commands(click.Group):
    """The commands; ``bench`` is loaded from the test rig only when it is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), "bench"])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return bench_commands() if cmd_name == "bench" else super().get_command(ctx, cmd_name)


def bench_commands() -> click.Command:
    from tablesight.rig.benchcli import bench

    return bench


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tablesight")
def main() -> None:
    """TableSight: a webcam referee for miniature wargames.

    Markers on every base are tracked from a camera, mapped to table inches,
    and each move is judged against the game's rules with the numbers shown.
    Setting up a table? `tablesight doctor` lists what is wrong with it as the camera
    sees it, and what to do.
    """
    few_arenas()  # before any thread starts: a served game's memory stays flat


@main.command()
@click.argument("scenario", type=FilePath(dir_okay=False, path_type=Path))
@click.option("--ruleset", "ruleset_path", type=FilePath(path_type=Path), help=RULESET_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON on stdout.")
def check(scenario: Path, ruleset_path: Path | None, as_json: bool) -> None:
    """Judge the moves in a scenario file against a game's rules.

    SCENARIO is a JSON file (see samples/scenarios/), judged under its game or, with
    --ruleset, under the game of that file. The exit status is 0 whatever the verdict, 2
    when a file is malformed.
    """
    from tablesight.rules.errors import InputError
    from tablesight.rules.referee import referee_for
    from tablesight.rules.ruleset import load_ruleset_file
    from tablesight.rules.scenario import Scenario

    try:
        ruleset = load_ruleset_file(ruleset_path) if ruleset_path else None
        loaded = Scenario.from_file(scenario, ruleset)
    except InputError as exc:
        fail(str(exc))
    verdict = referee_for(loaded.scene, loaded.ruleset).judge()
    if as_json:
        click.echo(json.dumps(verdict.to_dict(), indent=2))
    else:
        click.echo(verdict.to_text(loaded.ruleset.title))


@main.command("reach")
@click.argument("scenario", type=FilePath(dir_okay=False, path_type=Path))
@click.option("--model", "model_id", required=True, help="The id of the model, as in SCENARIO.")
@click.option("--action", help="move, charge, dash, ... as the game has them [default: declared].")
@click.option("--ruleset", "ruleset_path", type=FilePath(path_type=Path), help=RULESET_HELP)
@click.option("--geojson", "geojson_path", type=OutputPath(dir_okay=False, path_type=Path),
              help="Write the region as a GeoJSON Feature, in table inches.")  # fmt: skip
@click.option("--svg", "svg_path", type=OutputPath(dir_okay=False, path_type=Path),
              help="Write the table with the region shaded, as SVG.")  # fmt: skip
def reach_command(
    scenario: Path,
    model_id: str,
    action: str | None,
    ruleset_path: Path | None,
    geojson_path: Path | None,
    svg_path: Path | None,
) -> None:
    """Where a model may legally end a move: the region of the table, and what limits it.

    Every point its base's centre can end at by the shortest legal route within the
    action's allowance (round and over terrain and models, through difficult ground and
    up levels at their cost, out of the zones it must keep out of), its base on the table
    and clear of other bases and terrain. Models stand where SCENARIO starts them.
    """
    from tablesight.rules.errors import InputError
    from tablesight.rules.reach import reach, reach_svg
    from tablesight.rules.ruleset import load_ruleset_file
    from tablesight.rules.scenario import Scenario

    try:
        ruleset = load_ruleset_file(ruleset_path) if ruleset_path else None
        loaded = Scenario.from_file(scenario, ruleset)
        found = reach(loaded.scene, loaded.ruleset, model_id, action)
    except InputError as exc:
        fail(str(exc))
    click.echo(found.explain())
    for path, text in (
        (geojson_path, lambda: json.dumps(found.to_geojson(), indent=1)),
        (svg_path, lambda: reach_svg(found, loaded.scene)),
    ):
        if path is not None:
            try:
                path.write_text(text() + "\n", encoding="utf-8")
            except OSError as exc:
                fail(f"{path}: cannot write: {exc.strerror}")
            click.echo(f"wrote {path}")


@main.command()
@click.argument("image", type=FilePath(dir_okay=False, path_type=Path))
@click.option("--table", "table_path", type=FilePath(path_type=Path), help="table.toml")
@click.option("--camera", "camera_path", type=FilePath(path_type=Path), help="camera.toml")
@click.option("--roster", "roster_path", type=FilePath(path_type=Path), help="roster.toml")
@click.option("--terrain", "terrain_path", type=FilePath(path_type=Path), help="terrain.toml")
@click.option("--dictionary", help="Without --table: the ArUco dictionary, e.g. 6x6_250.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
def detect(
    image: Path,
    table_path: Path | None,
    camera_path: Path | None,
    roster_path: Path | None,
    terrain_path: Path | None,
    dictionary: str | None,
    as_json: bool,
) -> None:
    """Detect markers in IMAGE and report where they are on the table.

    With --table, positions are in table inches (heights corrected when --camera is
    given); without it, --dictionary lists the markers seen, in pixels, to check that
    printed markers read well.
    """
    import cv2

    from tablesight.calibration.setup import load_table_files
    from tablesight.rules.errors import InputError, check_regular
    from tablesight.vision.locate import locate
    from tablesight.vision.observe import PoseHealth
    from tablesight.vision.sight import sight

    try:  # OpenCV opens what it is given: never a device or a pipe (it would wait)
        check_regular(image, "an image")
    except InputError as exc:
        fail(str(exc))
    frame = cv2.imread(str(image))
    if frame is None:
        fail(f"{image}: not an image OpenCV can read")
    try:
        if table_path is None:
            if dictionary is None:
                fail("detect: give --table table.toml, or --dictionary to list markers in pixels")
            found = sight(frame, None, dictionary=dictionary).detections
            result: dict[str, object] = {
                "markers": [
                    {
                        "id": int(i),
                        "corners_px": c.round(2).tolist(),
                        "center_px": c.mean(axis=0).round(2).tolist(),
                        "side_px": round(float(side), 2),
                    }
                    for i, c, side in zip(found.ids, found.corners_px, found.side_px, strict=True)
                ]
            }
        else:
            table, roster, terrain, camera = load_table_files(
                table_path, roster_path, terrain_path, camera_path
            )
            seen = sight(frame, table, camera)
            if seen.pose is None:
                fail(f"{image}: {seen.why}")
            if not seen.pose.healthy:
                fail(f"{image}: the table pose is not trusted: {seen.pose.problem}")
            result = locate(seen.detections, table, seen.pose, roster, terrain).to_dict()
            result["health"] = PoseHealth.of(seen.pose).to_dict()
    except InputError as exc:
        fail(str(exc))
    except ValueError as exc:
        fail(f"{image}: {exc}")
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    from tablesight.detecttext import detect_text

    click.echo(detect_text(result))


@main.command(short_help="Check a set-up: what is wrong with the table as the camera sees it.")
@click.argument("source", type=Source())
@click.option("--table", "table_path", required=True, type=FilePath(path_type=Path))
@click.option("--camera", "camera_path", required=True, type=FilePath(path_type=Path))
@click.option("--roster", "roster_path", required=True, type=FilePath(path_type=Path))
@click.option("--terrain", "terrain_path", type=FilePath(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON on stdout.")
def doctor(
    source: str,
    table_path: Path,
    camera_path: Path,
    roster_path: Path,
    terrain_path: Path | None,
    as_json: bool,
) -> None:
    """Look at the table as the camera sees it and list what is wrong, each with what to do.

    SOURCE is a photo, or a camera index, video or stream (its first second, up to 10
    frames, is looked at). Checks the anchors (missing, turned, moved), markers too small
    in pixels where they stand, models and terrain not seen, markers in no file, glare,
    blur and the table pose. Exit status 0 when all is well, 1 when something is wrong,
    2 for bad input.
    """
    from tablesight.calibration.setup import load_table_files
    from tablesight.rules.errors import InputError
    from tablesight.vision.doctor import diagnose, pictures
    from tablesight.vision.sources import SourceError

    try:
        table, roster, terrain, camera = load_table_files(
            table_path, roster_path, terrain_path, camera_path
        )
        report = diagnose(pictures(source), table, roster, terrain, camera)
    except (InputError, SourceError) as exc:
        fail(str(exc))
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(report.to_text())
    sys.exit(0 if report.ok else 1)


def _id_list(text: str) -> list[int]:
    """``"0-9,12,20-23"`` -> [0, ..., 9, 12, 20, 21, 22, 23]."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise click.BadParameter(f"expected ids like 0-9,12, got {text!r}")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def _sheet_entries(
    roster_path: Path | None, terrain_path: Path | None, table_path: Path | None, name: str | None
) -> tuple[str, list[SheetEntry], list[str]]:
    """``markers --roster``: the dictionary, the models' and pieces' markers as entries of a
    sheet, and where each is written (``roster.toml: models[0]``)."""
    from click.core import ParameterSource

    from tablesight.calibration.dictionaries import dictionary_id
    from tablesight.calibration.printing import SheetEntry
    from tablesight.calibration.roster import load_roster, load_terrain
    from tablesight.calibration.setup import load_table_files
    from tablesight.rules.scenario import base_of

    source = click.get_current_context().get_parameter_source
    given = [n for n in ("ids", "size_mm", "ring_mm") if source(n) is ParameterSource.COMMANDLINE]
    if given:
        options = " and ".join(f"--{n.replace('_', '-')}" for n in given)
        fail(f"{options}: the roster gives each marker's id and size; leave them out")
    if roster_path is None and terrain_path is None:
        fail("--table: give --roster roster.toml (or --terrain terrain.toml) to print")
    if table_path is not None:
        table, roster, terrain, _ = load_table_files(table_path, roster_path, terrain_path)
        if name is not None and dictionary_id(name) != dictionary_id(table.table.dictionary):
            fail(f"--dictionary {name}: {table_path} has dictionary {table.table.dictionary}")
        name = table.table.dictionary
    elif name is None:
        fail("--roster: give --table table.toml (for its dictionary) or --dictionary")
    else:
        dictionary_id(name)
        roster = load_roster(roster_path, dictionary=name) if roster_path else []
        taken = {m.marker for m in roster}
        terrain = load_terrain(terrain_path, taken, name) if terrain_path else []
    units = [f", unit {m.unit}" if m.unit else "" for m in roster]
    entries = [
        SheetEntry(
            m.marker, m.marker_size_mm, m.id, m.side + u, base_of(m.base), m.marker_offset_mm
        )
        for m, u in zip(roster, units, strict=True)
    ] + [SheetEntry(t.marker, t.marker_size_mm, t.id, "terrain") for t in terrain]
    where = [f"{roster_path}: models[{i}]" for i in range(len(roster))]
    where += [f"{terrain_path}: terrain[{i}]" for i in range(len(terrain))]
    if not entries:
        fail(f"{roster_path or terrain_path}: no models or terrain pieces to print")
    return name, entries, where


@main.command()
@click.option(
    "-o",
    "--output",
    required=True,
    type=OutputPath(dir_okay=False, path_type=Path),
    help="The PDF to write.",
)
@click.option("--ids", default="0-19", show_default=True, help="Marker ids, e.g. 0-9,12.")
@click.option("--size-mm", default=20.0, show_default=True, help="Side of the black square.")
@click.option("--dictionary", help="ArUco dictionary [default: 4x4_50; 6x6_250 for --charuco]")
@click.option("--paper", type=click.Choice(["a4", "letter"]), default="a4", show_default=True)
@click.option("--ring-mm", type=float, help="Draw a cut-out circle of this base diameter.")
@click.option("--charuco", is_flag=True, help="Write the ChArUco calibration board instead.")
@click.option("--squares", default="5x7", show_default=True, help="ChArUco squares, X x Y.")
@click.option("--square-mm", default=30.0, show_default=True, help="ChArUco square side.")
@click.option("--marker-mm", default=22.0, show_default=True, help="ChArUco marker side.")
@click.option("--roster", "roster_path", type=FilePath(path_type=Path), help="roster.toml")
@click.option("--terrain", "terrain_path", type=FilePath(path_type=Path), help="terrain.toml")
@click.option("--table", "table_path", type=FilePath(path_type=Path), help="table.toml")
def markers(
    output: Path,
    ids: str,
    size_mm: float,
    dictionary: str | None,
    paper: str,
    ring_mm: float | None,
    charuco: bool,
    squares: str,
    square_mm: float,
    marker_mm: float,
    roster_path: Path | None,
    terrain_path: Path | None,
    table_path: Path | None,
) -> None:
    """Write a print-ready PDF of ArUco markers (or the ChArUco board) at exact size.

    With --roster (and --table or --dictionary) it prints every model's marker at its
    marker_size_mm in a dashed outline of its base to cut along (placed by
    marker_offset_mm), its id, side and unit under it; --terrain adds each piece's marker,
    cut square. A marker too big for its base, with its one-cell white border, is refused.
    Print at 100% (actual size) and check the 10 mm ruler on the page.
    """
    from tablesight.calibration.printing import (
        SheetEntryError,
        charuco_sheet,
        marker_sheet,
        roster_sheet,
    )

    where: list[str] = []
    try:
        if roster_path or terrain_path or table_path:
            if charuco:
                fail("--charuco prints the calibration board: leave out --roster and --terrain")
            name, entries, where = _sheet_entries(roster_path, terrain_path, table_path, dictionary)
            pages = roster_sheet(output, entries, name, paper)  # type: ignore[arg-type]
            click.echo(f"wrote {output}: {pages} page(s), {len(entries)} markers; print at 100%")
            return
        if charuco:
            sx, _, sy = squares.lower().partition("x")
            if not (sx.isdigit() and sy.isdigit()):
                fail(f"--squares: expected like 5x7, got {squares!r}")
            charuco_sheet(
                output,
                int(sx),
                int(sy),
                square_mm,
                marker_mm,
                dictionary or "6x6_250",
                paper,  # type: ignore[arg-type]
            )
            click.echo(f"wrote {output}: ChArUco board {squares}, squares {square_mm} mm")
            return
        pages = marker_sheet(
            output,
            _id_list(ids),
            size_mm,
            dictionary or "4x4_50",
            paper,  # type: ignore[arg-type]
            ring_mm,
        )
    except SheetEntryError as exc:
        field = {"size_mm": "marker_size_mm", "offset_mm": "marker_offset_mm"}.get(exc.field)
        fail(f"{exc.where(where, field)}: {exc.reason}")
    except ValueError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{output}: cannot write: {exc.strerror}")
    click.echo(f"wrote {output}: {pages} page(s) of {size_mm} mm markers; print at 100%")


@main.group()
def calibrate() -> None:
    """Calibrate the camera (once per camera and zoom)."""


@calibrate.command("camera")
@click.argument("views", nargs=-1, required=True, type=FilePath(path_type=Path))
@click.option(
    "--board",
    "board_path",
    required=True,
    type=FilePath(path_type=Path),
    help="BOARD.toml: squares_x, squares_y, square_mm, marker_mm, dictionary",
)
@click.option(
    "-o",
    "--output",
    required=True,
    type=OutputPath(dir_okay=False, path_type=Path),
    help="Where to write camera.toml",
)
def calibrate_camera(views: tuple[Path, ...], board_path: Path, output: Path) -> None:
    """Calibrate from ChArUco board VIEWS (images or videos) and write camera.toml."""
    from tablesight.calibration.camera import BoardSpec, CalibrationError, calibrate, read_views
    from tablesight.rules.errors import InputError

    try:
        board = BoardSpec.from_toml(board_path)
        result = calibrate(read_views(views), board)
    except InputError as exc:
        fail(str(exc))
    except CalibrationError as exc:
        fail(f"calibrate: {exc}")
    for name in result.used:
        click.echo(f"used      {name}")
    for name, why in result.rejected.items():
        click.echo(f"rejected  {name}: {why}")
    cam = result.camera
    click.echo(
        f"RMS reprojection error {cam.rms_px:.3f} px from {len(result.used)} views; "
        f"fx {cam.fx:.1f}, fy {cam.fy:.1f}, principal point "
        f"({cam.principal_point[0]:.1f}, {cam.principal_point[1]:.1f}); "
        f"the board covered {result.coverage:.0%} of the frame"
    )
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    try:
        output.write_text(cam.to_toml(), encoding="utf-8")
    except OSError as exc:
        fail(f"{output}: cannot write: {exc.strerror}")
    click.echo(f"wrote {output}")


@main.command()
@click.option(
    "--source",
    required=True,
    type=Source(),
    help="Webcam index (0), video file, image folder or glob, or rtsp:// / http:// stream.",
)
@click.option("--game", help="The game's ruleset, e.g. necromunda.")
@click.option("--ruleset", "ruleset_path", type=FilePath(path_type=Path), help=RULESET_HELP)
@click.option("--table", "table_path", required=True, type=FilePath(path_type=Path))
@click.option("--roster", "roster_path", required=True, type=FilePath(path_type=Path))
@click.option("--terrain", "terrain_path", type=FilePath(path_type=Path))
@click.option("--camera", "camera_path", type=FilePath(path_type=Path))
@click.option("--record", "record_path", type=OutputPath(path_type=Path), help="match.db")
@click.option(
    "--host", default="127.0.0.1", show_default=True, type=Host(), help="0.0.0.0: the LAN too."
)
@click.option("--port", default=5000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--setup-url", help="The set-up page that started it: the table view links there.")
@table_options
def run(
    source: str,
    game: str | None,
    ruleset_path: Path | None,
    table_path: Path,
    roster_path: Path,
    terrain_path: Path | None,
    camera_path: Path | None,
    record_path: Path | None,
    host: str,
    port: int,
    setup_url: str | None,
    table_name: str | None,
    broker: str | None,
    **options: Any,
) -> None:
    """Referee a live game from a camera or stream; events are printed as they happen.

    A file source is played at its own speed, as a camera would deliver it. The first
    movement phase starts when the table is first seen; in a terminal, keys control the
    game from there (press ? for the list).
    """
    from tablesight.match.game import Game
    from tablesight.rules.errors import InputError
    from tablesight.vision.sources import LiveSource, SourceError, open_source
    from tablesight.webui.serve import referee_until_stopped

    target = broker_target(table_name, broker, options)
    try:
        setup = _setup(game, ruleset_path, table_path, roster_path, terrain_path, camera_path)
        check_port(host, port)  # before the camera is opened or the match file written
        opened = open_source(source)
    except (InputError, SourceError) as exc:
        fail(str(exc))
    # A camera's thread is stopped before the program leaves however it leaves while
    # starting (bad input, the port taken, Ctrl-C): one still reading aborts the exit.
    try:
        try:
            if isinstance(opened, LiveSource):
                opened.wait_opened()
            recorder = _recorder(record_path, setup, source, video=True)
        except (InputError, SourceError) as exc:
            fail(str(exc))
        referee = Game(setup, opened, paced=True, recorder=recorder)
        referee.listen(lambda e: click.echo(_event_line(e)))
        click.echo(_source_line(setup.ruleset.title, source, getattr(opened, "granted", None)))
        server = serve(referee, host, port, setup_url)
        publisher = publish_table(referee, server, target)
        _key_controls(referee)
    except (KeyboardInterrupt, SystemExit) as exc:
        if isinstance(opened, LiveSource):
            opened.close()
        if isinstance(exc, SystemExit):
            raise
        click.echo("stopped", err=True)
        return
    referee_until_stopped(referee, server, publisher)
    if record_path is not None and referee.record_failure is None:
        click.echo(f"recorded {record_path}", err=True)


#: A camera's codec (its FOURCC, as OpenCV says it) in words.
CODECS = {
    "MJPG": "Motion JPEG",
    "JPEG": "Motion JPEG",
    "H264": "H.264",
    "AVC1": "H.264",
    "X264": "H.264",
    "HEVC": "H.265",
    "H265": "H.265",
    "HEV1": "H.265",
    "YUYV": "uncompressed (YUYV)",
    "YUY2": "uncompressed (YUYV)",
}


def _source_line(title: str, source: str, granted: tuple[int, int, str] | None) -> str:
    """What ``run`` says it referees: the game, the source, and what a camera or stream
    gives (its picture size and codec), as far as it tells."""
    line = f"refereeing {title} from {source}"
    if granted is None:
        return line
    width, height, fourcc = granted
    said = [f"{width}x{height} pictures"] if width > 0 and height > 0 else []
    if fourcc:
        said.append(CODECS.get(fourcc.upper(), fourcc))
    return line + (f": {', '.join(said)}" if said else "")


#: Said instead of the keys where the terminal cannot be read key by key.
NO_KEYS = (
    "keys: none in this terminal (this Python has no termios, as on Windows); "
    "the table view's buttons and keys control the game, Ctrl-C stops"
)


def _key_controls(referee: Game) -> None:
    """In a terminal, single key presses control the game (``?`` lists them), on a thread
    of their own; where Python cannot read keys one by one (no ``termios``: Windows), one
    line says so and the game goes on without them."""
    if not sys.stdin.isatty():
        return
    import importlib

    try:
        for name in ("termios", "tty"):  # what the keys are read with
            importlib.import_module(name)
    except ImportError:
        click.echo(NO_KEYS)
        return
    from tablesight.webui.keys import keys_help, terminal_keys

    click.echo(keys_help())
    threading.Thread(target=terminal_keys, args=(referee, click.echo), daemon=True).start()


@main.command()
@click.option(
    "--source", type=Source(), help="Webcam index (0), video file, image folder or stream."
)
@click.option(
    "--folder",
    default=".",
    show_default=True,
    type=FilePath(),
    help="The files are written only here or in folders under it.",
)
@click.option(
    "--host", default="127.0.0.1", show_default=True, type=Host(), help="0.0.0.0: the LAN too."
)
@click.option("--port", default=5000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--ruleset", "ruleset_path", type=FilePath(path_type=Path), help=RULESET_HELP)
def setup(source: str | None, folder: str, host: str, port: int, ruleset_path: Path | None) -> None:
    """Set up a table from a web page, no TOML to write: calibrate the camera, click the
    table's corners, say what each marker is, print the markers, write the files and
    start the game on them (served on the next port). Ctrl-C stops both. With --ruleset,
    the game of that file is offered beside the packaged ones.
    """
    from tablesight.rules.errors import InputError
    from tablesight.setup.session import TableSetup
    from tablesight.setup.steps import GameFile, SetupError
    from tablesight.webui.serve import serve_until_interrupted
    from tablesight.webui.setup import setup_server

    try:
        game_file = GameFile.load(ruleset_path) if ruleset_path is not None else None
    except InputError as exc:
        fail(str(exc))
    command = [sys.executable, "-m", "tablesight"]
    run_port = port + 1 if 0 < port < 65535 else 0
    table = TableSetup(
        folder=Path(folder), command=command, host=host, run_port=run_port, game_file=game_file
    )
    try:
        if source is not None:
            table.use_source(source)
        server = setup_server(table, host, port).start()
    except SetupError as exc:
        table.close()
        fail(f"--source: {exc.message}")
    except OSError as exc:
        table.close()
        cannot_listen(host, port, exc)
    head, _, query = server.url.partition("?")
    table.page_url = head + "setup" + (f"?{query}" if query else "")
    click.echo(f"set-up page: {server.url}", err=True)
    try:
        serve_until_interrupted(server)
    finally:
        table.close()
        server.close()


@main.command()
@broker_options
@click.option(
    "--host", default="127.0.0.1", show_default=True, type=Host(), help="0.0.0.0: the LAN too."
)
@click.option("--port", default=5080, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--name", default="hub", show_default=True, help="This hub's name at the broker (its session)."
)
def hub(broker: str | None, host: str, port: int, name: str, **options: Any) -> None:
    """Every table of a tournament on one page, from the MQTT broker the tables publish to:
    which run, their turn and phase and every open flag, the tables that need a judge
    first; a judge's decision goes back to its table. Ctrl-C stops it."""
    from tablesight.rules.errors import InputError
    from tablesight.tournament.hub import Hub
    from tablesight.tournament.link import check_name
    from tablesight.webui.hub import hub_server
    from tablesight.webui.serve import serve_until_interrupted

    if broker is None:
        fail("--broker: the hub reads the tables from a broker: give mqtt://HOST:PORT")
    link = broker_link(broker, *login_of(options))
    try:
        tables = Hub(link, check_name(name, "--name")).start()
    except InputError as exc:
        fail(str(exc))
    try:
        server = hub_server(tables, host, port).start()
    except OSError as exc:
        tables.close()
        cannot_listen(host, port, exc)
    click.echo(f"hub: reading tables from {link.url}; the page: {server.url}", err=True)
    lan = link.local_address() if host in ("0.0.0.0", "::") else None
    if lan is not None:
        shown = f"[{lan}]" if ":" in lan else lan
        query = f"?token={server.token}" if server.token else ""
        click.echo(f"  on the venue's network: http://{shown}:{server.port}/{query}", err=True)
    try:
        serve_until_interrupted(server)
    finally:
        server.close()
        tables.close()


#: Where the bundled samples live in a checkout: one folder per game.
SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _samples() -> Path:
    """The sample matches' folder: the checkout's ``samples/``, or where an installed
    TableSight keeps them (the package ``tablesight_samples``)."""
    if (SAMPLES.parent / "pyproject.toml").is_file() and SAMPLES.is_dir():
        return SAMPLES
    import importlib.util

    spec = importlib.util.find_spec("tablesight_samples")
    if spec is None or not spec.submodule_search_locations:
        fail("demo: the sample matches are not installed; reinstall TableSight")
    return Path(next(iter(spec.submodule_search_locations)))


#: The demo's default: the sample with the most to show.
DEMO_GAME = "necromunda"


@main.command()
@click.option("--game", default=DEMO_GAME, show_default=True, help="Which sample match to play.")
@click.option("--port", default=5000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--no-browser", is_flag=True, help="Do not open a browser.")
@click.option("--once", is_flag=True, help="Play the clip once and stop (default: loop).")
@click.option(
    "--speed",
    default=1.0,
    hidden=True,
    type=click.FloatRange(0.1, 100.0),
    help="Play the clip this many times faster than real time (for tests).",
)
@table_options
def demo(
    game: str,
    port: int,
    no_browser: bool,
    once: bool,
    speed: float = 1.0,
    table_name: str | None = None,
    broker: str | None = None,
    **options: Any,
) -> None:
    """Play a bundled match through the live referee and serve the table view.

    The sample clip is processed exactly as a camera would be, at its real speed, and
    loops; nothing but the install is needed (no camera, no network).
    """
    import webbrowser

    from tablesight.calibration.script import Script
    from tablesight.calibration.setup import Setup
    from tablesight.match.game import Game
    from tablesight.rules.errors import InputError
    from tablesight.vision.sources import FileSource, SourceError
    from tablesight.webui.serve import referee_until_stopped

    target = broker_target(table_name, broker, options)
    samples = _samples()
    folder = samples / game
    games = sorted(p.name for p in samples.iterdir() if (p / "match.mp4").is_file())
    if not (folder / "match.mp4").is_file():
        fail(f"--game: no sample match for {game!r}; there are: {', '.join(games)}")
    try:
        setup = Setup.load(
            game,
            folder / "table.toml",
            folder / "roster.toml",
            folder / "terrain.toml" if (folder / "terrain.toml").is_file() else None,
            folder / "camera.toml",
        )
        script = Script.from_toml(folder / "session.toml", setup)
        source = FileSource(str(folder / "match.mp4"))
    except (InputError, SourceError) as exc:
        fail(str(exc))
    referee = Game(setup, source, paced=True, loop=not once, speed=speed, script=script)
    referee.listen(lambda e: click.echo(_event_line(e)))
    server = serve(referee, "127.0.0.1", port, make_target="demo")
    click.echo(
        f"TableSight demo: {setup.ruleset.title}, the sample match in {folder} played as a "
        "live camera would be.\n"
        f'  Open {server.url} and watch: the bases outlined on the picture, the 1" zones,\n'
        "  and each flag written on its model with its numbers as moves settle. Click a\n"
        "  model for its distances; Measure for edge-to-edge distances; ? lists the keys.\n"
        f"  OBS pages: {server.url}broadcast and {server.url}overlay. Ctrl-C stops.",
        err=True,
    )
    publisher = publish_table(referee, server, target)
    if not no_browser:
        webbrowser.open(server.url)
    referee_until_stopped(referee, server, publisher)


def _recorder(path: Path | None, setup: Setup, source: str, video: bool) -> MatchWriter | None:
    """The match file to write, checked before anything starts (a clear error, not a
    lost match)."""
    if path is None:
        return None
    from tablesight.match.writer import MatchWriter

    return MatchWriter(path, setup, video=video, source=source, app_version=__version__)


@main.command()
@click.argument("video", type=FilePath(path_type=Path))
@click.option("--game", help="The game's ruleset, e.g. necromunda.")
@click.option("--ruleset", "ruleset_path", type=FilePath(path_type=Path), help=RULESET_HELP)
@click.option("--table", "table_path", required=True, type=FilePath(path_type=Path))
@click.option("--roster", "roster_path", required=True, type=FilePath(path_type=Path))
@click.option("--terrain", "terrain_path", type=FilePath(path_type=Path))
@click.option("--camera", "camera_path", type=FilePath(path_type=Path))
@click.option(
    "--script",
    "script_path",
    type=FilePath(path_type=Path),
    help="session.toml: phase changes and declarations with times.",
)
@click.option("-o", "--output", "output", type=OutputPath(path_type=Path), help="match.db")
@click.option("--json", "as_json", is_flag=True, help='Print {"events": [...]} on stdout.')
def analyze(
    video: Path,
    game: str | None,
    ruleset_path: Path | None,
    table_path: Path,
    roster_path: Path,
    terrain_path: Path | None,
    camera_path: Path | None,
    script_path: Path | None,
    output: Path | None,
    as_json: bool,
) -> None:
    """Referee a recorded VIDEO (or folder of frames), every frame, as fast as it can.

    Without --script the whole video is one movement phase, from the first frame in which
    the anchors are seen.
    """
    from tqdm import tqdm

    from tablesight.calibration.script import Script
    from tablesight.match.game import Game
    from tablesight.rules.errors import InputError
    from tablesight.vision.sources import FileSource, SourceError

    try:
        setup = _setup(game, ruleset_path, table_path, roster_path, terrain_path, camera_path)
        script = Script.from_toml(script_path, setup) if script_path else None
        source = FileSource(str(video))
        recorder = _recorder(output, setup, str(video), video=False)
    except (InputError, SourceError) as exc:
        fail(str(exc))
    referee = Game(setup, source, script=script, recorder=recorder)
    events: list[Event] = []
    referee.listen(events.append)
    bar = tqdm(desc="analyze", unit="frame", file=sys.stderr, disable=None)
    try:
        referee.run(progress=lambda _: bar.update())
    except InputError as exc:
        fail(f"{script_path}: {exc}")
    except SourceError as exc:
        fail(str(exc))
    finally:
        bar.close()
        referee.close_recorder()
    if as_json:
        click.echo(json.dumps({"events": [e.to_dict() for e in events]}, indent=2))
    else:
        for e in events:
            click.echo(_event_line(e))
    if referee.record_failure is not None:
        sys.exit(1)  # the events are all there; the match file asked for is not whole


def _event_line(e: Event) -> str:
    return f"{e.t:8.2f}s #{e.frame:<6} {e.kind:<14} {e.message}"


def _setup(
    game: str | None,
    ruleset_path: Path | None,
    table_path: Path,
    roster_path: Path,
    terrain_path: Path | None,
    camera_path: Path | None,
) -> Setup:
    from tablesight.calibration.setup import Setup, chosen_ruleset

    ruleset = chosen_ruleset(game, ruleset_path)
    return Setup.load(ruleset.name, table_path, roster_path, terrain_path, camera_path, ruleset)


@main.command()
@click.argument("match", type=FilePath(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["json", "csv"]), default="json", show_default=True
)
@click.option(
    "-o",
    "--output",
    type=OutputPath(path_type=Path),
    help="JSON: the file; CSV: the stem of <stem>-events.csv and <stem>-tracks.csv.",
)
@click.option("--force", is_flag=True, help="Replace output files that exist.")
def export(match: Path, fmt: str, output: Path | None, force: bool) -> None:
    """Export a MATCH file's events and per-model tracks as JSON or CSV.

    The formats are versioned and documented in docs/match-format.md. The match file is
    never written over; existing outputs are replaced only with --force.
    """
    from tablesight.match.export import export as export_match
    from tablesight.rules.errors import InputError

    try:
        written = export_match(match, fmt, output, force=force)  # type: ignore[arg-type]
    except InputError as exc:
        fail(str(exc))
    for path in written:
        click.echo(f"wrote {path}")


@main.command()
@click.argument("match", type=FilePath(path_type=Path))
@click.option("--port", default=5000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--no-browser", is_flag=True, help="Do not open a browser.")
def replay(match: Path, port: int, no_browser: bool) -> None:
    """Serve the replay viewer for a recorded MATCH file.

    MATCH is a match file written by run --record or analyze -o. Scrub to any moment:
    the picture with the referee's overlay, the map, the flags and the numbers as they
    stood then; re-judge with a declaration changed (saved in the file as a new revision
    of the events). Served on 127.0.0.1; Ctrl-C stops.
    """
    import webbrowser

    from tablesight.match.replay import Replay
    from tablesight.rules.errors import InputError
    from tablesight.webui.serve import Server, serve_until_interrupted

    try:
        opened = Replay(match)
    except InputError as exc:
        fail(str(exc))
    try:
        server = Server(opened, "127.0.0.1", port, replay=True)
    except OSError as exc:
        opened.close()
        cannot_listen("127.0.0.1", port, exc)
    url = server.url + "replay"
    click.echo(f"replay: {url}", err=True)
    if not no_browser:
        webbrowser.open(url)
    server.start()
    try:
        serve_until_interrupted(server)
    finally:
        opened.stop()  # open streams end; then the server waits for its threads
        server.close()
        opened.close()


if __name__ == "__main__":
    main()
