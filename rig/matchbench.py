"""A synthetic hour-long match written through :class:`~tablesight.match.writer.MatchWriter`,
and the time to seek in it (``tablesight bench seek``).
"""

from __future__ import annotations

import logging
import math
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tablesight.match.reader import Match
from tablesight.match.replay import Replay
from tablesight.match.schema import connect
from tablesight.match.writer import MatchWriter
from tablesight.rules.session import Journal
from tablesight.vision.sources import Frame

if TYPE_CHECKING:
    from tablesight.calibration.setup import Setup

log = logging.getLogger("tablesight.record")


def _synthetic_setup(models: int) -> Setup:
    from tablesight.calibration.roster import RosterModel
    from tablesight.calibration.setup import Setup
    from tablesight.calibration.table import Anchor, TableKeys, TableSpec
    from tablesight.rules.ruleset import load_ruleset
    from tablesight.rules.scenario import RoundBase

    corners = [(1.5, 1.5), (42.5, 1.5), (42.5, 28.5), (1.5, 28.5)]
    table = TableSpec(
        table=TableKeys(width_in=44, depth_in=30, dictionary="4x4_250"),
        anchors=[Anchor(id=i, x_in=x, y_in=y, size_mm=40) for i, (x, y) in enumerate(corners)],
    )
    roster = [
        RosterModel(
            id=f"m{k:02d}",
            side=("red", "blue")[k % 2],
            base=RoundBase(shape="round", diameter_mm=25.4),
            movement=6,
            marker=10 + k,
            marker_size_mm=20,
        )
        for k in range(models)
    ]
    return Setup("necromunda", load_ruleset("necromunda"), table, roster, [], None)


def build_synthetic(
    path: Path,
    *,
    seconds: float = 3600.0,
    models: int = 40,
    fps: float = 30.0,
    seed: int = 1,
    progress: Callable[[float], None] | None = None,
) -> None:
    """A poses-only match through :class:`MatchWriter`: ``models`` models wandering for
    ``seconds`` at ``fps``, a snapshot every second, an event every ten."""
    from tablesight.rules.geometry import Pose

    setup = _synthetic_setup(models)
    session = setup.session()
    rng = random.Random(seed)
    ids = [m.id for m in setup.roster]
    at = {m: [rng.uniform(2, 42), rng.uniform(2, 28), rng.uniform(0, 360)] for m in ids}
    image = np.zeros((8, 8, 3), np.uint8)
    writer = MatchWriter(path, setup, fps=fps, video=False, app_version="bench")
    mover = ids[0]
    for k in range(round(seconds * fps)):
        t = k / fps
        if k % round(fps) == 0:
            mover = rng.choice(ids)
        x, y, heading = at[mover]
        at[mover] = [min(max(x + rng.gauss(0, 0.05), 1), 43), min(max(y + 0.02, 1), 29), heading]
        poses = {
            m: (p[0], p[1], p[2], 0.004, "moving" if m == mover else "settled")
            for m, p in at.items()
        }
        writer.frame(Frame(image, t, k), poses, write_image=False)
        if writer.snapshot_due(t):
            for m, p in at.items():
                session.seen(m, Pose(p[0], p[1], p[2]), 0.004)
            if k % round(10 * fps) == 0:
                for e in session.moved(t, k, mover, Pose(at[mover][0], at[mover][1]), 0.004):
                    writer.event(e)
            writer.snapshot(t, k, session.snapshot())
        if progress is not None and k % round(60 * fps) == 0:
            progress(t / seconds)
    writer.close()


