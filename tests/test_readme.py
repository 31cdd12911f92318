"""The README's examples do what it says: its scenario example loads with ``tablesight
check`` and gives the verdict shown (the shortest way round the wall worked out here from
the example's own numbers), a scenario with comments is refused in one line saying so; the
caption under the demo's screenshot names the sample's flags and numbers; and what the
analyze and export example writes is all covered by ``.gitignore``."""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

Run = Callable[..., subprocess.CompletedProcess[str]]


def _section(title: str) -> str:
    start = README.index(f"\n## {title}")
    end = README.find("\n## ", start + 1)
    return README[start : end if end > 0 else None]


def _scenario_example() -> str:
    """The JSON block after "A scenario states" in the README."""
    text = _section("Judging a move: `tablesight check`")
    after = text[text.index("A scenario states") :]
    found = re.search(r"```json\n(.*?)```", after, re.S)
    assert found, "the README's scenario example is a ```json block"
    return found.group(1)


def _verdict_shown() -> str:
    """The verdict the README shows for ``check`` (the block after the commands)."""
    text = _section("Judging a move: `tablesight check`")
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", text, re.S | re.M)
    return next(body for lang, body in blocks if lang == "")


def _round_the_wall(data: dict) -> float:
    """The shortest path of the example's model round the end of its wall, by hand: the
    centre keeps the base's radius from the wall, so it goes along a tangent to the arc of
    that radius round the near corner, along the wall's end, round the far corner and
    along a tangent to the end (the wall spans y 5-15; the model goes round y = 5)."""
    (model,) = data["models"]
    radius = model["base"]["diameter_mm"] / 25.4 / 2
    (wall,) = data["terrain"]
    xs = [p[0] for p in wall["polygon"]]
    ys = [p[1] for p in wall["polygon"]]
    near, far = (min(xs), min(ys)), (max(xs), min(ys))
    start = (model["start"]["x"], model["start"]["y"])
    end = (model["end"]["x"], model["end"]["y"])

    def leg(point: tuple[float, float], corner: tuple[float, float]) -> float:
        """The tangent from ``point`` to the corner's circle, and the arc from the tangent
        point to the circle's bottom (where the path runs along the wall's end)."""
        dx, dy = point[0] - corner[0], point[1] - corner[1]
        d = math.hypot(dx, dy)
        tangent = math.sqrt(d * d - radius * radius)
        toward = math.atan2(abs(dx), dy)  # from straight up, towards the point's side
        touch = toward + math.acos(radius / d)  # the tangent point, from straight up
        return tangent + radius * (math.pi - touch)

    return leg(start, near) + (far[0] - near[0]) + leg(end, far)


@pytest.mark.slow
def test_the_scenario_example_loads_and_gives_the_verdict_shown(
    tablesight: Run, tmp_path: Path
) -> None:
    example = _scenario_example()
    data = json.loads(example)  # plain JSON, as check reads it
    path = tmp_path / "example.json"
    path.write_text(example, encoding="utf-8")

    done = tablesight("check", str(path))
    as_json = tablesight("check", str(path), "--json")

    assert done.returncode == 0, done.stderr
    assert done.stdout == _verdict_shown()
    verdict = json.loads(as_json.stdout)
    move = verdict["moves"]["ganger"]
    shortest = _round_the_wall(data)
    assert shortest == pytest.approx(13.007, abs=0.001)
    assert move["shortest_path_bounds"][0] == pytest.approx(shortest, abs=0.001)
    assert move["shortest_path_bounds"][1] == pytest.approx(shortest, abs=0.001)
    assert f'{shortest:.2f}"' in done.stdout
    assert [v["rule"] for v in verdict["violations"]] == ["movement"]
    assert verdict["violations"][0]["limit"] == data["models"][0]["movement"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("comment", "mark"),
    [
        ("    // the Movement characteristic, inches\n", "//"),
        ("    /* a model */\n", "/*"),
        ("    # the wall\n", "#"),
        ('"movement": 5,  // the Movement characteristic\n', "//"),
    ],
)
def test_a_scenario_with_comments_is_refused_saying_so(
    tablesight: Run, tmp_path: Path, comment: str, mark: str
) -> None:
    lines = _scenario_example().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"movement": 5,' in line)
    if comment.startswith('"movement"'):
        lines[at] = lines[at].replace('"movement": 5,\n', comment)
    else:
        lines.insert(at, comment)
    path = tmp_path / "commented.json"
    path.write_text("".join(lines), encoding="utf-8")

    done = tablesight("check", str(path))

    assert done.returncode == 2
    assert done.stderr == (
        f"tablesight: {path}: line {at + 1}: a comment ({mark} ...): JSON has no comments; "
        "take them all out (samples/scenarios/ has files that load as they are)\n"
    )


