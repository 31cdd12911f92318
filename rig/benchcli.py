"""``tablesight bench``: how fast this machine referees, each figure beside a baseline
timed in the same run. Loaded by the command line only when ``bench`` is asked for, so the
runtime never imports the test rig."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click


def fail(message: str) -> NoReturn:
    """One line on stderr and exit status 2 (bad input), as the rest of the command line."""
    click.echo(f"tablesight: {message}", err=True)
    sys.exit(2)


def _about(what: str) -> None:
    """Say what a long command will do, and about how long it takes, before it starts."""
    click.echo(f"{what}...", err=True)


@click.group(invoke_without_command=True)
@click.pass_context
def bench(ctx: click.Context) -> None:
    """Measure how fast this machine referees; each figure beside a baseline timed in the
    same run (a machine's speed drifts, ratios hold).

    Without a subcommand: rules, detect and pipeline, about two minutes on two cores.
    """
    if ctx.invoked_subcommand is None:
        _about(
            "timing rules (about 20 s), detect (about 15 s) and pipeline (about 80 s), "
            "one after the other: about two minutes on two cores"
        )
        ctx.invoke(bench_rules)
        ctx.invoke(bench_detect)
        ctx.invoke(bench_pipeline)


@bench.command("rules")
@click.option("--seed", default=7, show_default=True, help="Seed of the generated table.")
@click.option("--repeats", default=3, show_default=True, help="Times each move is judged.")
def bench_rules(seed: int = 7, repeats: int = 3) -> None:
    """Judging moves: a 60 x 44 in table with 40 terrain pieces and 100 models (one clear
    move, one detour, all at once), and a Battlestations deck in squares (about 20 s)."""
    from tablesight.rig.rulesbench import report, run, run_grid

    _about("bench rules: judging moves on a generated table, about 20 s")
    click.echo("Judging moves in inches (rules core), this machine:")
    click.echo(report(run(seed=seed, repeats=repeats)))
    click.echo("\nJudging moves in squares (Battlestations), this machine:")
    click.echo(report(run_grid(seed=seed)))


@bench.command("reach")
@click.option("--seed", default=7, show_default=True, help="Seed of the generated table.")
@click.option("--repeats", default=3, show_default=True, help="Times each reach is worked out.")
def bench_reach(seed: int = 7, repeats: int = 3) -> None:
    """Working out where models may move: every model of the sample scenarios, each of 40
    models on a table with ten terrain pieces, and a side of ten (about 30 s)."""
    from tablesight.rig.reachbench import run
    from tablesight.rig.rulesbench import report

    _about("bench reach: working out reach on the samples and a generated table, about 30 s")
    click.echo("Reach of a model for its move (rules core, one core), this machine:")
    click.echo(report(run(seed=seed, repeats=repeats)))


@bench.command("detect")
def bench_detect() -> None:
    """Detecting and mapping one rendered 1080p and 4K frame against OpenCV's raw
    detectMarkers with its defaults (about 15 s)."""
    from tablesight.rig.accuracy import detect_and_map_timings
    from tablesight.rig.rulesbench import report

    _about("bench detect: rendering frames and timing detection on them, about 15 s")
    click.echo("\nDetect and map one frame (x base: OpenCV's raw detectMarkers, defaults):")
    click.echo(report(detect_and_map_timings()))


@bench.command("pipeline")
@click.option("--threads", type=int, help="cv2.setNumThreads for the run.")
@click.option(
    "--frames",
    multiple=True,
    metavar="HEIGHT=N",
    help="Frames per loop at an image height (default 1080=120, 2160=48).",
)
def bench_pipeline(threads: int | None = None, frames: tuple[str, ...] = ()) -> None:
    """The whole pipeline on MJPG video at 1080p and 4K against decode + detectMarkers,
    with latency and where the time goes (about 80 s)."""
    import cv2

    from tablesight.rig.throughput import report, run

    _about("bench pipeline: rendering MJPG clips and playing them through, about 80 s")
    if threads is not None:
        cv2.setNumThreads(threads)
    counts: dict[int, int] = {}
    for item in frames:
        height, _, count = item.partition("=")
        if not (height.isdigit() and count.isdigit()):
            fail(f"--frames: expected HEIGHT=N like 1080=120, got {item!r}")
        counts[int(height)] = int(count)
    click.echo("\nThe whole pipeline on MJPG video against decode + detectMarkers:")
    click.echo(report(run(frames=counts)))


@bench.command("watch")
def bench_watch() -> None:
    """CPU a frame of reading markers where the picture changed against decode +
    detectMarkers on the same frames: a still table, a match-like clip and everything
    changing, at 1080p and 4K (about 2 minutes)."""
    from tablesight.rig.watchbench import report, run

    _about("bench watch: rendering clips and reading them both ways, about 2 minutes")
    click.echo("\nCPU a frame: markers read where the picture changed, against the plain loop:")
    click.echo(report(run()))


@bench.command("seek")
@click.option("--minutes", default=60.0, show_default=True, help="Footage of the match.")
@click.option("--models", default=40, show_default=True, help="Models on the table.")
@click.option("--seeks", default=200, show_default=True, help="Random seeks timed.")
@click.option("--seed", default=1, show_default=True)
@click.option("--keep", type=click.Path(path_type=Path), help="Build the match here or reuse it.")
def bench_seek(minutes: float, models: int, seeks: int, seed: int, keep: Path | None) -> None:
    """Seeking in a synthetic match (poses only, 30 fps): building it through the match
    writer, Match.state_at and Replay.seek against reading one frame's poses by primary key
    (an hour's match: about a minute)."""
    from tablesight.rig.matchbench import bench_match, bench_replay

    _about(
        f"bench seek: building a {minutes:g}-minute match of {models} models and timing "
        f"{seeks} seeks in it, about {max(5, round(minutes * models / 40)):d} s on two cores"
    )
    if keep is None:
        click.echo(bench_match(minutes * 60.0, models, seeks, seed))
    click.echo(bench_replay(minutes * 60.0, models, seeks, seed, keep))


@bench.command("sizes")
def bench_sizes() -> None:
    """The marker side each table size needs at the sample camera (18 px across at the
    table's worst corner)."""
    from tablesight.rig.accuracy import marker_size_table

    click.echo(marker_size_table())


@bench.command("bases")
@click.option("--shots", default=3, show_default=True, help="Rendered shots per table.")
def bench_bases(shots: int) -> None:
    """For each common base, the marker it takes and the tables a 1080p and a 4K camera
    read it on, rendered: with miniatures standing (markers on their heads), then bare
    bases (markers on the base tops); about 3 minutes."""
    from tablesight.rig.accuracy import base_marker_table
    from tablesight.rig.occlusion import figure_table

    _about("bench bases: rendering 5 tables at 1080p and 4K, about 3 minutes")
    click.echo("With miniatures standing, each model's marker on its figure's head:\n")
    click.echo(figure_table())
    click.echo("\nBare bases, each model's marker on its base top:\n")
    click.echo(base_marker_table(shots))


@bench.command("soak")
@click.option("--minutes", default=60.0, show_default=True, help="How long the demo runs.")
@click.option("--every", default=60.0, show_default=True, help="Seconds between readings.")
@click.option("--viewers", default=2, show_default=True, help="Clients on each stream.")
@click.option("--warm-up", default=10.0, show_default=True, help="Minutes before the plateau.")
@click.option(
    "--speed",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0.1, max=8.0),
    help="Times faster the demo's clip plays: 4 puts four hours of games in one.",
)
def bench_soak(minutes: float, every: float, viewers: int, warm_up: float, speed: float) -> None:
    """The demo left running with viewers on its event and picture streams: its memory,
    threads and open files every minute, and how memory moves after the warm-up (one hour
    by default)."""
    from tablesight.rig.soak import run

    _about(f"bench soak: the demo at {speed:g}x for {minutes:g} minutes with {2 * viewers} viewers")
    click.echo(run(minutes, every, viewers, say=click.echo, speed=speed).report(warm_up))


@bench.command("accuracy")
@click.option("--settings", is_flag=True, help="Compare detector settings instead.")
def bench_accuracy(settings: bool) -> None:
    """Position error of base centres on rendered views against the truth (about 20 s)."""
    from tablesight.rig.accuracy import measure, settings_study

    _about("bench accuracy: rendering views and measuring positions, about 20 s")
    if settings:
        click.echo(settings_study())
        return
    for key, value in measure(frames=4, models=40).summary().items():
        click.echo(f"{key:>24}: {value:.4f}")


@bench.command("occlusion")
@click.option("--frames", default=2, show_default=True, help="Layouts of 36 models per camera.")
@click.option("--workers", default=2, show_default=True, help="Processes rendering at once.")
def bench_occlusion(frames: int, workers: int) -> None:
    """Models located under standing miniatures, per camera set-up and marker (about 3 min)."""
    from tablesight.rig.occlusion import CONFIRM, confirm, report, study

    _about("bench occlusion: rendering 32 camera set-ups with 36 models, about 3 minutes")
    click.echo(report(study(frames=max(frames, 1), workers=workers)))
    height, tilt, (_, rows), placement = CONFIRM
    click.echo(
        f"\nThe recommendation's worst corner ({height:g} in up, {tilt:g} deg, {rows}p, "
        f"markers on the {placement}s) on 8 more layouts (288 models):"
    )
    cell = confirm(workers=workers)
    click.echo(report([cell]))
    worst = max(cell.errors_in, default=float("nan"))
    click.echo(f"located {cell.located} of {cell.models}; the worst {worst:.3f} in off")


@bench.command("hub")
@click.option("--tables", default=50, show_default=True, help="Simulated tables.")
@click.option("--speed", default=10.0, show_default=True, help="Times faster than the matches.")
@click.option("--minutes", default=10.0, show_default=True, help="How long the load lasts.")
def bench_hub(tables: int, speed: float, minutes: float) -> None:
    """A hall's load on one broker and one hub: TABLES simulated tables replaying the
    sample matches' event streams SPEED times faster; the delay from publishing an event to
    the hub's page showing it, against a bare MQTT subscriber's, and the hub's memory
    (MINUTES, plus about 30 s to record the streams)."""
    from tablesight.rig.hubload import report, run

    _about(f"bench hub: {tables} tables into a broker and a hub for {minutes:g} minutes")
    click.echo(report(run(tables=tables, speed=speed, minutes=minutes, say=click.echo)))