def _build_quietly(path: Path, seconds: float, models: int, seed: int) -> float:
    """Build the synthetic match with a progress line on stderr; the seconds it took."""
    began = time.perf_counter()
    level = log.level
    log.setLevel(logging.ERROR)  # built faster than real time: a backlog is expected
    try:
        build_synthetic(
            path,
            seconds=seconds,
            models=models,
            seed=seed,
            progress=lambda f: print(f"building: {f:4.0%}", end="\r", file=sys.stderr),
        )
    finally:
        log.setLevel(level)
    print(" " * 20, end="\r", file=sys.stderr)
    return time.perf_counter() - began


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def bench_match(seconds: float = 3600.0, models: int = 40, seeks: int = 200, seed: int = 1) -> str:
    """Build a synthetic match in a temporary folder and time ``Match.state_at``."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="tablesight-bench-") as folder:
        path = Path(folder) / "bench.db"
        build_s = _build_quietly(path, seconds, models, seed)
        size = path.stat().st_size
        match = Match(path)
        frames = len(match.frames())
        times = [rng.uniform(0.0, match.duration_s) for _ in range(seeks)]
        plain = connect(path, read_only=True)
        seek_ms, base_ms = [], []
        for t in times:
            began = time.perf_counter()
            moment = match.state_at(t)
            seek_ms.append((time.perf_counter() - began) * 1000)
            assert moment.frame is not None and len(moment.poses) == models
            began = time.perf_counter()
            rows = plain.execute(
                "SELECT model, x_in, y_in, heading_deg, sigma_in, state FROM poses WHERE frame = ?",
                (int(t * 30.0),),
            ).fetchall()
            base_ms.append((time.perf_counter() - began) * 1000)
            assert len(rows) == models
        plain.close()
        match.close()
    stats = [
        (name, f(seek_ms), f(base_ms))
        for name, f in (
            ("p50", statistics.median),
            ("p95", lambda v: _percentile(v, 0.95)),
            ("max", max),
        )
    ]
    lines = [
        f"synthetic match: {seconds / 3600:.2f} h at 30 fps, {models} models: {frames} frames, "
        f"{frames * models} poses, a snapshot a second",
        f"build: {build_s:.1f} s through MatchWriter; file {size / 1e6:.1f} MB "
        f"({size / max(frames * models, 1):.0f} bytes a pose)",
        f"{seeks} seeks at random times; baseline: SELECT one frame's poses by primary key",
        f"{'':6}{'state_at (ms)':>15}{'baseline (ms)':>15}{'ratio':>8}",
    ]
    for name, s, b in stats:
        lines.append(f"{name:6}{s:15.3f}{b:15.3f}{s / b:8.1f}")
    return "\n".join(lines)


# -- seeking in a replay ----------------------------------------------------------------------


def _synthetic_journal(replay: Replay, rng: random.Random) -> Journal:
    """A journal as a live game writes one, for the models of ``replay``'s match: each
    model seen, one movement phase, a move of up to 3 in every 10 s of the footage."""
    poses = {m: [rng.uniform(2, 42), rng.uniform(2, 28), 0.0, 0.0] for m in replay.session.models}
    journal: Journal = [
        ("seen", {"model_id": m, "pose": p, "sigma_in": 0.004}) for m, p in poses.items()
    ]
    journal.append(("start_phase", {"t": replay.start_t, "frame": 0, "turn": None, "side": None}))
    ids = list(poses)
    for k in range(1, int(replay.duration_s // 10) + 1):
        m = rng.choice(ids)
        x, y = poses[m][0] + rng.uniform(-3, 3), poses[m][1] + rng.uniform(-3, 3)
        poses[m] = [min(max(x, 1.0), 43.0), min(max(y, 1.0), 29.0), 0.0, 0.0]
        args = {"t": replay.start_t + 10.0 * k, "frame": 300 * k, "model_id": m}
        journal.append(("moved", {**args, "pose": poses[m], "sigma_in": 0.004}))
    return journal


def _stats(columns: Sequence[tuple[str, list[float]]]) -> list[str]:
    """p50, p95 and max of each column (ms), and the first column over the last."""
    lines = [f"{'(ms)':6}" + "".join(f"{n:>12}" for n, _ in columns) + f"{'ratio':>9}"]
    for name, f in (
        ("p50", statistics.median),
        ("p95", lambda v: _percentile(v, 0.95)),
        ("max", max),
    ):
        values = [f(v) for _, v in columns]
        lines.append(
            f"{name:6}"
            + "".join(f"{v:12.3f}" for v in values)
            + f"{values[0] / max(values[-1], 1e-9):9.1f}"
        )
    return lines


def bench_replay(
    seconds: float = 3600.0,
    models: int = 40,
    seeks: int = 200,
    seed: int = 1,
    keep: Path | None = None,
) -> str:
    """Time :meth:`Replay.seek` at random times of a synthetic match
    (``tablesight.vision.build_synthetic``: poses only, 30 fps), beside ``Match.state_at`` alone
    and a baseline (one frame's poses selected by primary key); then in a re-judged
    revision of it. ``keep``: build the match there, or reuse the one already there (the
    revision is saved in a copy)."""

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="tablesight-bench-") as folder:
        path = keep if keep is not None else Path(folder) / "bench.db"
        built = "reused"
        if not path.exists():
            built = f"built in {_build_quietly(path, seconds, models, seed):.0f} s"
        if keep is not None:  # the revision goes into a copy
            shutil.copy(keep, Path(folder) / "bench.db")
            path = Path(folder) / "bench.db"
        began = time.perf_counter()
        replay = Replay(path)
        open_s = time.perf_counter() - began
        plain = connect(path, read_only=True)

        def baseline(t: float) -> float:
            began = time.perf_counter()
            rows = plain.execute(
                "SELECT model, x_in, y_in, heading_deg, sigma_in, state FROM poses WHERE frame = ?",
                (replay._frame_at(t),),
            ).fetchall()
            assert len(rows) == models
            return (time.perf_counter() - began) * 1000

        live: dict[str, list[float]] = {"seek": [], "state()": [], "state_at": [], "baseline": []}
        again: dict[str, list[float]] = {"seek": [], "state()": [], "baseline": []}
        try:
            for t in [rng.uniform(replay.start_t, replay.end_t) for _ in range(seeks)]:
                began = time.perf_counter()
                replay.seek(t)
                live["seek"].append((time.perf_counter() - began) * 1000)
                began = time.perf_counter()
                assert len(replay.state()["models"]) == models
                live["state()"].append((time.perf_counter() - began) * 1000)
                began = time.perf_counter()
                replay.match.state_at(t)
                live["state_at"].append((time.perf_counter() - began) * 1000)
                live["baseline"].append(baseline(t))
            frames, minutes = len(replay.times), replay.duration_s / 60
            # re-judged: a journal for the match, a charge declared half-way
            journal = _synthetic_journal(replay, rng)
            replay._live_inputs, replay._live_times = journal, replay._input_times(journal)
            replay.seek(replay.start_t + replay.duration_s / 2)
            ids = list(replay.session.models)
            began = time.perf_counter()
            replay.declare(ids[0], "charge", ids[1], 2)
            rejudge_s = time.perf_counter() - began
            assert replay._rejudged is not None
            checkpoints = len(replay._rejudged.checkpoints)
            for t in [rng.uniform(replay.start_t, replay.end_t) for _ in range(seeks)]:
                began = time.perf_counter()
                replay.seek(t)
                again["seek"].append((time.perf_counter() - began) * 1000)
                began = time.perf_counter()
                replay.state()
                again["state()"].append((time.perf_counter() - began) * 1000)
                again["baseline"].append(baseline(t))
        finally:
            plain.close()
            replay.close()
    return "\n".join(
        [
            f"synthetic match ({built}): {minutes:.1f} min at 30 fps, {models} models, "
            f"{frames} frames, poses only (no video); opened in {open_s * 1000:.0f} ms",
            f"{seeks} seeks at random times in the live record. seek: Replay.seek "
            "(Match.state_at, Session.restore, the journal since the snapshot); state(): "
            "what the page draws (rules.view.describe); state_at: Match.state_at alone; "
            "baseline: one frame's poses by primary key; ratio: seek / baseline",
            *_stats(list(live.items())),
            f"re-judged revision (a synthetic journal of {len(journal)} inputs: each model "
            f"seen, one movement phase, a move every 10 s; judged again in {rejudge_s:.1f} s, "
            f"{checkpoints} checkpoints); {seeks} seeks at random times",
            *_stats(list(again.items())),
        ]
    )
