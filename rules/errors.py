"""Errors for malformed input: one line naming the file, the field and what was expected."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError


class InputError(ValueError):
    """A configuration or scenario file is malformed; the message is one line for the user."""


def field_path(loc: tuple[int | str, ...]) -> str:
    """``('models', 2, 'base')`` -> ``models[2].base``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def _allowed_keys(schema: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The keys the model at ``loc`` (the parent of an unknown key) accepts."""
    model: Any = schema
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return []
        model = _model_of(field.annotation)
    return sorted(getattr(model, "model_fields", {}))


def _model_of(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def from_validation(source: str, schema: type[BaseModel], exc: ValidationError) -> InputError:
    """The first problem pydantic found, as one line: ``source: field: what, got what``."""
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    # Tagged unions add the tag to the location; the user never wrote it.
    loc = tuple(p for p in loc if not (isinstance(p, str) and p.startswith("function-")))
    kind = err["type"]
    if kind == "extra_forbidden":
        allowed = _allowed_keys(schema, loc[:-1])
        hint = f"; allowed keys: {', '.join(allowed)}" if allowed else ""
        return InputError(f"{source}: {field_path(loc)}: unknown key{hint}")
    if kind == "missing":
        return InputError(f"{source}: {field_path(loc)}: required key is missing")
    message = err["msg"].removeprefix("Value error, ")
    return InputError(f"{source}: {field_path(loc)}: {message}, got {err.get('input')!r}")
