"""Bad input in the user's files and the API's bodies: one line naming the file, the
field and what is allowed, never a traceback, a hang or a silently absorbed mistake.

Every loader the command line uses is driven in-process with one sample's files, each
changed in one place (safe ids, duplicate ids, bounds checked before anything is
allocated, one check per value for every path); a few real ``tablesight check`` runs
show the command line's exit status 2."""

from __future__ import annotations

import copy
import json
import math
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.script import Script
from tablesight.calibration.setup import Setup, load_table_files
from tablesight.calibration.table import TableSpec
from tablesight.rules.errors import InputError, read_toml
from tablesight.rules.scenario import Scenario

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
NECROMUNDA = SAMPLES / "necromunda"
FILES = ("table", "roster", "terrain", "camera", "session")

# -- writing the files --------------------------------------------------------------------


def toml_value(v: Any) -> str:
    """A value as TOML (inline tables for dicts); non-finite floats as TOML's nan and inf."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return (
            "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        )
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return (
            "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(x)}" for k, x in v.items()) + " }"
        )
    raise TypeError(type(v))


def toml_doc(data: dict[str, Any]) -> str:
    """A document: top-level values, then [tables] and [[arrays of tables]]."""
    lines, tables = [], []
    for k, v in data.items():
        key = json.dumps(str(k))
        if isinstance(v, dict):
            tables += [f"[{key}]"] + [
                f"{json.dumps(str(a))} = {toml_value(b)}" for a, b in v.items()
            ]
        elif isinstance(v, list) and v and all(isinstance(e, dict) for e in v):
            for e in v:
                tables += [f"[[{key}]]"] + [
                    f"{json.dumps(str(a))} = {toml_value(b)}" for a, b in e.items()
                ]
        else:
            lines.append(f"{key} = {toml_value(v)}")
    return "\n".join(lines + tables) + "\n"


def sample(name: str) -> dict[str, Any]:
    """One of the necromunda sample's files as data."""
    return read_toml(NECROMUNDA / f"{name}.toml")


def scenario(name: str = "necromunda-charge") -> dict[str, Any]:
    return json.loads((SAMPLES / "scenarios" / f"{name}.json").read_text(encoding="utf-8"))


def put(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A deep copy of ``data`` with the value at ``path`` replaced."""
    out = copy.deepcopy(data)
    at = out
    for p in path[:-1]:
        at = at[p]
    at[path[-1]] = value
    return out


class Files:
    """The necromunda sample's files in a folder, any one of them replaced."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        for name in FILES:
            shutil.copy(NECROMUNDA / f"{name}.toml", folder / f"{name}.toml")

    def path(self, name: str) -> Path:
        return self.folder / f"{name}.toml"

    def write(self, name: str, data: dict[str, Any] | str) -> Path:
        text = data if isinstance(data, str) else toml_doc(data)
        self.path(name).write_text(text, encoding="utf-8")
        return self.path(name)

    def load(self) -> None:
        """Every file through the loaders the command line uses: the setup, then its script."""
        setup = Setup.load(
            "necromunda",
            self.path("table"),
            self.path("roster"),
            self.path("terrain"),
            self.path("camera"),
        )
        Script.from_toml(self.path("session"), setup)


@pytest.fixture
def files(tmp_path: Path) -> Files:
    return Files(tmp_path)


def refused(load: Callable[[], object]) -> str:
    """The one line a loader refuses with."""
    with pytest.raises(InputError) as caught:
        load()
    message = str(caught.value)
    assert "\n" not in message and len(message) < 400, message
    return message


def refused_file(files: Files, name: str, data: dict[str, Any] | str) -> str:
    path = files.write(name, data)
    message = refused(files.load)
    assert message.startswith(f"{path}: "), message
    return message


def refused_scenario(data: Any) -> str:
    text = data if isinstance(data, str) else json.dumps(data)
    message = refused(lambda: Scenario.from_json(text, "scenario.json"))
    assert message.startswith("scenario.json: "), message
    return message


ID_RULE = "expected 1-32 letters, digits, '_', '-' or '.'"

# -- A: safe ids ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "path", "field"),
    [
        ("roster", ("models", 2, "id"), "models[2].id"),
        ("roster", ("models", 0, "side"), "models[0].side"),
        ("roster", ("models", 1, "unit"), "models[1].unit"),
        ("terrain", ("terrain", 1, "id"), "terrain[1].id"),
        ("session", ("step", 1, "declare", "model"), "step[1].declare.model"),
        ("session", ("step", 0, "side"), "step[0].side"),
    ],
)
@pytest.mark.parametrize("bad", ["<img src=x>", "", "a b", "-x", "\u00e9t\u00e9", "x" * 33])
def test_ids_in_the_files_are_of_the_safe_characters(
    files: Files, name: str, path: tuple[Any, ...], field: str, bad: str
) -> None:
    message = refused_file(files, name, put(sample(name), path, bad))
    assert f": {field}: {ID_RULE}" in message


