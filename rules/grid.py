"""Square-grid movement (Battlestations, rules text 002): moves counted in squares.

The grid lies on the table at any place and angle (``Grid``); a model stands in the
square that contains its base centre, and a terrain piece marks the squares whose
centres it covers (``DeckMap``). A move is judged by the cheapest orthogonal route
between its start and end squares (A* over squares: walls block, slagged squares cost
more, outside the hull costs more unless magboots are on), a jet by the squares its
straight line passes through. The verdicts are the same ``Finding``/``Verdict`` values
as for the games measured in inches. Where the squares lie is :mod:`tablesight.rules.squares`.

>>> from tablesight.rules.scene import Table
>>> deck = DeckMap(Scene(Table(4.0, 3.0), ()), Grid(square_in=1.0))
>>> deck.shape, deck.on((3, 2)), deck.on((4, 2))
((4, 3), True, False)
"""

from __future__ import annotations

import heapq
import math

import numpy as np
import shapely

from tablesight.rules.ruleset import GridRules, Ruleset
from tablesight.rules.scene import Model, Scene, Terrain
from tablesight.rules.squares import Grid, Square, squares_crossed
from tablesight.rules.verdict import Findings, MoveReport, Verdict

_STEPS: tuple[Square, ...] = ((1, 0), (-1, 0), (0, 1), (0, -1))
#: Door states through which anyone may come in from outside.
OPEN_DOOR = frozenset({"open", "broken", "hacked"})


class DeckMap:
    """What each square of the table's grid is: wall, slagged, barrel, door, outside."""

    def __init__(self, scene: Scene, grid: Grid) -> None:
        t = scene.table
        corners = [grid.to_grid(x, y) for x in (0, t.width_in) for y in (0, t.depth_in)]
        self.c0 = math.floor(min(u for u, _ in corners))
        self.r0 = math.floor(min(v for _, v in corners))
        c1 = math.ceil(max(u for u, _ in corners))
        r1 = math.ceil(max(v for _, v in corners))
        self.shape = (c1 - self.c0, r1 - self.r0)
        cols, rows = np.meshgrid(
            np.arange(self.c0, c1) + 0.5, np.arange(self.r0, r1) + 0.5, indexing="ij"
        )
        a = math.radians(grid.angle_deg)
        xs = grid.origin[0] + grid.square_in * (cols * math.cos(a) - rows * math.sin(a))
        ys = grid.origin[1] + grid.square_in * (cols * math.sin(a) + rows * math.cos(a))
        self.on_table = (xs >= 0) & (xs <= t.width_in) & (ys >= 0) & (ys <= t.depth_in)
        self.marks: dict[str, np.ndarray] = {}
        self.pieces: list[tuple[Terrain, np.ndarray]] = []
        for piece in scene.terrain:
            inside = shapely.contains_xy(piece.polygon, xs, ys)
            self.pieces.append((piece, inside))
            for keyword in piece.keywords:
                self.marks[keyword] = self.marks.get(keyword, np.zeros(self.shape, bool)) | inside

        # Per square, for the hot loop: None for walls and off the table, else
        # (slagged, outside, door) as plain Python values.
        wall = self.marks.get("wall", np.zeros(self.shape, bool)) | ~self.on_table
        slag = self.marks.get("slagged", np.zeros(self.shape, bool)) | self.marks.get(
            "barrel", np.zeros(self.shape, bool)
        )
        outside = self.marks.get("outside", np.zeros(self.shape, bool))
        door = self.marks.get("door", np.zeros(self.shape, bool))
        ii, jj = np.nonzero(~wall)
        self.cells: dict[Square, tuple[bool, bool, bool]] = {
            (i + self.c0, j + self.r0): flags
            for i, j, flags in zip(
                ii.tolist(),
                jj.tolist(),
                zip(
                    slag[ii, jj].tolist(),
                    outside[ii, jj].tolist(),
                    door[ii, jj].tolist(),
                    strict=True,
                ),
                strict=True,
            )
        }
        self._component: dict[Square, int] | None = None

    @property
    def component(self) -> dict[Square, int]:
        """Connected-area labels of the open squares (computed when first asked)."""
        if self._component is None:
            self._component = _components(self.cells)
        return self._component

    def _at(self, square: Square) -> tuple[int, int] | None:
        i, j = square[0] - self.c0, square[1] - self.r0
        if 0 <= i < self.shape[0] and 0 <= j < self.shape[1]:
            return i, j
        return None

    def on(self, square: Square) -> bool:
        at = self._at(square)
        return at is not None and bool(self.on_table[at])

    def has(self, square: Square, keyword: str) -> bool:
        at = self._at(square)
        mark = self.marks.get(keyword)
        return at is not None and mark is not None and bool(mark[at])

    def piece(self, square: Square, *keywords: str) -> Terrain | None:
        """The first terrain piece marking ``square`` with any of ``keywords``."""
        at = self._at(square)
        if at is None:
            return None
        for piece, inside in self.pieces:
            if inside[at] and any(piece.has(k) for k in keywords):
                return piece
        return None


