"""Fuzzing the loaders of the user's files: each sample file with one value replaced by a
malformed one (a wrong type, NaN or infinity, a huge, negative or empty value, markup,
nesting a thousand deep, a 5,000-digit number), a key removed or an unknown key added.
Every run loads cleanly or ends in one ``InputError`` line that names the file: no other
exception, no hang."""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablesight.calibration.script import Script
from tablesight.calibration.setup import Setup, load_table_files
from tablesight.rules.errors import InputError, read_toml
from tablesight.rules.referee import referee_for
from tablesight.rules.scenario import Scenario

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
NECROMUNDA = SAMPLES / "necromunda"
SCENARIOS = sorted(p for p in (SAMPLES / "scenarios").glob("*.json") if p.name != "expected.json")
#: Examples per loader: 150 take about a second; TABLESIGHT_FUZZ_EXAMPLES=1500 searches
#: harder (a couple of minutes in all).
EXAMPLES = int(os.environ.get("TABLESIGHT_FUZZ_EXAMPLES", "150"))
#: A generous bound per example: a file that makes a loader hang or allocate without end
#: fails the test instead of stalling the suite.
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=5000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


class Raw(str):
    """Text written into the file as it is: nesting too deep or numbers too long for the
    encoders to write."""


MARKUP = ["<img src=x>", "<script>alert(1)</script>", '"><b>', "a\nb", "\u202egnp", "../../x"]
BAD = st.one_of(
    st.floats(-50, 300),  # often in range: the file loads, and a scenario is judged
    st.integers(0, 60),
    st.none(),  # the key removed
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 1, 49, 50, 1023, 1024, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e308, -1e308, 1e-300, 1e-9, 0.25, 240.0, 10_000.5]),
    st.text(max_size=40),
    st.sampled_from(["", "30", "x" * 5000, "krotos", "goliath", "4x4_50", *MARKUP]),
    st.lists(st.integers(-3, 3) | st.floats(-50, 50), max_size=16),
    st.lists(st.lists(st.floats(-50, 50), max_size=3), max_size=5),
    st.just({}),
    st.dictionaries(st.sampled_from(["x", "shape", "id", "<b>"]), st.integers(0, 3), max_size=3),
    st.integers(200, 2000).map(lambda n: Raw("[" * n + "]" * n)),
    st.integers(4301, 6000).map(lambda n: Raw("1" + "0" * n)),
)