@pytest.mark.parametrize(
    ("path", "field"),
    [
        (("models", 1, "id"), "models[1].id"),
        (("models", 0, "side"), "models[0].side"),
        (("models", 0, "unit"), "models[0].unit"),
        (("models", 0, "target"), "models[0].target"),
        (("game",), "game"),
    ],
)
def test_ids_in_a_scenario_are_of_the_safe_characters(path: tuple[Any, ...], field: str) -> None:
    assert f": {field}: {ID_RULE}" in refused_scenario(put(scenario(), path, "<img src=x>"))


def test_a_scenario_terrain_id_is_of_the_safe_characters() -> None:
    data = scenario("necromunda-wall-detour")
    assert f"terrain[0].id: {ID_RULE}" in refused_scenario(put(data, ("terrain", 0, "id"), "<b>"))


def test_a_huge_bad_value_is_cut_in_the_message(files: Files) -> None:
    message = refused_file(
        files, "roster", put(sample("roster"), ("models", 0, "id"), "<" * 10_000)
    )
    assert len(message) < 250 and "..." in message


def test_a_huge_unknown_key_is_cut_in_the_message(files: Files) -> None:
    data = sample("roster")
    data["models"][0]["<script>" * 1000] = 1
    message = refused_file(files, "roster", data)
    assert "unknown key" in message and len(message) < 400


# -- B: duplicate ids ---------------------------------------------------------------------


def test_a_model_id_twice_in_the_roster_names_both_entries(files: Files) -> None:
    message = refused_file(files, "roster", put(sample("roster"), ("models", 4, "id"), "krotos"))
    assert message.endswith(": models[4].id: 'krotos' is also models[0].id")


def test_a_terrain_id_twice_names_both_entries(files: Files) -> None:
    message = refused_file(
        files, "terrain", put(sample("terrain"), ("terrain", 1, "id"), "bulkhead")
    )
    assert message.endswith(": terrain[1].id: 'bulkhead' is also terrain[0].id")


def test_an_anchor_twice_names_both_entries(files: Files) -> None:
    message = refused_file(files, "table", put(sample("table"), ("anchors", 3, "id"), 1))
    assert message.endswith(
        ": anchors[3].id: anchor ids must differ, got 1 twice (also anchors[1].id)"
    )


def test_a_scenario_model_id_twice_names_both_entries() -> None:
    message = refused_scenario(put(scenario(), ("models", 3, "id"), "champion"))
    assert message == "scenario.json: models[3].id: 'champion' is also models[1].id"


def test_a_scenario_terrain_id_twice_names_both_entries() -> None:
    data = scenario("necromunda-wall-detour")
    data["terrain"].append(copy.deepcopy(data["terrain"][0]))
    n = len(data["terrain"]) - 1
    message = refused_scenario(data)
    assert message.endswith(f"terrain[{n}].id: 'wall' is also terrain[0].id"), message


# -- C: bounds before allocation ----------------------------------------------------------


def battlestations_run() -> dict[str, Any]:
    return scenario("battlestations-run")