@pytest.mark.slow
def test_other_bad_json_is_not_called_a_comment(tablesight: Run, tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text(_scenario_example().replace('"movement": 5,', '"movement": 5,,'))

    done = tablesight("check", str(path))

    assert done.returncode == 2
    assert done.stderr.startswith(f"tablesight: {path}: not valid JSON: ")
    assert "comment" not in done.stderr and done.stderr.count("\n") == 1


def test_the_demo_caption_names_the_samples_flags() -> None:
    """The screenshot is of the Necromunda sample in its turn 2, after its last flag: the
    caption counts the flags and gives each one's model and measure as the camera measured
    it, within 0.05 in of the sample's hand-worked events."""
    caption = README[README.index("![The table view") : README.index("\n## ")]
    expected = json.loads((REPO / "samples/necromunda/expected-events.json").read_text())
    flags = [e for e in expected["events"] if e["kind"] == "violation"]
    counts = [NUMBER_WORDS[w] for w in re.findall(r"\b(\w+) flags\b", caption)]
    assert counts == [len(flags)] * 2  # the picture's text and the caption
    said = re.sub(r"\s+", " ", caption)
    shown = [float(n) for n in re.findall(r"(\d+\.\d\d) in\b", said)]
    for flag in flags:  # as the camera measured it: within the samples' 0.05 in
        assert flag["model"] in said, flag
        assert any(abs(n - flag["measured"]) <= 0.05 for n in shown), flag
    assert "turn 2" in said


# -- what the examples leave behind --------------------------------------------------------


def _analyze_and_export_example() -> list[str]:
    """The README's analyze-and-export example (its ``replay`` line, which serves, left
    out), as shell lines."""
    found = re.search(r"```sh\n( *S=samples/necromunda\n.*?)```", README, re.S)
    assert found, "the README's analyze example starts with S=samples/necromunda"
    lines = textwrap.dedent(found.group(1)).replace("\\\n", " ").splitlines()
    return [line.split("  #")[0] for line in lines if " replay " not in line]


@pytest.mark.slow
def test_what_the_analyze_and_export_example_writes_is_ignored_by_git(
    tmp_path: Path, tablesight_command: list[str]
) -> None:
    lines = _analyze_and_export_example()
    assert any(" analyze " in line for line in lines) and any(" export " in line for line in lines)
    samples = REPO / "samples" / "necromunda"
    script = "\n".join(
        ["set -e", f"S={shlex.quote(str(samples))}"]
        + [
            line.replace(".venv/bin/tablesight", shlex.join(tablesight_command))
            for line in lines
            if not line.startswith("S=")
        ]
    )
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]

    written = sorted(p.name for p in tmp_path.iterdir())
    assert {"necromunda.db", "necromunda-events.csv", "necromunda-tracks.csv"} <= set(written)
    assert "necromunda.json" in written
    # each as if written in the checkout's own folder, as the README has it
    checked = subprocess.run(
        ["git", "-C", str(REPO), "check-ignore", "--no-index", "--verbose", *written],
        capture_output=True,
        text=True,
    )
    ignored = [line.split("\t")[1] for line in checked.stdout.splitlines()]
    assert sorted(ignored) == written, checked.stdout
