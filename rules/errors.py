"""Errors for malformed input: one line naming the file, the field and what was expected."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from tablesight.rules.values import cut

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
            name = part if part.isidentifier() and len(part) <= 40 else cut(part)
            out += f".{name}" if out else name
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


def _written(schema: type[BaseModel], loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """The location as the user wrote it: without the validators' names and the tags that
    tagged unions (a base's ``shape``) add."""
    out: list[int | str] = []
    model: Any = schema
    tagged = False
    for part in loc:
        if isinstance(part, str) and part.startswith("function-"):
            continue
        if tagged:
            tagged = False
            continue
        out.append(part)
        if isinstance(part, int) or model is None:
            continue
        field = getattr(model, "model_fields", {}).get(part)
        model = None if field is None else _model_of(field.annotation)
        tagged = field is not None and field.discriminator is not None
    return tuple(out)


def _model_of(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def field_error(field: str, message: str) -> PydanticCustomError:
    """A problem a model's own check finds with the whole of it, told at ``field``:
    ``source: field: message`` (see :func:`from_validation`)."""
    return PydanticCustomError(
        FIELD_ERROR, "{field}: {message}", {"field": field, "message": message}
    )


#: The type of :func:`field_error`'s problems.
FIELD_ERROR = "field"


def from_validation(source: str, schema: type[BaseModel], exc: ValidationError) -> InputError:
    """The first problem pydantic found, as one line: ``source: field: what, got what``."""
    err = exc.errors()[0]
    loc = _written(schema, tuple(err["loc"]))
    kind = err["type"]
    if kind == FIELD_ERROR:
        within = f"{field_path(loc)}." if loc else ""
        return InputError(f"{source}: {within}{err['msg']}")
    if kind == "extra_forbidden":
        allowed = _allowed_keys(schema, loc[:-1])
        hint = f"; allowed keys: {', '.join(allowed)}" if allowed else ""
        return InputError(f"{source}: {field_path(loc)}: unknown key{hint}")
    if kind == "missing":
        return InputError(f"{source}: {field_path(loc)}: required key is missing")
    return InputError(f"{source}: {field_path(loc)}: {problem(err)}, got {cut(err.get('input'))}")


def problem(err: Any) -> str:
    """What pydantic says is wrong, on one short line: a value it quotes (a base's unknown
    shape, say) cut to a few words."""
    ctx = err.get("ctx") or {}
    if err["type"] == "union_tag_invalid":
        return (
            f"Input tag {cut(ctx.get('tag'))} found using {ctx.get('discriminator')} does not "
            f"match any of the expected tags: {ctx.get('expected_tags')}"
        )
    message = " ".join(str(err["msg"]).removeprefix("Value error, ").split())
    return message if len(message) <= 200 else message[:197] + "..."


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a dict; a missing or malformed file is one ``InputError`` line."""
    text = read_text(path, "a TOML file")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise InputError(f"{path}: not valid TOML: nested too deeply") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise InputError(f"{path}: not valid TOML: {str(exc).split(';')[0]}") from None


def read_text(path: Path, kind: str) -> str:
    """A file's UTF-8 text; a missing, unreadable (a folder, say) or binary file is one
    ``InputError`` line (``kind`` says what it should be: "a TOML file")."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, expected {kind}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text ({kind})") from None


def validate(path: Path, schema: type[M], data: object) -> M:
    """``data`` checked against ``schema``; the first problem is one ``InputError`` line."""
    try:
        return schema.model_validate(data)
    except RecursionError:
        raise InputError(f"{path}: nested too deeply") from None
    except ValidationError as exc:
        raise from_validation(str(path), schema, exc) from None


def load_toml(path: Path, schema: type[M]) -> M:
    """A TOML file read and validated completely, or one line saying what is wrong."""
    return validate(path, schema, read_toml(path))


def check_unique(source: str, key: str, values: list[Any], field: str = "id") -> None:
    """Each value once: a second one is one line naming both entries,
    ``roster.toml: models[4].id: 'krotos' is also models[1].id``."""
    first: dict[Any, int] = {}
    for i, value in enumerate(values):
        if value in first:
            raise InputError(
                f"{source}: {key}[{i}].{field}: {cut(value)} is also {key}[{first[value]}].{field}"
            )
        first[value] = i
