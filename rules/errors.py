"""Errors for malformed input: one line naming the file, the field and what was expected;
and the files a user names read safely (only a regular file, only so much of it)."""

from __future__ import annotations

import errno
import os
import stat
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
    ``roster.toml: models[4].id: 'krotos' is also models[1].id``; ``None`` (an entry
    without one) is never counted."""
    first: dict[Any, int] = {}
    for i, value in enumerate(values):
        if value is None:
            continue
        if value in first:
            raise InputError(
                f"{source}: {key}[{i}].{field}: {cut(value)} is also {key}[{first[value]}].{field}"
            )
        first[value] = i


# -- reading the files a user names ----------------------------------------------------
#
# A TOML file, a scenario, a match, a camera file: only a regular file is opened, and only
# so much of it is read.
#
# A device (``/dev/zero``), a named pipe with nothing writing to it, a socket or a folder is
# refused before it is opened, and again after (the name may have been swapped between the
# two: the file is opened without waiting, so a pipe never blocks); a file larger than its
# kind may be is refused before it is read, and one that grows while it is read is refused
# once it passes the limit. A name the system cannot take (longer than it allows, in all or
# in one part) is refused too. Every refusal is one :class:`InputError` line naming the file.

#: The most a TOML or JSON file a user names may hold (bytes): thousands of times any real
#: table, roster, camera file or scenario.
TEXT_LIMIT = 16 * 1024 * 1024

#: The longest name of one part of a path, and of a whole path, most systems take (Linux's
#: NAME_MAX and PATH_MAX); what the system says wins, these are only told.
NAME_MAX = 255
PATH_MAX = 4096

#: How much of a very long name a message shows (its start and its end).
SHOWN_HEAD = 60
SHOWN_TAIL = 30

#: Opening without waiting (a pipe with no writer) and without making it our terminal.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
#: Read this much at a time.
_CHUNK = 1024 * 1024


def shown(path: os.PathLike[str] | str) -> str:
    """A path as a message names it: a very long one by its start and end and its length,
    so that the line stays readable."""
    text = os.fspath(path)
    if len(text) <= SHOWN_HEAD + SHOWN_TAIL + 30:
        return text
    return f"{text[:SHOWN_HEAD]}...{text[-SHOWN_TAIL:]} ({len(text)} characters)"


def name_too_long(path: os.PathLike[str] | str) -> str:
    """What is too long in a name the system refused (``ENAMETOOLONG``): the system counts
    bytes (a letter such as é takes two), said as characters where they are the same."""
    text = os.fspath(path)
    longest = max(Path(text).parts, key=_bytes, default="")
    if _bytes(longest) > NAME_MAX:
        return (
            f"file name too long: a part of it has {_length(longest)}, "
            f"the system takes at most {NAME_MAX}"
        )
    return f"file name too long: {_length(text)}, the system takes at most {PATH_MAX - 1}"


def _bytes(text: str) -> int:
    return len(os.fsencode(text))


def _length(text: str) -> str:
    """``300 characters``, or ``400 bytes (200 characters)`` where the two differ."""
    size = _bytes(text)
    return f"{size} characters" if size == len(text) else f"{size} bytes ({len(text)} characters)"


def os_refusal(
    path: os.PathLike[str] | str, exc: OSError, kind: str, missing: str = "no such file"
) -> InputError:
    """An error the system gave opening or reading ``path`` as one line (``kind`` says what
    it should be: "a TOML file"; ``missing`` what a file not there is told)."""
    name = shown(path)
    code = exc.errno
    if code == errno.ENOENT:
        return InputError(f"{name}: {missing}")
    if code == errno.ENAMETOOLONG:
        return InputError(f"{name}: {name_too_long(path)}")
    if code == errno.ENOTDIR:
        return InputError(f"{name}: no such file (a part of the path is not a folder)")
    if code == errno.EISDIR:
        return InputError(f"{name}: is a folder, expected {kind}")
    return InputError(f"{name}: cannot read: {exc.strerror or exc}")


def special(mode: int) -> str:
    """What a file that is not a regular one is: a named pipe, a device, ..."""
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file"


def _size(size: int) -> str:
    """``16 MiB`` for a whole number of MiB, else ``16,777,217 bytes``."""
    mib = 1024 * 1024
    return f"{size // mib} MiB" if size >= mib and size % mib == 0 else f"{size:,} bytes"


def _check_mode(
    path: os.PathLike[str] | str, st: os.stat_result, kind: str, limit: int | None
) -> None:
    name = shown(path)
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{name}: is a folder, expected {kind}")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{name}: is {special(st.st_mode)}, not a regular file; expected {kind}")
    if limit is not None and st.st_size > limit:
        raise too_big(path, kind, limit, st.st_size)


def too_big(path: os.PathLike[str] | str, kind: str, limit: int, size: int | None) -> InputError:
    held = f"holds {_size(size)}" if size is not None else "grew past that while read"
    return InputError(f"{shown(path)}: {kind} may hold at most {_size(limit)}; this {held}")


def check_regular(
    path: os.PathLike[str] | str,
    kind: str,
    limit: int | None = None,
    missing: str = "no such file",
) -> os.stat_result:
    """``path`` names a regular file (of at most ``limit`` bytes): for a file another
    library opens by its name (SQLite, OpenCV). Else one :class:`InputError` line."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise os_refusal(path, exc, kind, missing) from None
    except ValueError:  # a NUL in the name
        raise InputError(f"{shown(path)}: not a file name (it holds a NUL character)") from None
    _check_mode(path, st, kind, limit)
    return st


def read_bytes(
    path: os.PathLike[str] | str,
    kind: str,
    limit: int = TEXT_LIMIT,
    missing: str = "no such file",
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; anything else
    (see the module's docstring) is one :class:`InputError` line."""
    check_regular(path, kind, limit, missing)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:  # gone, or swapped, since it was looked at
        raise os_refusal(path, exc, kind, missing) from None
    try:
        _check_mode(path, os.fstat(fd), kind, limit)  # the same file the name named before?
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise too_big(path, kind, limit, None)
        return b"".join(chunks)
    except OSError as exc:
        raise os_refusal(path, exc, kind) from None
    finally:
        os.close(fd)


def read_text(
    path: os.PathLike[str] | str,
    kind: str,
    limit: int = TEXT_LIMIT,
    *,
    not_text: str | None = None,
    missing: str = "no such file",
) -> str:
    """The UTF-8 text of the regular file ``path`` (its line ends made ``\\n``, as Python's
    text files read them); ``not_text`` says what a file that is not UTF-8 is told (by
    default: ``not UTF-8 text (kind)``)."""
    data = read_bytes(path, kind, limit, missing)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{shown(path)}: {not_text or f'not UTF-8 text ({kind})'}") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")
