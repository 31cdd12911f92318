"""The page state: what every page draws, built in one place for the live game and the
replay, so that the two never differ in shape.

:func:`page_state` takes values only (a session to describe, who decided each flag, where
the game stands, the frame's located models, the camera mapping) and gives the dict that
``state()`` answers: :func:`tablesight.rules.view.describe` plus

* each flag's ``by`` and ``note``: who made its decision and their note (``None`` while
  undecided);
* each model's ``track``: its tracker state in the frame shown (``unseen`` when the frame
  does not locate it);
* ``live`` (:class:`Live`): status, generation, version, the frame's ``t`` and number,
  how many events, and ``pose``, how far the table pose can be trusted;
* ``camera``: how table inches map to the picture's pixels (``None`` without one);
* ``poses``: the frame's located models as :meth:`tablesight.match.game.Game.poses` gives
  them, ``[id, x, y, heading, z, track]`` each (``None`` before a first frame);
* ``camera_lost`` (:func:`camera_lost`): while the camera is lost (its newest loss not
  followed by its return), when: the loss's event, the game time of the last picture and
  the wall clock it arrived at; ``None`` while the camera delivers;
* ``replay`` (a replay only): where it stands.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tablesight.rules.session import Session
from tablesight.rules.view import describe

#: Who made each flag's decision, and their note, by the flag's event id.
Decided = Mapping[int, tuple[str, str | None]]


@dataclass(frozen=True)
class Live:
    """Where the game (or the replay) stands: ``t`` (seconds, ``None`` before a first
    frame) and ``frame`` (its number in the source) of the frame shown, ``events`` in the
    session, and ``pose``: the health of the table pose the views draw with (a
    :meth:`tablesight.vision.observe.PoseHealth.to_dict`, ``None`` until one is solved)."""

    status: str
    generation: int
    version: int
    t: float | None
    frame: int | None
    events: int
    pose: dict[str, object] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "generation": self.generation,
            "version": self.version,
            "t": None if self.t is None else round(self.t, 4),
            "frame": self.frame,
            "events": self.events,
            "pose": self.pose,
        }


def located(model_id: str, x: float, y: float, heading: float, z: float, track: str) -> list[Any]:
    """One located model as a frame's poses message holds it: ``[id, x, y, heading, z,
    track]``, inches and degrees, rounded as the overlay needs them.

    >>> located("ganger", 10.00049, 2.5, 90.04, 4.0, "settled")
    ['ganger', 10.0, 2.5, 90.0, 4.0, 'settled']
    """
    return [model_id, round(x, 3), round(y, 3), round(heading, 1), round(z, 2), track]


def poses_message(
    generation: int, frame: int, t: float, arrived_ms: float | None, models: Iterable[list[Any]]
) -> dict[str, Any]:
    """A frame's located models (each from :func:`located`), with the frame's game, number,
    time and when it arrived (wall clock, ms; ``None`` for a recorded frame)."""
    return {
        "generation": generation,
        "frame": frame,
        "t": round(t, 4),
        "arrived_ms": arrived_ms,
        "models": list(models),
    }


def decided_by(listed: list[dict[str, Any]], decided: Decided) -> list[dict[str, Any]]:
    """Flags as :func:`tablesight.rules.view.flags` lists them, each given ``by`` and
    ``note``: who made its decision and their note (``None`` while undecided)."""
    for flag in listed:
        by, note = decided.get(flag["id"], (None, None)) if flag["decision"] else (None, None)
        flag["by"], flag["note"] = by, note
    return listed


def camera_lost(
    session: Session, events: int, poses: dict[str, Any] | None
) -> dict[str, Any] | None:
    """Whether the camera is lost in ``session``'s first ``events`` events: its newest
    ``camera_lost`` not followed by a ``camera_back``. While it is: ``event`` (its id),
    ``t`` and ``frame`` (the game's time and frame number of the last picture before the
    loss) and ``last_picture_ms``: the wall clock (ms since the epoch) that picture arrived
    at, from ``poses`` (``None`` for a recorded frame).

    >>> from tablesight.rules.session import Event
    >>> class Told:
    ...     events = [Event(1.5, 45, "camera_lost", "camera lost, retrying", id=0)]
    >>> camera_lost(Told(), 1, {"arrived_ms": 1700000000000.0})
    {'event': 0, 't': 1.5, 'frame': 45, 'last_picture_ms': 1700000000000.0}
    >>> camera_lost(Told(), 0, None) is None
    True
    """
    told = session.events
    for i in range(min(events, len(told)) - 1, -1, -1):
        e = told[i]
        if e.kind == "camera_back":
            return None
        if e.kind == "camera_lost":
            arrived = poses.get("arrived_ms") if poses is not None else None
            return {"event": e.id, "t": round(e.t, 4), "frame": e.frame, "last_picture_ms": arrived}
    return None


def page_state(
    session: Session,
    *,
    live: Live,
    decided: Decided,
    poses: dict[str, Any] | None,
    camera: dict[str, Any] | None,
    replay: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The page state (see the module's docstring) of ``session``, which it only reads."""
    state = describe(session)
    decided_by(state["flags"], decided)
    tracks = {m[0]: m[5] for m in poses["models"]} if poses is not None else {}
    for m in state["models"]:
        m["track"] = tracks.get(m["id"], "unseen")
    state["live"] = live.to_dict()
    state["camera"] = camera
    state["poses"] = poses
    state["camera_lost"] = camera_lost(session, live.events, poses)
    if replay is not None:
        state["replay"] = replay
    return state
