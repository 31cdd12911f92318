"""The pages: the table view, the broadcast and overlay pages for OBS, and the replay
viewer's page. Each is a template (``templates/``, all extending ``base.html``) and its
keyboard (:mod:`tablesight.webui.keys`); the numbers on them come from the API."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, redirect, render_template
from werkzeug.wrappers import Response as BaseResponse

from tablesight.setup.session import without_token
from tablesight.webui import keys
from tablesight.webui.protocol import REPLAY

pages = Blueprint("pages", __name__)


#: Where the app keeps the address of the set-up page that started its game, if one did.
SETUP_URL = "TABLESIGHT_SETUP_URL"


def render_page(
    template: str, page: str, keyboard: tuple[keys.Key, ...] = (), **extra: object
) -> str:
    """A page, with its keyboard for the help dialog and its script."""
    return render_template(
        template, page=page, keyboard=keyboard, bindings=keys.bindings(keyboard), **extra
    )


@pages.get("/")
def table_view() -> str | BaseResponse:
    if REPLAY in current_app.extensions:
        return redirect("/replay")
    setup_url = current_app.config.get(SETUP_URL)
    # the set-up page's address alone: its token (if it was given one) is never shown,
    # those who hold it open the set-up with it
    shown = None if not setup_url else without_token(setup_url)
    return render_page("table.html", "table", keys.TABLE, setup_url=shown)


@pages.get("/broadcast")
def broadcast() -> str:
    return render_page("broadcast.html", "broadcast")


@pages.get("/overlay")
def overlay() -> str:
    return render_page("broadcast.html", "overlay")


@pages.get("/favicon.ico")
def favicon() -> Response:
    return Response(status=204)
