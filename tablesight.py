"""The ``tablesight`` command line: one entry point for every job the product does.

Each subcommand is a thin translation from arguments to calls on the packages
(``rules``, ``vision``, ``calibration``, ``webui``); heavy imports happen inside
the command so that ``tablesight --help`` stays instant.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

if TYPE_CHECKING:
    from rules.verdict import Verdict

__version__ = "0.1.0"

#: Exit status for bad input and for commands this version does not have.
EXIT_USAGE = 2


def fail(message: str) -> NoReturn:
    """Print one line to stderr and exit with status 2 (bad input, never a traceback)."""
    click.echo(f"tablesight: {message}", err=True)
    sys.exit(EXIT_USAGE)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tablesight")
def main() -> None:
    """TableSight: a webcam referee for miniature wargames.

    Markers on every base are tracked from a camera, mapped to table inches,
    and each move is judged against the game's rules with the numbers shown.
    """


# Subcommands that this version does not provide yet: (name, one-line help).
_NOT_YET = [
    ("demo", "Play a bundled match through the live referee and open the table view."),
    ("run", "Referee a live game from a camera or stream."),
    ("analyze", "Referee a recorded video or folder of frames as fast as possible."),
    ("replay", "Serve the replay viewer for a recorded match file."),
    ("export", "Export a match file's events and tracks as JSON or CSV."),
    ("detect", "Detect markers in images and report their table positions."),
    ("calibrate", "Calibrate the camera from ChArUco board views."),
    ("markers", "Write print-ready PDFs of ArUco markers or the ChArUco board."),
]


def _not_yet(name: str, help_text: str) -> click.Command:
    def callback(args: tuple[str, ...]) -> None:
        fail(f"'{name}' is not available in this version yet.")

    return click.Command(
        name,
        callback=callback,
        help=help_text + " (Not available in this version yet.)",
        short_help=help_text,
        params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )


for _name, _help in _NOT_YET:
    main.add_command(_not_yet(_name, _help))


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON on stdout.")
def check(scenario: Path, as_json: bool) -> None:
    """Judge the moves in a scenario file against a game's rules.

    SCENARIO is a JSON file (see samples/scenarios/). The exit status is 0 whatever the
    verdict, 2 when the file is malformed.
    """
    from rules.errors import InputError
    from rules.referee import referee_for
    from rules.scenario import Scenario

    try:
        loaded = Scenario.from_file(scenario)
    except InputError as exc:
        fail(str(exc))
    verdict = referee_for(loaded.scene, loaded.ruleset).judge()
    if as_json:
        click.echo(json.dumps(verdict.to_dict(), indent=2))
    else:
        click.echo(render_verdict(loaded.ruleset.title, verdict))


@main.command()
@click.option("--seed", default=7, show_default=True, help="Seed of the generated table.")
@click.option("--repeats", default=3, show_default=True, help="Times each move is judged.")
def bench(seed: int, repeats: int) -> None:
    """Measure how fast the referee judges moves on this machine.

    A 60 x 44 in table with 40 terrain pieces and 100 models: one clear move, one move
    that must detour, and all of them at once, against a baseline timed in the same run.
    """
    from rules.benchmark import report, run, run_grid

    click.echo("Judging moves in inches (rules core), this machine:")
    click.echo(report(run(seed=seed, repeats=repeats)))
    click.echo("\nJudging moves in squares (Battlestations), this machine:")
    click.echo(report(run_grid(seed=seed)))


def render_verdict(title: str, verdict: Verdict) -> str:
    """A verdict as a plain-text table for the terminal."""
    n_v, n_a = len(verdict.violations), len(verdict.advisories)
    state = "LEGAL" if verdict.legal else "ILLEGAL"
    lines = [
        f"{title}: {len(verdict.moves)} move(s) judged: {state} "
        f"({n_v} violation(s), {n_a} advisory(ies))",
        "",
    ]
    lines.append(
        f"{'model':<14}{'action':<16}{'allowance':>10}{'straight':>10}{'shortest':>10}  bracket"
    )
    for model_id, move in verdict.moves.items():
        path = "blocked" if move.shortest_path is None else f"{move.shortest_path:.2f}"
        bracket = (
            ""
            if move.shortest_path_bounds is None
            else f"[{move.shortest_path_bounds[0]:.3f}, {move.shortest_path_bounds[1]:.3f}]"
        )
        lines.append(
            f"{model_id:<14}{move.action:<16}{move.allowance:>10.2f}"
            f"{move.straight:>10.2f}{path:>10}  {bracket}"
        )
    for heading, findings in (
        ("Violations", verdict.violations),
        ("Advisories", verdict.advisories),
    ):
        if findings:
            lines += ["", f"{heading}:"]
            lines += [f"  {f.rule:<14}{f.model:<14}{f.message}" for f in findings]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