#: Deck maps by the identity of the scene's terrain and table, and the grid.
_DECKS: dict[tuple[int, int, Grid], tuple[Scene, DeckMap]] = {}


def deck_map(scene: Scene, grid: Grid) -> DeckMap:
    """The deck map of the scene's terrain on ``grid``, made once per layout."""
    key = (id(scene.terrain), id(scene.table), grid)
    hit = _DECKS.get(key)
    if hit is not None and hit[0].terrain is scene.terrain and hit[0].table is scene.table:
        return hit[1]
    if len(_DECKS) > 16:
        _DECKS.clear()
    deck = DeckMap(scene, grid)
    _DECKS[key] = (scene, deck)
    return deck


def _components(cells: dict[Square, tuple[bool, bool, bool]]) -> dict[Square, int]:
    """A label per open square: squares with the same label are joined by open squares
    (every door counted open, so different labels mean no route at all)."""
    label: dict[Square, int] = {}
    for seed in cells:
        if seed in label:
            continue
        n = len(label)
        label[seed] = n
        stack = [seed]
        while stack:
            c, r = stack.pop()
            for dc, dr in _STEPS:
                nxt = (c + dc, r + dr)
                if nxt in cells and nxt not in label:
                    label[nxt] = n
                    stack.append(nxt)
    return label


