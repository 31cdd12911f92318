"""The ``tablesight`` command line: one entry point for every job the product does.

Each subcommand is a thin translation from arguments to calls on the packages
(``rules``, ``vision``, ``calibration``, ``webui``); heavy imports happen inside
the command so that ``tablesight --help`` stays instant.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

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
    ("check", "Judge the moves in a scenario file against a game's rules."),
    ("calibrate", "Calibrate the camera from ChArUco board views."),
    ("markers", "Write print-ready PDFs of ArUco markers or the ChArUco board."),
    ("bench", "Measure detection and judging speed on this machine."),
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


if __name__ == "__main__":
    main()
