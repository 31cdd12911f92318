"""``tablesight reach``: the region a model may end a move in, printed and written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import shapely
from shapely.geometry import Point, shape

#: Each test here runs the command line in a new process.
pytestmark = pytest.mark.slow

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "scenarios"
WALL = str(SAMPLES / "necromunda-wall-detour.json")


def test_reach_prints_the_area_and_writes_geojson_and_svg(tmp_path: Path, tablesight) -> None:
    geojson, svg = tmp_path / "reach.geojson", tmp_path / "reach.svg"
    result = tablesight(
        "reach", WALL, "--model", "ganger", "--geojson", str(geojson), "--svg", str(svg)
    )
    assert result.returncode == 0, result.stderr
    line = result.stdout.splitlines()[0]
    assert line.startswith('ganger may end its move (5.00") on ')
    assert '5.00" allowance' in line and "wall (" in line
    feature = json.loads(geojson.read_text())
    region = shape(feature["geometry"])
    assert feature["properties"]["area_sq_in"] == pytest.approx(region.area, abs=0.01)
    assert f"{region.area:.1f} sq in" in line
    # the ganger at (8, 10), Movement 5 (and the 0.05 the referee takes): 5.05 to its left;
    # to its right the wall at x = 10, which its base (0.5) may overlap by 0.05 at most
    assert region.contains(Point(3.0, 10)) and not region.contains(Point(2.9, 10))
    assert region.contains(Point(9.5, 10)) and not region.intersects(shapely.box(9.56, 9, 10, 11))
    # nothing beyond the wall: round its end is 13 in
    assert not region.intersects(shapely.box(11, 5, 30, 15))
    text = svg.read_text()
    assert text.startswith("<svg") and text.rstrip().endswith("</svg>")
    assert 'fill="#2f7de1"' in text


def test_reach_on_squares(tablesight) -> None:
    # Battlestations' sample deck: vex moves as her action, 5 + 5 - 3 = 7 movement points
    result = tablesight("reach", str(SAMPLES / "battlestations-deck.json"), "--model", "vex")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("vex may end its move_as_action (7 movement points) in ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [WALL, "--model", "nobody"],
            "tablesight: model: no model 'nobody'; the models are ganger, enemy",
        ),
        (
            [WALL, "--model", "ganger", "--action", "fly"],
            "tablesight: action: Necromunda has no action 'fly' (it has: charge, move)",
        ),
        (
            [str(SAMPLES / "battlestations-deck.json"), "--model", "zip"],
            "tablesight: action: a jet flies in a straight line, not a walk: its reach is not "
            "worked out",
        ),
    ],
)
def test_bad_reach_is_one_line_and_exit_2(args: list[str], message: str, tablesight) -> None:
    result = tablesight("reach", *args)
    assert result.returncode == 2
    assert result.stderr.strip() == message
