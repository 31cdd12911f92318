"""Errors for malformed input: one line naming the file, the field and what was expected."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


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


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a dict; a missing or malformed file is one ``InputError`` line."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text (a TOML file)") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None


def validate(path: Path, schema: type[M], data: object) -> M:
    """``data`` checked against ``schema``; the first problem is one ``InputError`` line."""
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise from_validation(str(path), schema, exc) from None


def load_toml(path: Path, schema: type[M]) -> M:
    """A TOML file read and validated completely, or one line saying what is wrong."""
    return validate(path, schema, read_toml(path))
