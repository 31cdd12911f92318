"""Where a game's squares lie on the table, and which squares a straight line crosses.

A square grid is a placement: the table position of one square's corner, the grid's
rotation and the side of a square. A model stands in the square that contains its base
centre.

>>> grid = Grid(square_in=1.0, origin=(10.0, 5.0), angle_deg=90.0)
>>> grid.square_of(9.5, 5.5)
(0, 0)
>>> squares_crossed((0, 0), (2, 1))
[(1, 0), (1, 1), (2, 1)]
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

#: A square by its column and row on the grid.
Square = tuple[int, int]


@dataclass(frozen=True)
class Grid:
    """Where the squares lie: the table position of a square corner, rotation, side."""

    square_in: float = 1.0
    origin: tuple[float, float] = (0.0, 0.0)
    angle_deg: float = 0.0

    def to_grid(self, x: float, y: float) -> tuple[float, float]:
        """Table inches to grid units (squares along the grid's own axes)."""
        a = math.radians(self.angle_deg)
        dx, dy = x - self.origin[0], y - self.origin[1]
        u = (dx * math.cos(a) + dy * math.sin(a)) / self.square_in
        v = (-dx * math.sin(a) + dy * math.cos(a)) / self.square_in
        return u, v

    def to_table(self, u: float, v: float) -> tuple[float, float]:
        """Grid units to table inches."""
        a = math.radians(self.angle_deg)
        x = self.origin[0] + self.square_in * (u * math.cos(a) - v * math.sin(a))
        y = self.origin[1] + self.square_in * (u * math.sin(a) + v * math.cos(a))
        return x, y

    def squares_over(self, width_in: float, depth_in: float) -> int:
        """How many squares the grid's box over a table of this size holds (what a deck
        map of it allocates)."""
        corners = [self.to_grid(x, y) for x in (0, width_in) for y in (0, depth_in)]
        us, vs = [u for u, _ in corners], [v for _, v in corners]
        columns = math.ceil(max(us)) - math.floor(min(us))
        rows = math.ceil(max(vs)) - math.floor(min(vs))
        return int(columns * rows)

    def square_of(self, x: float, y: float) -> Square:
        u, v = self.to_grid(x, y)
        return math.floor(u), math.floor(v)

    def centre(self, square: Square) -> tuple[float, float]:
        return self.to_table(square[0] + 0.5, square[1] + 0.5)


def squares_crossed(start: Square, end: Square) -> list[Square]:
    """The squares a straight line from the centre of ``start`` to that of ``end`` passes
    through, in order, ``start`` excluded. Squares it only touches at a corner do not count.
    """
    dx, dy = end[0] - start[0], end[1] - start[1]
    cuts = {Fraction(0), Fraction(1)}
    for d in (dx, dy):
        for k in range(abs(d)):
            cuts.add(Fraction(2 * k + 1, 2 * abs(d)))  # where it crosses a square's side
    ts = sorted(cuts)
    out: list[Square] = []
    for a, b in itertools.pairwise(ts):
        mid = (a + b) / 2
        square = (start[0] + round(mid * dx), start[1] + round(mid * dy))
        if square != start and (not out or out[-1] != square):
            out.append(square)
    return out
