"""How close the models of a unit must stay: one reading of coherency for the referee and
the views.

Two unit-mates are linked when they are within the coherency range edge to edge
(horizontally) and within the vertical limit, each give or take the table's tolerance.

>>> from tablesight.rules.ruleset import CoherencyRules
>>> rules = CoherencyRules(range_in=1.0, vertical_in=6.0)
>>> in_coherency(0.98, 6.03, rules, tolerance_in=0.05)
True
>>> in_coherency(0.98, 6.06, rules, tolerance_in=0.05)
False
>>> components([[False, True, False], [True, False, False], [False, False, False]])
[[0, 1], [2]]
"""

from __future__ import annotations

import math

from tablesight.rules.geometry import edge_distance
from tablesight.rules.measure import Measure
from tablesight.rules.ruleset import CoherencyRules
from tablesight.rules.scene import Model
from tablesight.rules.verdict import Findings, inches


def rise_between(a: Model, b: Model) -> float:
    """How far apart two models stand vertically, in inches."""
    return abs(a.pose.z - b.pose.z)


def in_coherency(gap_in: float, rise_in: float, rules: CoherencyRules, tolerance_in: float) -> bool:
    """Whether two unit-mates ``gap_in`` apart edge to edge and ``rise_in`` apart
    vertically are linked: each within its limit, give or take the tolerance."""
    return gap_in <= rules.range_in + tolerance_in and rise_in <= rules.vertical_in + tolerance_in


def components(linked: list[list[bool]]) -> list[list[int]]:
    """The groups of a unit joined by links, as lists of member indices."""
    n, seen, groups = len(linked), set(), []
    for s in range(n):
        if s in seen:
            continue
        stack, group = [s], []
        seen.add(s)
        while stack:
            i = stack.pop()
            group.append(i)
            for j in range(n):
                if linked[i][j] and j not in seen:
                    seen.add(j)
                    stack.append(j)
        groups.append(group)
    return groups


def spanning_tree(members: list[Model]) -> list[tuple[Model, Model, float]]:
    """The shortest links that join a unit (Prim's algorithm over edge-to-edge distances),
    each with its gap in inches."""
    if len(members) < 2:
        return []
    edges = []
    best = {
        m.id: (edge_distance(members[0].base, members[0].pose, m.base, m.pose), members[0])
        for m in members[1:]
    }
    rest = {m.id: m for m in members[1:]}
    while rest:
        mid = min(rest, key=lambda k: best[k][0])
        m = rest.pop(mid)
        gap, via = best[mid]
        edges.append((via, m, gap))
        for k, other in rest.items():
            d = edge_distance(m.base, m.pose, other.base, other.pose)
            if d < best[k][0]:
                best[k] = (d, m)
    return edges


# -- the check ---------------------------------------------------------------------------------


def coherency(m: Measure, side: str, unit: str, out: Findings) -> None:
    """Each unit-mate's gap to its nearest mate against the coherency range (or, when that
    mate is close enough across, the height between them against the vertical limit), and
    (where the unit must form one chain) the gap between its groups."""
    rules = m.rules.coherency
    members = [x for x in m.scene.models if x.side == side and x.unit == unit]
    if rules is None or len(members) < 2:
        return
    gap, linked = _unit_links(m, members)
    report = out.flag if rules.severity == "violation" else out.advise
    n = len(members)
    lonely = [i for i in range(n) if not any(linked[i])]
    for i in lonely:
        j = min(range(n), key=lambda k: gap[i][k])
        a, b = members[i], members[j]
        if gap[i][j] <= rules.range_in + m.tol:
            # Close enough across, so it is the height between them that breaks the link.
            rise = rise_between(a, b)
            where = "above" if b.pose.z > a.pose.z else "below"
            report(
                "coherency",
                a.id,
                f"{a.id} is out of coherency: its nearest unit-mate {b.id} is "
                f"{inches(gap[i][j])} away across but {inches(rise)} {where} "
                f"(vertical limit {inches(rules.vertical_in)})",
                other=b.id,
                measured=rise,
                limit=rules.vertical_in,
            )
            continue
        report(
            "coherency",
            a.id,
            f"{a.id} is out of coherency: its nearest unit-mate {b.id} "
            f"is {inches(gap[i][j])} away (range {inches(rules.range_in)})",
            other=b.id,
            measured=gap[i][j],
            limit=rules.range_in,
        )
    if rules.connected and not lonely:
        _unit_split(m, unit, members, gap, linked, out)


def _unit_links(m: Measure, members: list[Model]) -> tuple[list[list[float]], list[list[bool]]]:
    """The edge-to-edge gap between every two unit-mates, and whether they are linked."""
    rules = m.rules.coherency
    assert rules is not None
    n = len(members)
    gap = [[math.inf] * n for _ in range(n)]
    linked = [[False] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            d = m.distance(members[i], members[j], in_plan=True)
            gap[i][j] = gap[j][i] = d
            ok = in_coherency(d, rise_between(members[i], members[j]), rules, m.tol)
            linked[i][j] = linked[j][i] = ok
    return gap, linked


def _unit_split(
    m: Measure,
    unit: str,
    members: list[Model],
    gap: list[list[float]],
    linked: list[list[bool]],
    out: Findings,
) -> None:
    """The gap from each smaller group of a split unit to its largest group."""
    rules = m.rules.coherency
    assert rules is not None
    report = out.flag if rules.severity == "violation" else out.advise
    groups = components(linked)
    groups.sort(key=len, reverse=True)
    rest = groups[0]
    for group in groups[1:]:
        i, j = min(((a, b) for a in group for b in rest), key=lambda p: gap[p[0]][p[1]])
        report(
            "coherency",
            members[i].id,
            f"unit {unit} is split: {members[i].id}'s group is {inches(gap[i][j])} from "
            f"the rest (nearest {members[j].id}, range {inches(rules.range_in)})",
            other=members[j].id,
            measured=gap[i][j],
            limit=rules.range_in,
        )