class GridReferee:
    """Judges moves on a square grid; the same verdicts as ``tablesight.rules.referee.Referee``."""

    def __init__(self, scene: Scene, ruleset: Ruleset) -> None:
        assert ruleset.grid is not None
        self.scene = scene
        self.rules = ruleset
        self.g: GridRules = ruleset.grid
        self.grid = scene.grid or Grid(square_in=self.g.square_in)
        self.deck = deck_map(scene, self.grid)
        self._at = {m.id: self.grid.square_of(*m.pose.xy) for m in scene.models}

    def square(self, model: Model, at_start: bool = False) -> Square:
        if at_start:
            return self.grid.square_of(model.start.x, model.start.y)
        return self._at[model.id]

    def judge(self) -> Verdict:
        return self._judge([m.id for m in self.scene.moved()])

    def judge_model(self, model_id: str) -> Verdict:
        return self._judge([model_id])

    def judge_move_and_unit(self, model_id: str) -> tuple[Verdict, Verdict]:
        """One model's move; a square-grid game has no unit checks."""
        return self.judge_model(model_id), Verdict()

    def _judge(self, ids: list[str]) -> Verdict:
        out = Findings()
        moves = {mid: self._judge_move(self.scene.model(mid), out) for mid in ids}
        return Verdict(tuple(out.violations), tuple(out.advisories), moves)

    # -- occupancy ------------------------------------------------------------------------

    def occupants(self, square: Square, mover: Model) -> list[Model]:
        return [m for m in self.scene.models if m.id != mover.id and self.square(m) == square]

    def conscious(self, model: Model) -> bool:
        return not any(s in model.status for s in self.g.unconscious_status)

    def enemy_squares(self, mover: Model) -> dict[Square, Model]:
        return {self.square(m): m for m in self.scene.models if not m.is_friend_of(mover)}

    # -- one move -------------------------------------------------------------------------

    def _judge_move(self, mover: Model, out: Findings) -> MoveReport:
        start, end = self.square(mover, at_start=True), self.square(mover)
        known = mover.action in self.rules.actions
        if not known:
            out.flag("action", mover.id, self.rules.no_such_action(mover.action))
        if start == end and mover.action != "jet":
            return MoveReport(mover.action, self.allowance(mover), 0.0, 0.0, (0.0, 0.0))
        if not self.deck.on(end):
            out.flag("off_table", mover.id, f"{mover.id} ended off the grid, in square {end}")
            return MoveReport(mover.action, self.allowance(mover), 0.0, None, None)
        if self._where_it_ended(mover, end, out):
            return MoveReport(mover.action, self.allowance(mover), 0.0, None, None)
        if mover.action == "jet":
            return self._jet(mover, start, end, out)
        return self._walk(mover, start, end, out)

    def allowance(self, mover: Model) -> float:
        """Squares the declared move allows: the OOC penalty once per phase, and never
        less than one square per move action."""
        g = self.g
        actions = g.moves_as_action(mover.keywords) if mover.action == "move_as_action" else 1
        squares = actions * mover.move_squares - mover.ooc
        if mover.action == "run" and mover.run_check is not None:
            difficulty = g.run_difficulty + g.run_step * (mover.run_extra - 1)
            if mover.run_check >= difficulty:
                squares += mover.run_extra
            else:
                squares -= difficulty - mover.run_check
        return float(max(squares, actions))

    def _where_it_ended(self, mover: Model, end: Square, out: Findings) -> bool:
        """Flag an end on a wall or an occupied square; True if it is inside a wall."""
        wall = self.deck.piece(end, "wall")
        if wall is not None:
            out.flag(
                "blocked",
                mover.id,
                f"{mover.id} ended in square {end}, inside wall {wall.id}",
                other=wall.id,
            )
            return True
        for other in self.occupants(end, mover):
            if self.conscious(other):
                out.flag(
                    "base_overlap",
                    mover.id,
                    f"{mover.id} ended in square {end}, occupied by conscious {other.id}",
                    other=other.id,
                )
        return False

    # -- walking --------------------------------------------------------------------------

    def step_cost(
        self, mover: Model, enemies: dict[Square, Model], here: Square, there: Square, boots: bool
    ) -> int | None:
        """Movement points to step from ``here`` into ``there``; None if it cannot."""
        cell = self.deck.cells.get(there)
        if cell is None:
            return None  # a wall, or off the table
        slagged, outside, door = cell
        if door and self.deck.cells[here][1]:
            piece = self.deck.piece(there, "door")
            owner = piece is not None and f"owner:{mover.side}" in piece.keywords
            if piece is None or not (owner or piece.keywords & OPEN_DOOR):
                return None  # a closed door of another ship: hack it or break it first
        cost = self.g.slagged_cost if slagged or there in enemies else 1
        if outside and not boots:
            cost += self.g.outside_extra
        return cost

    def route(
        self, mover: Model, start: Square, end: Square, bound: float, avoid: frozenset[Square]
    ) -> tuple[int, list[Square]] | None:
        """The cheapest route in movement points (A* over squares, boots as a state)."""
        enemies = self.enemy_squares(mover)
        boots0 = "magboots_active" in mover.status

        def h(sq: Square) -> int:
            return abs(sq[0] - end[0]) + abs(sq[1] - end[1])

        best: dict[tuple[Square, bool], int] = {(start, boots0): 0}
        parent: dict[tuple[Square, bool], tuple[Square, bool]] = {}
        heap = [(h(start), 0, start, boots0)]
        while heap:
            f, cost, sq, boots = heapq.heappop(heap)
            if f > bound:
                return None
            if cost > best.get((sq, boots), math.inf):
                continue
            if sq == end:
                path, key = [sq], (sq, boots)
                while key in parent:
                    key = parent[key]
                    if key[0] != path[-1]:
                        path.append(key[0])
                return cost, path[::-1]
            for nxt, nboots, step in self._steps(mover, enemies, sq, boots, avoid):
                c = cost + step
                if c < best.get((nxt, nboots), math.inf):
                    best[(nxt, nboots)] = c
                    parent[(nxt, nboots)] = (sq, boots)
                    heapq.heappush(heap, (c + h(nxt), c, nxt, nboots))
        return None

    def _steps(
        self,
        mover: Model,
        enemies: dict[Square, Model],
        sq: Square,
        boots: bool,
        avoid: frozenset[Square] = frozenset(),
    ) -> list[tuple[Square, bool, int]]:
        """Where a walk may go next from ``sq`` (with its boots on or off), and for how many
        movement points: switching the boots on, or a step into a square."""
        moves: list[tuple[Square, bool, int]] = []
        if mover.has("magboots") and not boots:
            moves.append((sq, True, self.g.magboots_activation))
        for dc, dr in _STEPS:
            nxt = (sq[0] + dc, sq[1] + dr)
            if nxt in avoid:
                continue
            step = self.step_cost(mover, enemies, sq, nxt, boots)
            if step is not None:
                moves.append((nxt, boots, step))
        return moves

    def reachable(self, mover: Model, bound: float) -> dict[Square, int]:
        """Every square a walk from ``mover``'s start reaches within ``bound`` movement
        points, with the fewest it takes (Dijkstra's search over squares, boots as a
        state): where its move may end, but for squares it may not end in."""
        enemies = self.enemy_squares(mover)
        start = (self.square(mover, at_start=True), "magboots_active" in mover.status)
        best: dict[tuple[Square, bool], int] = {start: 0}
        heap = [(0, *start)]
        while heap:
            cost, sq, boots = heapq.heappop(heap)
            if cost > best.get((sq, boots), math.inf):
                continue
            for nxt, nboots, step in self._steps(mover, enemies, sq, boots):
                c = cost + step
                if c <= bound and c < best.get((nxt, nboots), math.inf):
                    best[(nxt, nboots)] = c
                    heapq.heappush(heap, (c, nxt, nboots))
        out: dict[Square, int] = {}
        for (sq, _), c in best.items():
            out[sq] = min(c, out.get(sq, c))
        return out

    def may_end_in(self, mover: Model, square: Square) -> bool:
        """Whether a move may end in ``square``: on the grid, not in a wall, not where a
        conscious model stands (what ``_where_it_ended`` flags)."""
        return (
            self.deck.on(square)
            and self.deck.piece(square, "wall") is None
            and not any(self.conscious(o) for o in self.occupants(square, mover))
        )

    def _walk(self, mover: Model, start: Square, end: Square, out: Findings) -> MoveReport:
        allowance = self.allowance(mover)
        manhattan = float(abs(end[0] - start[0]) + abs(end[1] - start[1]))
        cap = max(3.0 * allowance, allowance + 12.0)
        found = self.route(mover, start, end, cap, frozenset())
        report = MoveReport(
            mover.action,
            allowance,
            manhattan,
            None if found is None else float(found[0]),
            None if found is None else (float(found[0]), float(found[0])),
            () if found is None else tuple(self.grid.centre(sq) for sq in found[1]),
        )
        if found is None:
            joined = self.deck.component.get(start) == self.deck.component.get(end)
            if not joined or self.route(mover, start, end, math.inf, frozenset()) is None:
                out.flag(
                    "blocked", mover.id, f"no legal route leads {mover.id} from {start} to {end}"
                )
            else:
                out.flag(
                    "movement",
                    mover.id,
                    f"{mover.id}'s cheapest route costs more than {cap:.0f} squares; "
                    f"its {mover.action} allows {allowance:.0f}",
                    measured=cap,
                    limit=allowance,
                )
            return report
        cost, path = found
        if cost > allowance:
            out.flag(
                "movement",
                mover.id,
                f"{mover.id}'s cheapest route costs {cost} movement points; "
                f"its {mover.action} allows {allowance:.0f}",
                measured=float(cost),
                limit=allowance,
            )
        self._free_attacks(mover, start, end, path, allowance, out)
        return report

    def _free_attacks(
        self,
        mover: Model,
        start: Square,
        end: Square,
        path: list[Square],
        allowance: float,
        out: Findings,
    ) -> None:
        """Enemies whose squares the move had to enter: each may take a free melee attack."""
        enemies = {sq: m for sq, m in self.enemy_squares(mover).items() if self.conscious(m)}
        entered = [enemies[sq] for sq in path[1:] if sq in enemies]
        if not entered:
            return
        around = self.route(mover, start, end, allowance, frozenset(enemies))
        if around is not None:
            return  # it could have gone round them within its allowance
        for enemy in dict.fromkeys(entered):
            out.advise(
                "free_attack",
                mover.id,
                f"{mover.id} entered {enemy.id}'s square: {enemy.id} may take a free "
                f"melee attack (once per phase)",
                other=enemy.id,
            )

    # -- jets -----------------------------------------------------------------------------

    def _jet(self, mover: Model, start: Square, end: Square, out: Findings) -> MoveReport:
        """A jet: who may jet, how many squares its line passes through, and what it crosses."""
        line = squares_crossed(start, end)
        count = float(len(line))
        report = MoveReport(
            "jet",
            float(self.g.jet_squares),
            count,
            count,
            (count, count),
            tuple(self.grid.centre(sq) for sq in [start, *line]),
        )
        self._jet_reach(mover, start, end, count, out)
        self._jet_line(mover, line, out)
        return report

    def _jet_reach(
        self, mover: Model, start: Square, end: Square, count: float, out: Findings
    ) -> None:
        """A jet by a model without a jetpack or flight, and the squares its straight line
        passes through against the most a jet may."""
        g = self.g
        if not any(mover.has(k) for k in g.jet_keywords):
            out.flag(
                "action",
                mover.id,
                f"{mover.id} cannot jet: it needs one of {', '.join(g.jet_keywords)}",
            )
        if count > g.jet_squares:
            diagonal = start[0] != end[0] and start[1] != end[1]
            out.flag(
                "diagonal_jet" if diagonal else "movement",
                mover.id,
                f"{mover.id}'s jet passes through {count:.0f} squares"
                + (" (a diagonal line counts every square it passes through)" if diagonal else "")
                + f"; a jet moves at most {g.jet_squares}",
                measured=count,
                limit=float(g.jet_squares),
            )

    def _jet_line(self, mover: Model, line: list[Square], out: Findings) -> None:
        """The first wall, or slagged or enemy-held square, the jet's line runs through."""
        enemies = self.enemy_squares(mover)
        for sq in line:
            wall = self.deck.piece(sq, "wall")
            if wall is not None:
                out.flag(
                    "blocked",
                    mover.id,
                    f"{mover.id}'s jet line runs through wall {wall.id} at square {sq}",
                    other=wall.id,
                )
                return
            slag = self.deck.piece(sq, "slagged", "barrel")
            other: str | None = slag.id if slag is not None else None
            if other is None and sq in enemies:
                other = enemies[sq].id
            if other is not None:
                out.flag(
                    "slagged_jet",
                    mover.id,
                    f"{mover.id}'s jet line crosses slagged square {sq} ({other}): "
                    f"no jet may pass a slagged square",
                    other=other,
                )
                return
