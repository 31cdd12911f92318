"""JSON in and out of the web UI, strict: a body nested too deep to read is a body that is
not JSON (a 400, never a fault), and no answer ever holds ``NaN`` or ``Infinity`` (which
JSON has not, and browsers refuse): a number that is not finite goes out as ``null``, and
is logged as the fault it is."""

from __future__ import annotations

import json
import logging
import math
from typing import Any

from flask.json.provider import DefaultJSONProvider

log = logging.getLogger("tablesight.web")

#: The largest request body, bytes: the controls' bodies are a few dozen.
MAX_BODY = 64 * 1024
#: The deepest a request body may nest: the controls' bodies are flat objects.
MAX_NESTING = 16


class StrictJSON(DefaultJSONProvider):
    """Flask's JSON, but a body too deeply nested to read is not JSON (so a 400, not a
    fault), and what goes out is always valid JSON: never ``NaN`` or ``Infinity``."""

    sort_keys = False

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        if nesting(s) > MAX_NESTING:
            raise ValueError(f"JSON nested deeper than {MAX_NESTING}")
        try:
            return super().loads(s, **kwargs)
        except RecursionError:
            raise ValueError("JSON nested too deep") from None

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        kwargs.setdefault("default", self.default)
        kwargs.setdefault("ensure_ascii", self.ensure_ascii)
        kwargs.setdefault("sort_keys", self.sort_keys)
        return dumps(obj, **kwargs)


def nesting(text: str | bytes) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings do not
    count), found without parsing it: what the parser would recurse into."""
    raw = text.encode() if isinstance(text, str) else text
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


def dumps(obj: Any, **kwargs: Any) -> str:
    """``json.dumps`` that never writes ``NaN`` or ``Infinity``: a number that is not
    finite is written ``null`` (and logged: it is a fault of whoever made it)."""
    try:
        return json.dumps(obj, allow_nan=False, **kwargs)
    except ValueError:
        log.error("an answer held a number that is not finite; sent as null")
        return json.dumps(_finite(obj), allow_nan=False, **kwargs)


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj
