"""The JSON bodies the controls take, checked whole before anything is done: an unknown
key, a wrong type or a value out of range is a 400 naming the field (and, for a choice,
what is allowed). Ids, turns, rolls and times are the value types of :mod:`tablesight.rules.values`,
checked as the files that say the same things are."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from flask import request
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tablesight.rules.errors import problem
from tablesight.rules.values import Id, Roll, Seconds, Turn, cut
from tablesight.webui.errors import ApiError


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class PhaseBody(Body):
    action: str = Field(pattern="^(start|end|next_turn|side)$")
    side: Id | None = None
    turn: Turn | None = None


class DeclareBody(Body):
    model: Id
    action: Id | None = None
    target: Id | None = None
    roll: Roll | None = None


class FlagBody(Body):
    decision: str = Field(pattern="^(accept|dismiss)$")


class SeekBody(Body):
    t: Seconds


B = TypeVar("B", bound=Body)


def body(kind: type[B]) -> B:
    """The request's JSON body as ``kind``; an :class:`ApiError` naming the field if not."""
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise ApiError(400, "expected a JSON object", "body")
    try:
        return kind.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err["loc"] if not str(p).startswith("function-")]
        field = ".".join(p if p.isidentifier() else cut(p) for p in loc) or "body"
        message = problem(err)
        raise ApiError(400, f"{field}: {message}{_allowed(kind, field)}", field) from None


def _allowed(kind: type[Body], field: str) -> str:
    """``"; allowed: a, b"`` for a field that is a choice."""
    info = kind.model_fields.get(field)
    pattern = str(getattr(info.metadata[0], "pattern", "") or "") if info and info.metadata else ""
    return "; allowed: " + ", ".join(pattern.strip("^$()").split("|")) if pattern else ""


def fields(*keys: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """The request's JSON object, with only ``keys`` and every one of ``required``: for
    bodies whose values the code they go to checks (naming the field) itself."""
    data = request.get_json(silent=True)
    if not isinstance(data, Mapping):
        raise ApiError(400, "body: expected a JSON object", "body")
    for key in data:
        if key not in keys:
            raise ApiError(400, f"{key}: not a field here; the fields: {', '.join(keys)}", key)
    for key in required:
        if key not in data:
            raise ApiError(400, f"{key}: required", key)
    return dict(data)