@pytest.mark.parametrize(
    ("data", "field", "limit"),
    [
        (put(battlestations_run(), ("grid",), {"square_in": 1e-6}), "grid.square_in", "0.25"),
        (put(scenario(), ("table", "width"), 1e6), "table.width", "240"),
        (put(scenario(), ("table", "depth"), 1e-9), "table.depth", "1"),
        (put(scenario(), ("models", 0, "start", "x"), 1e300), "models[0].start.x", "10000"),
        (put(scenario(), ("models", 0, "end", "y"), -20_000), "models[0].end.y", "-10000"),
        (put(scenario(), ("models", 0, "movement"), 1e6), "models[0].movement", "1000"),
        (put(scenario(), ("models", 0, "uncertainty"), 1e308), "models[0].uncertainty", "100"),
        (put(scenario(), ("models", 0, "roll"), 99), "models[0].roll", "1 to 3"),
        (put(scenario(), ("models", 0, "start", "heading"), 1e9), "models[0].start.heading", "360"),
        (
            put(scenario(), ("models", 0, "base", "diameter_mm"), 1e9),
            "models[0].base.diameter_mm",
            "1000",
        ),
        (put(scenario(), ("tolerance",), 1e9), "tolerance", "1000"),
        (put(scenario(), ("models",), [scenario()["models"][1]] * 501), "models", "500"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_a_value_out_of_bounds_names_the_limit(data: Any, field: str, limit: str) -> None:
    t0 = time.perf_counter()
    message = refused_scenario(data)
    assert f": {field}: " in message and limit in message, message
    assert time.perf_counter() - t0 < 1.0


def test_a_rotated_fine_grid_over_a_big_table_is_too_many_squares() -> None:
    data = battlestations_run()
    data["table"] = {"width": 240, "depth": 240}
    data["grid"] = {"square_in": 0.25, "origin": [0, 0], "angle": 45}
    message = refused_scenario(data)
    assert ": grid.square_in: " in message and "1000000 squares" in message


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"a": ' * 5000 + "1" + "}" * 5000,
        '{"game": "necromunda", "tolerance": 1' + "0" * 5000 + "}",
    ],
    ids=["deep-list", "deep-object", "5000-digits"],
)
def test_a_pathological_json_is_one_line(text: str) -> None:
    # Python's parser may read 5000 levels when the recursion limit was raised (hypothesis
    # does, for a while): then the schema refuses it. Either way, one line.
    message = refused_scenario(text)
    assert "not valid JSON" in message or "required key is missing" in message


@pytest.mark.parametrize(
    "text",
    ["a = " + "[" * 100_000 + "]" * 100_000, "a = 1" + "0" * 5000],
    ids=["deep", "5000-digits"],
)
def test_a_pathological_toml_is_one_line(files: Files, text: str) -> None:
    assert "not valid TOML" in refused_file(files, "roster", text)


@pytest.mark.parametrize(
    ("name", "path", "value", "field", "limit"),
    [
        ("table", ("table", "width_in"), 1e-9, "table.width_in", "1"),
        ("table", ("table", "depth_in"), 10_000, "table.depth_in", "240"),
        ("table", ("anchors", 0, "x_in"), 1e300, "anchors[0].x_in", "10000"),
        ("roster", ("models", 0, "movement"), 1e6, "models[0].movement", "1000"),
        ("roster", ("models", 0, "marker_size_mm"), 1e12, "models[0].marker_size_mm", "1000"),
        ("terrain", ("terrain", 0, "height"), 1e12, "terrain[0].height", "1000"),
        (
            "terrain",
            ("terrain", 0, "polygon"),
            [[0, 0], [1e300, 0], [0, 1]],
            "terrain[0].polygon",
            "10000",
        ),
        ("session", ("step", 0, "turn"), 10_001, "step[0].turn", "10000"),
        ("session", ("step", 0, "t"), math.inf, "step[0].t", "finite"),
        ("camera", ("image_size",), [10**9, 1080], "image_size", "100000"),
    ],
)
def test_a_file_value_out_of_bounds_names_the_limit(
    files: Files, name: str, path: tuple[Any, ...], value: Any, field: str, limit: str
) -> None:
    message = refused_file(files, name, put(sample(name), path, value))
    assert f": {field}" in message and limit in message, message


def test_too_many_models_in_a_roster_names_the_limit(files: Files) -> None:
    data = sample("roster")
    data["models"] = [dict(data["models"][0], id=f"m{i}", marker=i % 50) for i in range(501)]
    message = refused_file(files, "roster", data)
    assert ": models: " in message and "500" in message


# -- D: one check per value, for every path ----------------------------------------------


@pytest.mark.parametrize(
    ("declare", "field"),
    [
        ({"model": "varg", "action": "charge", "target": "kyria", "roll": 99}, "roll"),
        ({"model": "varg", "action": "charge", "target": "varg", "roll": 2}, "target"),
        ({"model": "varg", "action": "charge", "target": "nobody", "roll": 2}, "target"),
        ({"model": "nobody", "action": "charge", "target": "kyria", "roll": 2}, "model"),
        ({"model": "varg", "action": "fly", "target": "kyria", "roll": 2}, "action"),
    ],
)
def test_a_scripted_declaration_is_checked_at_load_as_the_api_checks_it(
    files: Files, declare: dict[str, Any], field: str
) -> None:
    message = refused_file(
        files, "session", put(sample("session"), ("step", 1, "declare"), declare)
    )
    assert f": step[1].declare.{field}: " in message


def test_a_scripted_side_must_be_a_side_of_the_roster(files: Files) -> None:
    message = refused_file(files, "session", put(sample("session"), ("step", 0, "side"), "orks"))
    assert ": step[0].side: " in message and "goliath" in message


@pytest.mark.parametrize("turn", [True, 1e29, "30", 0, 2.0])
def test_a_scripted_turn_is_a_whole_positive_number(files: Files, turn: Any) -> None:
    assert ": step[0].turn: " in refused_file(
        files, "session", put(sample("session"), ("step", 0, "turn"), turn)
    )


@pytest.mark.parametrize(
    ("name", "path", "field"),
    [
        ("roster", ("models", 0, "movement"), "models[0].movement"),
        ("table", ("table", "width_in"), "table.width_in"),
        ("table", ("anchors", 0, "size_mm"), "anchors[0].size_mm"),
        ("terrain", ("terrain", 0, "height"), "terrain[0].height"),
        ("session", ("step", 0, "t"), "step[0].t"),
    ],
)
def test_a_number_written_as_a_string_is_refused(
    files: Files, name: str, path: tuple[Any, ...], field: str
) -> None:
    assert f": {field}: " in refused_file(files, name, put(sample(name), path, "30"))


def test_a_number_written_as_a_string_is_refused_in_a_scenario() -> None:
    assert ": models[0].movement: " in refused_scenario(
        put(scenario(), ("models", 0, "movement"), "30")
    )


@pytest.mark.parametrize(
    ("name", "path", "field"),
    [
        ("table", ("anchors", 2, "id"), "anchors[2].id"),
        ("roster", ("models", 3, "marker"), "models[3].marker"),
        ("terrain", ("terrain", 0, "marker"), "terrain[0].marker"),
    ],
)
def test_a_marker_outside_the_dictionary_is_refused(
    files: Files, name: str, path: tuple[Any, ...], field: str
) -> None:
    message = refused_file(files, name, put(sample(name), path, 50))
    assert f": {field}: " in message and "4x4_50" in message and "0 to 49" in message


def test_the_camera_with_an_impossible_number_of_distortion_terms(files: Files) -> None:
    message = refused_file(files, "camera", put(sample("camera"), ("dist_coeffs",), [0.0] * 15))
    assert ": dist_coeffs: " in message and "4, 5, 8, 12 or 14" in message


@pytest.mark.parametrize(
    ("name", "load"),
    [
        ("table", lambda p: TableSpec.from_toml(p)),
        ("camera", lambda p: CameraModel.from_toml(p)),
        ("roster", lambda p: load_table_files(NECROMUNDA / "table.toml", p)),
        ("session", lambda p: Script.from_toml(p)),
        ("scenario", lambda p: Scenario.from_file(p)),
    ],
)
def test_a_folder_given_as_a_file_is_one_line(
    tmp_path: Path, name: str, load: Callable[[Path], object]
) -> None:
    folder = tmp_path / f"{name}.toml"
    folder.mkdir()
    assert refused(lambda: load(folder)).startswith(f"{folder}: ")


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    assert refused(lambda: TableSpec.from_toml(tmp_path / "nope.toml")).endswith("no such file")


# -- the web API's bodies: the same value types ------------------------------------------


@pytest.mark.parametrize(
    ("kind", "data", "field"),
    [
        ("DeclareBody", {"model": "<img src=x>"}, "model"),
        ("DeclareBody", {"model": "varg", "target": ""}, "target"),
        ("DeclareBody", {"model": "varg", "roll": "3"}, "roll"),
        ("DeclareBody", {"model": "varg", "roll": True}, "roll"),
        ("PhaseBody", {"action": "start", "turn": True}, "turn"),
        ("PhaseBody", {"action": "start", "turn": 1e29}, "turn"),
        ("PhaseBody", {"action": "start", "turn": 10_001}, "turn"),
        ("PhaseBody", {"action": "side", "side": "<b>"}, "side"),
        ("SeekBody", {"t": 1e300}, "t"),
    ],
)
def test_the_api_bodies_use_the_same_value_types(
    kind: str, data: dict[str, Any], field: str
) -> None:
    from flask import Flask

    import tablesight.webui.bodies as bodies
    from tablesight.webui.errors import ApiError

    with Flask(__name__).test_request_context(json=data), pytest.raises(ApiError) as caught:
        bodies.body(getattr(bodies, kind))
    assert caught.value.status == 400 and caught.value.field == field
    assert str(caught.value).startswith(f"{field}: ") and "\n" not in str(caught.value)


def test_the_samples_still_load_through_every_loader(files: Files) -> None:
    files.load()
    for path in sorted((SAMPLES / "scenarios").glob("*.json")):
        if path.name != "expected.json":
            Scenario.from_file(path)


# -- E: the command line ------------------------------------------------------------------


def tablesight(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "tablesight"
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "tablesight"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=60)


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        json.dumps(put(scenario(), ("models", 0, "uncertainty"), 1e308)),
        json.dumps(put(battlestations_run(), ("grid",), {"square_in": 1e-6})),
        "[" * 100_000 + "]" * 100_000,
        '{"game": 1' + "0" * 5000 + "}",
    ],
    ids=["uncertainty-1e308", "square-1e-6", "deep", "5000-digits"],
)
def test_check_refuses_in_one_line_with_status_2(tmp_path: Path, text: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(text, encoding="utf-8")
    done = tablesight("check", str(path))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"tablesight: {path}: ")