def paths(data: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``data`` a value sits, containers included."""
    out = [at] if at else []
    if isinstance(data, dict):
        for k, v in data.items():
            out += paths(v, (*at, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += paths(v, (*at, i))
    return out


def mutated(data: dict[str, Any], draw: Callable[..., Any]) -> dict[str, Any]:
    """``data`` with one value replaced (``None``: removed) or an unknown key added."""
    out = copy.deepcopy(data)
    where = draw(st.sampled_from(paths(out)))
    parent = out
    for p in where[:-1]:
        parent = parent[p]
    value = draw(BAD)
    if isinstance(parent, dict) and draw(st.integers(0, 9)) == 0:
        parent[draw(st.sampled_from(["extra", "<b>", "x" * 300, "Id"]))] = (
            1 if value is None else value
        )
    elif value is None:
        del parent[where[-1]]
    else:
        parent[where[-1]] = value
    return out


def toml_value(v: Any) -> str:
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    pairs = ", ".join(f"{json.dumps(str(k))} = {toml_value(x)}" for k, x in v.items())
    return "{ " + pairs + " }"


def toml_doc(data: dict[str, Any]) -> str:
    """A document: top-level values, then [tables] and [[arrays of tables]]."""
    lines, tables = [], []
    for k, v in data.items():
        key = json.dumps(str(k))
        if isinstance(v, dict):
            tables.append(f"[{key}]")
            tables += [f"{json.dumps(str(a))} = {toml_value(b)}" for a, b in v.items()]
        elif isinstance(v, list) and v and all(isinstance(e, dict) for e in v):
            for e in v:
                tables.append(f"[[{key}]]")
                tables += [f"{json.dumps(str(a))} = {toml_value(b)}" for a, b in e.items()]
        else:
            lines.append(f"{key} = {toml_value(v)}")
    return "\n".join(lines + tables) + "\n"


def json_doc(data: Any) -> str:
    """JSON, with each :class:`Raw` written as it is."""
    raws: list[str] = []

    def mark(v: Any) -> Any:
        if isinstance(v, Raw):
            raws.append(str(v))
            return f"@raw{len(raws) - 1}@"
        if isinstance(v, dict):
            return {k: mark(x) for k, x in v.items()}
        if isinstance(v, list):
            return [mark(x) for x in v]
        return v

    text = json.dumps(mark(data))
    for i, raw in enumerate(raws):
        text = text.replace(f'"@raw{i}@"', raw)
    return text


def one_line(exc: InputError, *sources: object) -> None:
    message = str(exc)
    assert "\n" not in message and len(message) < 500, message
    assert message.startswith(tuple(f"{s}: " for s in sources)), message


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def setup_files(folder: Path, name: str, data: dict[str, Any]) -> dict[str, Path]:
    """The sample's files, ``name`` written from ``data``."""
    paths = {n: NECROMUNDA / f"{n}.toml" for n in ("table", "roster", "terrain", "camera")}
    paths[name] = folder / f"{name}.toml"
    paths[name].write_text(toml_doc(data), encoding="utf-8")
    return paths


Outcome = Literal["loaded", "refused"]


def fuzzed_setup_file(folder: Path, name: str, draw: Callable[..., Any]) -> Outcome:
    """The sample's ``name`` file fuzzed, loaded with the others: loaded, or refused in
    one line naming a file."""
    changed = mutated(read_toml(NECROMUNDA / f"{name}.toml"), draw)
    files = setup_files(folder, name, changed)
    try:
        load_table_files(files["table"], files["roster"], files["terrain"], files["camera"])
    except InputError as exc:
        one_line(exc, *files.values())
        return "refused"
    return "loaded"


@functools.cache
def necromunda() -> Setup:
    return Setup.load(
        "necromunda", *(NECROMUNDA / f"{n}.toml" for n in ("table", "roster", "terrain", "camera"))
    )


def fuzzed_session_file(folder: Path, draw: Callable[..., Any]) -> Outcome:
    """The sample's session script fuzzed: loaded, or refused in one line naming it."""
    path = folder / "session.toml"
    path.write_text(toml_doc(mutated(read_toml(NECROMUNDA / "session.toml"), draw)))
    try:
        Script.from_toml(path, necromunda())
    except InputError as exc:
        one_line(exc, path)
        return "refused"
    return "loaded"


def fuzzed_scenario(draw: Callable[..., Any]) -> Outcome:
    """A sample scenario fuzzed: loaded and judged, or refused in one line naming it."""
    scenario = draw(st.sampled_from(SCENARIOS))
    text = json_doc(mutated(json.loads(scenario.read_text(encoding="utf-8")), draw))
    try:
        loaded = Scenario.from_json(text, "scenario.json")
    except InputError as exc:
        one_line(exc, "scenario.json")
        return "refused"
    referee_for(loaded.scene, loaded.ruleset).judge()
    return "loaded"


def fuzzed(loader: str, folder: Path, draw: Callable[..., Any]) -> Outcome:
    if loader == "session":
        return fuzzed_session_file(folder, draw)
    if loader == "scenario":
        return fuzzed_scenario(draw)
    return fuzzed_setup_file(folder, loader, draw)


@pytest.mark.parametrize("name", ["table", "roster", "terrain", "camera"])
@FUZZ
@given(data=st.data())
def test_fuzzed_setup_files_load_or_are_one_line(folder: Path, name: str, data: Any) -> None:
    fuzzed_setup_file(folder, name, data.draw)


@FUZZ
@given(data=st.data())
def test_fuzzed_session_files_load_or_are_one_line(folder: Path, data: Any) -> None:
    fuzzed_session_file(folder, data.draw)


@FUZZ
@given(data=st.data())
def test_fuzzed_scenarios_load_and_are_judged_or_are_one_line(data: Any) -> None:
    fuzzed_scenario(data.draw)


def tablesight(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "tablesight"
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "tablesight"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=60)


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_scenarios_through_the_command_line(
    tmp_path_factory: pytest.TempPathFactory, data: Any
) -> None:
    scenario = data.draw(st.sampled_from(SCENARIOS))
    path = tmp_path_factory.mktemp("check") / "scenario.json"
    path.write_text(json_doc(mutated(json.loads(scenario.read_text()), data.draw)))
    done = tablesight("check", str(path))
    assert done.returncode in (0, 2), done.stderr
    if done.returncode == 2:
        assert done.stderr.startswith(f"tablesight: {path}: ") and done.stderr.count("\n") == 1
    else:
        assert done.stderr == "", done.stderr


#: Fuzzed files per loader in the test below.
FILES_EACH = 60


@pytest.mark.parametrize("loader", ["table", "roster", "terrain", "camera", "session", "scenario"])
def test_the_fuzzing_both_loads_and_refuses_files(folder: Path, loader: str) -> None:
    """Each loader, given 60 fuzzed files of its own (the same every run), loads some and
    refuses some: the changes are neither all harmless nor all fatal, so the fuzz tests
    above see both ways. The counts are printed with -s."""
    outcomes: Counter[Outcome] = Counter()

    @settings(
        max_examples=FILES_EACH,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(data=st.data())
    def fuzz(data: Any) -> None:
        outcomes[fuzzed(loader, folder, data.draw)] += 1

    fuzz()
    print(loader, dict(outcomes))
    assert outcomes["loaded"] > 0 and outcomes["refused"] > 0, dict(outcomes)
