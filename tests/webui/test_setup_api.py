"""The set-up page's API (``tablesight setup``), over HTTP: Flask's test client for the
steps, a real waitress server for the guards and the picture stream. The source is a
rendered clip of the table (MJPG, 1280 x 720, three pictures, the last held); the truth
is the rig's: the table's corners as its lens projects them, the anchors as glued.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from tablesight.calibration.setup import Setup
from tablesight.rig.accuracy import scene_camera
from tablesight.rig.poolbench import packets as read_packets
from tablesight.rig.setuptable import ANCHORS, CORNERS_IN, WALL, wait_for
from tablesight.rig.setuptable import MODEL as BASE_MODEL
from tablesight.rig.synth import PlacedMarker, render_table
from tablesight.rig.webcam import write_frames
from tablesight.setup.session import HELD, TableSetup
from tablesight.webui.setup import create_setup_app, setup_server
from tablesight.webui.stream import PART

#: The same model, its marker 16 mm across.
MODEL = {**BASE_MODEL, "marker_size_mm": 16}


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> SimpleNamespace:
    folder = tmp_path_factory.mktemp("setup-api")
    lens = scene_camera(1280, 720)
    markers = [PlacedMarker(i, 40.0, x, y, 0.0, h, cv2.aruco.DICT_4X4_50) for i, x, y, h in ANCHORS]
    markers += [
        PlacedMarker(i, 25.0, x, 8.0, 0.0, 0.0, cv2.aruco.DICT_4X4_50)
        for i, x in ((10, 10.0), (40, 22.0))
    ]
    path = folder / "table.avi"
    write_frames([render_table(lens, (44.0, 30.0), markers)] * 3, path, 10.0, lens.size, "mjpg")
    camera_toml = folder / "camera.toml"
    camera_toml.write_text(lens.calibrated().to_toml())
    return SimpleNamespace(
        path=path, camera_toml=camera_toml, corners_px=lens.project(CORNERS_IN).tolist()
    )


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[TableSetup]:
    made = TableSetup(folder=tmp_path, run_port=0)
    yield made
    made.close()


@pytest.fixture
def client(setup):
    return create_setup_app(setup).test_client()


@pytest.fixture
def played(clip, client):
    """The client, with the clip played (its last picture held) and its camera loaded."""
    assert client.post("/api/setup/camera", json={"path": str(clip.camera_toml)}).status_code == 200
    assert client.post("/api/setup/source", json={"spec": str(clip.path)}).status_code == 200
    wait_for(lambda: client.get("/api/setup/state").get_json()["source"]["status"] == HELD)
    return client


def table_body(clip, **changes: object) -> dict[str, object]:
    return {
        "width_in": 44,
        "depth_in": 30,
        "dictionary": "4x4_50",
        "corners_px": clip.corners_px,
    } | changes


# -- the page and the state -------------------------------------------------------------------


def test_the_page_and_where_slash_leads(client) -> None:
    answer = client.get("/?token=abc")
    assert (answer.status_code, answer.headers["Location"]) == (302, "/setup?token=abc")
    page = client.get("/setup")
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert "TableSight set-up" in page.get_data(as_text=True)
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]


def test_the_state_before_anything(client, tmp_path: Path) -> None:
    state = client.get("/api/setup/state").get_json()
    assert list(state) == [
        "frame", "source", "sources", "calibration", "table", "game", "games", "presets",
        "folder", "markers", "models", "terrain", "written", "run",
    ]  # fmt: skip
    assert (state["frame"], state["source"], state["game"], state["presets"]) == (None,) * 4
    assert (state["written"], state["run"], state["markers"], state["models"]) == (
        None, None, [], [],
    )  # fmt: skip
    calibration = state["calibration"]
    assert calibration["coverage"] == {"grid": [[False] * 5] * 5, "share": 0.0}
    assert (calibration["on"], calibration["views"], calibration["last"]) == (False, 0, None)
    assert (calibration["rms_px"], calibration["fx"], calibration["calibrated"]) == (
        None, None, False,
    )  # fmt: skip
    assert calibration["board"] == {
        "squares_x": 5, "squares_y": 7, "square_mm": 30.0, "marker_mm": 22.0,
        "dictionary": "6x6_250",
    }  # fmt: skip
    assert state["table"] == {
        "width_in": None, "depth_in": None, "dictionary": "4x4_50", "corners_px": None,
        "proposal": None, "health": None,
    }  # fmt: skip
    assert "necromunda" in state["games"] and state["folder"] == str(tmp_path)
    answer = client.get("/api/setup/frame.jpg")
    assert answer.status_code == 404 and answer.get_json()["error"]["field"] == "source"


def test_the_newest_picture_once_and_as_a_stream(clip, played, setup) -> None:
    state = played.get("/api/setup/state").get_json()
    assert state["source"] == {
        "spec": str(clip.path), "status": HELD, "width": 1280, "height": 720, "fps": 10.0,
    }  # fmt: skip
    assert {"spec": str(clip.path), "label": "table.avi"} in state["sources"]
    answer = played.get("/api/setup/frame.jpg")
    assert answer.status_code == 200 and answer.mimetype == "image/jpeg"
    assert answer.headers["X-Frame"] == str(state["frame"]) == str(setup.newest().count)
    picture = cv2.imdecode(np.frombuffer(answer.data, np.uint8), cv2.IMREAD_GRAYSCALE)
    assert picture.shape == (720, 1280)
    # the clip's own last JPEG (it is held there), byte for byte, read from the file
    assert answer.data == read_packets(clip.path)[-1].tobytes()
    stream = played.get("/setup/video.mjpg", buffered=False)
    assert stream.mimetype == "multipart/x-mixed-replace"
    chunks = stream.response
    assert next(chunks) == PART
    assert next(chunks) == answer.data + b"\r\n" + PART
    stream.close()


# -- the steps --------------------------------------------------------------------------------


def test_the_anchors_from_the_true_corners(clip, played) -> None:
    answer = played.post("/api/setup/table", json=table_body(clip))
    assert answer.status_code == 200
    proposal = answer.get_json()
    assert [a["id"] for a in proposal["anchors"]] == [0, 1, 2, 3]
    for anchor, (_, x, y, heading) in zip(proposal["anchors"], ANCHORS, strict=True):
        assert math.dist((anchor["x_in"], anchor["y_in"]), (x, y)) <= 0.05
        assert abs((anchor["heading"] - heading + 180) % 360 - 180) <= 2.0
    assert proposal["healthy"] and proposal["problem"] == "" and proposal["warnings"] == []
    table = played.get("/api/setup/state").get_json()["table"]
    assert table["proposal"] == proposal
    assert table["corners_px"] == clip.corners_px
    assert table["health"]["healthy"] and table["health"]["anchors_used"] == [0, 1, 2, 3]


def test_the_game_models_terrain_and_files(clip, played, tmp_path: Path) -> None:
    played.post("/api/setup/table", json=table_body(clip))
    presets = played.post("/api/setup/game", json={"game": "necromunda"}).get_json()
    assert presets["game"] == "necromunda" and presets["movement_unit"] == "in"
    answer = played.post("/api/setup/models", json={"models": [MODEL], "terrain": [WALL]})
    assert answer.status_code == 200
    done = answer.get_json()
    assert done["models"][0]["marker_size_mm"] == 16 and done["models"][0]["marker_height_mm"] == 4
    assert done["terrain"][0]["marker_size_mm"] == 20  # the sheet's, by default
    markers = {m["id"]: m for m in played.get("/api/setup/state").get_json()["markers"]}
    assert (markers[10]["assigned"], markers[10]["kind"]) == ("krotos", "model")
    assert (markers[40]["assigned"], markers[40]["kind"]) == ("wall", "terrain")
    assert math.dist(markers[10]["centre_in"], (10.0, 8.0)) <= 0.15  # asked 4 mm up
    sheet = played.get("/api/setup/markers.pdf")
    assert sheet.mimetype == "application/pdf" and sheet.data.startswith(b"%PDF")
    folder = tmp_path / "my-table"
    answer = played.post("/api/setup/write", json={"folder": str(folder), "start": False})
    assert answer.status_code == 200
    out = answer.get_json()
    assert out["run"] is None
    files = out["written"]["files"]
    assert files == {
        name: str(folder / f"{name}.toml") for name in ("table", "roster", "terrain", "camera")
    }
    loaded = Setup.load(
        "necromunda", *(Path(files[n]) for n in ("table", "roster", "terrain", "camera"))
    )
    assert [m.id for m in loaded.roster] == ["krotos"] and [t.id for t in loaded.terrain] == [
        "wall"
    ]
    assert [a.id for a in loaded.table.anchors] == [0, 1, 2, 3]


def test_the_board_to_print(client) -> None:
    answer = client.get("/api/setup/board.pdf")
    assert answer.status_code == 200 and answer.data.startswith(b"%PDF")
    assert answer.headers["Content-Disposition"] == 'inline; filename="charuco-board.pdf"'
    refused = client.get("/api/setup/board.pdf?paper=a3").get_json()["error"]
    assert refused == {
        "status": 400,
        "field": "paper",
        "message": "paper: expected 'a4' or 'letter', got 'a3'",
    }


def test_calibration_on_and_off(client) -> None:
    on = client.post("/api/setup/calibration", json={"on": True}).get_json()
    assert on["calibration"]["on"] is True
    off = client.post("/api/setup/calibration", json={"on": False, "reset": True}).get_json()
    assert (off["calibration"]["on"], off["calibration"]["views"]) == (False, 0)


# -- refusals ---------------------------------------------------------------------------------


REFUSALS = [
    # (route, body, field, message starts)
    ("table", {"width_in": 0}, "width_in", "width_in: expected a side of 1 to 240 in, got 0"),
    ("table", {"dictionary": "9x9_50"}, "dictionary", "dictionary: "),
    ("table", {"anchor_size_mm": 0}, "anchor_size_mm", "anchor_size_mm: expected a size over 0"),
    ("table", {"anchor_ids": [0, 1, 77]}, "anchor_ids[2]", "anchor_ids[2]: expected a marker of"),
    ("table", {"colour": "green"}, "colour", "colour: not a field here"),
    (
        "models",
        {"models": [MODEL, {**MODEL, "id": "gorth"}]},
        "models[1].marker",
        "models[1].marker: marker 10 is also models[0].marker: one marker, one model or piece",
    ),
    (
        "models",
        {"models": [{**MODEL, "marker": 50}]},
        "models[0].marker",
        "models[0].marker: expected a marker of 4x4_50 (0 to 49), got 50",
    ),
    ("models", {"models": [{**MODEL, "base": "round"}]}, "models[0].base", "models[0].base: "),
    ("models", {"terrain": []}, "models", "models: required"),
    ("game", {"game": "chess"}, "game", "game: unknown game 'chess'; known games: "),
    ("source", {"spec": "/no/such.avi"}, "spec", "spec: /no/such.avi: no such file or folder"),
    ("source", {"spec": 0}, "spec", "spec: expected a camera number, a file or a URL, got 0"),
    ("calibration", {"on": "yes"}, "on", "on: expected true or false, got 'yes'"),
    ("camera", {"path": "/no/camera.toml"}, "path", "path: /no/camera.toml"),
    ("write", {"folder": ""}, "folder", "folder: expected a folder's path, got ''"),
]


@pytest.mark.parametrize(
    ("route", "body", "field", "message"), REFUSALS, ids=[r[2] for r in REFUSALS]
)
def test_refusals_name_the_field(
    clip, played, route: str, body: dict, field: str, message: str
) -> None:
    if route == "table":
        body = table_body(clip, **body)
    else:
        played.post("/api/setup/table", json=table_body(clip))
        played.post("/api/setup/game", json={"game": "necromunda"})
    answer = played.post(f"/api/setup/{route}", json=body)
    assert answer.status_code == 400
    error = answer.get_json()["error"]
    assert (error["status"], error["field"]) == (400, field)
    assert error["message"].startswith(message)


def test_an_unwritable_folder_is_refused(clip, played, tmp_path: Path) -> None:
    played.post("/api/setup/table", json=table_body(clip))
    played.post("/api/setup/game", json={"game": "necromunda"})
    played.post("/api/setup/models", json={"models": [MODEL]})
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    folder = tmp_path / "notes.txt" / "table"
    answer = played.post("/api/setup/write", json={"folder": str(folder)})
    assert answer.get_json()["error"] == {
        "status": 400,
        "field": "folder",
        "message": f"folder: cannot write to {folder}: Not a directory",
    }


@pytest.mark.parametrize(
    ("route", "data", "field"),
    [
        ("table", "not json", "body"),
        ("game", "[1, 2]", "body"),
        ("models", json.dumps({"models": "krotos"}), "models"),
        ("write", json.dumps({"folder": "x", "start": "yes"}), "start"),
    ],
)
def test_bodies_that_are_not_objects_or_the_wrong_kind(
    client, route: str, data: str, field: str
) -> None:
    answer = client.post(f"/api/setup/{route}", data=data, content_type="application/json")
    assert answer.status_code == 400 and answer.get_json()["error"]["field"] == field


def test_steps_out_of_order_say_what_comes_first(clip, played) -> None:
    error = played.post("/api/setup/models", json={"models": [MODEL]}).get_json()["error"]
    assert error["field"] == "game" and "choose a game first" in error["message"]
    played.post("/api/setup/game", json={"game": "necromunda"})
    error = played.post("/api/setup/models", json={"models": [MODEL]}).get_json()["error"]
    assert error["field"] == "table" and "click the table's corners" in error["message"]
    error = played.get("/api/setup/markers.pdf").get_json()["error"]
    assert error["field"] == "models"


def test_the_table_before_any_picture(client, clip) -> None:
    error = client.post("/api/setup/table", json=table_body(clip)).get_json()["error"]
    assert error["field"] == "source"


# -- served by waitress -----------------------------------------------------------------------


def test_served_with_the_guards_and_the_stream(clip, setup) -> None:
    server = setup_server(setup, "127.0.0.1", 0).start()
    base = f"http://127.0.0.1:{server.port}"
    try:
        setup.use_source(str(clip.path))
        wait_for(lambda: setup.state()["source"]["status"] == HELD)
        with urllib.request.urlopen(base + "/api/setup/state", timeout=10) as answer:
            assert json.loads(answer.read())["source"]["status"] == HELD
        with urllib.request.urlopen(base + "/setup/video.mjpg", timeout=10) as stream:
            head = stream.read(len(PART) + 2)
            assert head == PART + b"\xff\xd8"  # a JPEG picture follows
        foreign = urllib.request.Request(
            base + "/api/setup/state", headers={"Host": "evil.example"}
        )
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(foreign, timeout=10)
        with err.value:
            assert err.value.code == 400
            assert json.loads(err.value.read())["error"]["field"] == "Host"
        cross = urllib.request.Request(
            base + "/api/setup/game",
            data=b'{"game": "necromunda"}',
            headers={"Content-Type": "application/json", "Origin": "http://evil.example"},
        )
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(cross, timeout=10)
        with err.value:
            assert err.value.code == 403
        assert setup.state()["game"] is None
    finally:
        setup.close()  # the stream ends
        server.close()


@pytest.mark.slow
def test_the_command_serves_the_page(clip, tablesight_command, tmp_path: Path) -> None:
    """``tablesight setup --source CLIP --port 0``: says where the page is, serves the
    clip there, and stops on Ctrl-C with status 0."""
    import re
    import signal
    import subprocess

    process = subprocess.Popen(
        [*tablesight_command, "setup", "--source", str(clip.path), "--port", "0"],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.fullmatch(r"set-up page: (http://127\.0\.0\.1:\d+/)\n", line)
        assert found, line
        state_url = found.group(1) + "api/setup/state"

        def held() -> bool:
            with urllib.request.urlopen(state_url, timeout=10) as answer:
                return json.loads(answer.read())["source"]["status"] == HELD

        wait_for(held)
        with urllib.request.urlopen(found.group(1), timeout=10) as page:
            assert page.url.endswith("/setup") and b"TableSight set-up" in page.read()
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
        process.stderr.close()
    bad = subprocess.run(
        [*tablesight_command, "setup", "--source", str(tmp_path / "none.avi"), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr == f"tablesight: --source: {tmp_path / 'none.avi'}: no such file or folder\n"


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("a" * 5000, "(5000 characters): File name too long"),
        ("pictures/" + "b" * 300 + "/x.avi", "(315 characters): no such file or folder"),
        ("nul\x00.avi", "embedded null byte"),
    ],
)
def test_a_source_no_file_can_be_is_a_400_naming_it(client, spec: str, said: str) -> None:
    answer = client.post("/api/setup/source", json={"spec": spec})
    assert answer.status_code == 400
    error = answer.get_json()["error"]
    assert error["field"] == "spec" and error["message"].endswith(said), error
    assert len(error["message"]) < 200
