"""A match file's events and per-model tracks as JSON or CSV for other tools (``tablesight
export``); both formats are versioned and documented in ``docs/match-format.md``.
"""

from __future__ import annotations

import csv
import json
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from vision.match.reader import Match
from vision.match.schema import EVENT_FIELDS, EXPORT_DIGITS, EXPORT_VERSION, FORMAT

if TYPE_CHECKING:
    pass


def export(match_path: Path, fmt: Literal["json", "csv"], out: Path | None = None) -> list[Path]:
    """Write a match for other tools; returns the files written.

    ``json``: one document at ``out`` (default: the match file with ``.json``).
    ``csv``: ``<out>-events.csv`` and ``<out>-tracks.csv``, where ``out`` is a path
    without suffix (a ``.csv`` suffix is dropped; default: the match file without its
    suffix). Both formats are described in ``docs/match-format.md``.
    """
    with Match(match_path) as match:
        if fmt == "json":
            target = out if out is not None else match.path.with_suffix(".json")
            _export_json(match, target)
            return [target]
        if fmt == "csv":
            stem = out if out is not None else match.path.with_suffix("")
            if stem.suffix.lower() == ".csv":
                stem = stem.with_suffix("")
            events = stem.with_name(stem.name + "-events.csv")
            tracks = stem.with_name(stem.name + "-tracks.csv")
            _export_csv(match, events, tracks)
            return [events, tracks]
    raise ValueError(f"export: format must be json or csv, got {fmt!r}")


def _export_json(match: Match, target: Path) -> None:
    head = {
        "format": FORMAT,
        "version": EXPORT_VERSION,
        "meta": match.meta,
        "revisions": match.revisions(),
        "events": match.events(),
        "declarations": match.declarations(),
        "decisions": match.decisions(),
    }
    models = match.models()
    # One pass over the poses, each model's rows into a file of its own, then joined.
    with tempfile.TemporaryDirectory(prefix="tablesight-export-") as folder:
        parts = {
            m: (Path(folder) / f"{k}.json").open("w", encoding="utf-8")
            for k, m in enumerate(models)
        }
        started: set[str] = set()
        try:
            for rows in match.pose_chunks():
                by_model: dict[str, list[tuple[Any, ...]]] = {}
                for t, _, _, model, x, y, heading, sigma, state in rows:
                    by_model.setdefault(model, []).append(
                        (
                            round(t, EXPORT_DIGITS),
                            round(x, EXPORT_DIGITS),
                            round(y, EXPORT_DIGITS),
                            round(heading, EXPORT_DIGITS),
                            round(sigma, EXPORT_DIGITS),
                            state,
                        )
                    )
                for model, points in by_model.items():
                    if model in started:
                        parts[model].write(", ")
                    started.add(model)
                    parts[model].write(json.dumps(points)[1:-1])
        finally:
            for part in parts.values():
                part.close()
        with target.open("w", encoding="utf-8") as f:
            f.write(json.dumps(head)[:-1] + ', "tracks": {')
            for k, model in enumerate(models):
                f.write(("," if k else "") + "\n" + json.dumps(model) + ": [")
                with (Path(folder) / f"{k}.json").open(encoding="utf-8") as part:
                    shutil.copyfileobj(part, f)
                f.write("]")
            f.write("\n}}\n")


#: The columns of ``<out>-events.csv`` and ``<out>-tracks.csv`` (export version 1).
EVENT_CSV_COLUMNS = ("revision", "id", *(n for n in EVENT_FIELDS if n != "id"))
TRACK_CSV_COLUMNS = (
    "t",
    "frame",
    "video_frame",
    "model",
    "x_in",
    "y_in",
    "heading_deg",
    "sigma_in",
    "state",
)


def _export_csv(match: Match, events: Path, tracks: Path) -> None:
    with events.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(EVENT_CSV_COLUMNS)
        for e in match.events():
            writer.writerow([e[c] for c in EVENT_CSV_COLUMNS])
    with tracks.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(TRACK_CSV_COLUMNS)
        for rows in match.pose_chunks():
            writer.writerows(
                (
                    round(t, EXPORT_DIGITS),
                    i,
                    vf,
                    m,
                    round(x, EXPORT_DIGITS),
                    round(y, EXPORT_DIGITS),
                    round(h, EXPORT_DIGITS),
                    round(s, EXPORT_DIGITS),
                    state,
                )
                for t, i, vf, m, x, y, h, s, state in rows
            )
