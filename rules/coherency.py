"""How close the models of a unit must stay: one reading of coherency for the referee and
the views.

Two unit-mates are linked when they are within the coherency range edge to edge
(horizontally) and within the vertical limit, each give or take the table's tolerance.

>>> from rules.ruleset import CoherencyRules
>>> rules = CoherencyRules(range_in=1.0, vertical_in=6.0)
>>> in_coherency(0.98, 6.03, rules, tolerance_in=0.05)
True
>>> in_coherency(0.98, 6.06, rules, tolerance_in=0.05)
False
>>> components([[False, True, False], [True, False, False], [False, False, False]])
[[0, 1], [2]]
"""

from __future__ import annotations

from rules.geometry import edge_distance
from rules.ruleset import CoherencyRules
from rules.scene import Model


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
