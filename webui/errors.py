"""The API's one error shape, ``{"error": {"status", "field", "message"}}``, for every
refusal: a request the API refuses, a game's :class:`InputError`, an HTTP error (an unknown
route, say) and a fault (logged, and said in general terms)."""

from __future__ import annotations

from flask import Flask, Response, jsonify
from werkzeug.exceptions import HTTPException

from rules.errors import InputError


class ApiError(Exception):
    """A request the API refuses: the status, the field at fault and why."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.field = status, message, field

    @classmethod
    def from_input(cls, exc: InputError) -> ApiError:
        """A game's refusal (``"field: why"``) as a 400 naming that field."""
        text = str(exc)
        return cls(400, text, text.split(":", 1)[0] if ":" in text else None)


def _answer(status: int, message: str | None, field: str | None = None) -> tuple[Response, int]:
    return jsonify(error={"status": status, "field": field, "message": message}), status


def register(app: Flask) -> None:
    """Every error ``app`` answers, in the one shape."""

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError) -> tuple[Response, int]:
        return _answer(exc.status, exc.message, exc.field)

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
