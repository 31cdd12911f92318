"""The API's one error shape, ``{"error": {"status", "field", "message"}}``, for every
refusal: a request the API refuses, a game's :class:`InputError`, an HTTP error (an unknown
route, say) and a fault (logged, and said in general terms)."""

from __future__ import annotations

from collections.abc import Iterable

from flask import Flask, Response, jsonify
from werkzeug.exceptions import HTTPException

from tablesight.rules.errors import InputError


class ApiError(Exception):
    """A request the API refuses: the status, the field at fault and why."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.field = status, message, field

    def headers(self) -> Iterable[tuple[str, str]]:
        """Headers the answer carries besides the body."""
        return ()

    @classmethod
    def from_input(cls, exc: InputError) -> ApiError:
        """A game's refusal (``"field: why"``) as a 400 naming that field."""
        text = str(exc)
        return cls(400, text, text.split(":", 1)[0] if ":" in text else None)


#: The longest message an error says: a refusal quotes what it refuses cut short, and this
#: bounds whatever else a message may carry.
MAX_MESSAGE = 300


def _short(text: str | None, width: int) -> str | None:
    return text if text is None or len(text) <= width else text[: width - 3] + "..."


def _answer(status: int, message: str | None, field: str | None = None) -> tuple[Response, int]:
    error = {"status": status, "field": _short(field, 40), "message": _short(message, MAX_MESSAGE)}
    return jsonify(error=error), status


def register(app: Flask) -> None:
    """Every error ``app`` answers, in the one shape."""

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError) -> tuple[Response, int]:
        response, status = _answer(exc.status, exc.message, exc.field)
        response.headers.extend(exc.headers())
        return response, status

    @app.errorhandler(InputError)
    def input_error(exc: InputError) -> tuple[Response, int]:
        return api_error(ApiError.from_input(exc))

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> tuple[Response, int]:
        return _answer(exc.code or 500, exc.description)

    @app.errorhandler(Exception)
    def server_error(exc: Exception) -> tuple[Response, int]:
        app.logger.exception("request failed")
        return _answer(500, "internal error; see the server log")
