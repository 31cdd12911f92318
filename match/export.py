"""A match file's events and per-model tracks as JSON or CSV for other tools (``tablesight
export``); both formats are versioned and documented in ``docs/match-format.md``.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal

from tablesight.match.reader import Match
from tablesight.match.schema import EVENT_FIELDS, EXPORT_DIGITS, EXPORT_VERSION, FORMAT, reason
from tablesight.rules.errors import InputError, special


def export(
    match_path: Path,
    fmt: Literal["json", "csv"],
    out: Path | None = None,
    *,
    force: bool = False,
) -> list[Path]:
    """Write a match for other tools; returns the files written.

    ``json``: one document at ``out`` (default: the match file with ``.json``).
    ``csv``: ``<out>-events.csv`` and ``<out>-tracks.csv``, where ``out`` is a path
    without suffix (a ``.csv`` suffix is dropped; default: the match file without its
    suffix). Both formats are described in ``docs/match-format.md``.

    Never writes over the match, its ``-wal``/``-shm`` files or its video (also not through
    a symbolic or hard link to them); an existing output is replaced only with ``force``
    (the link itself, never what it points to); each file is written beside its target and
    renamed over it when whole. Any refusal is one :class:`InputError` line. The match is
    read without leaving ``-wal``/``-shm`` files beside it.
    """
    if fmt not in ("json", "csv"):
        raise ValueError(f"export: format must be json or csv, got {fmt!r}")
    match_path = Path(match_path)
    if fmt == "json":
        targets = [Path(out) if out is not None else match_path.with_suffix(".json")]
    else:
        stem = Path(out) if out is not None else match_path.with_suffix("")
        if stem.suffix.lower() == ".csv":
            stem = stem.with_suffix("")
        targets = [stem.with_name(stem.name + s) for s in ("-events.csv", "-tracks.csv")]
    with Match(match_path, untouched=True) as match:
        inputs = [match.path, *_beside(match.path)]
        video = match.video
        if video is not None:
            inputs.append(video)
        for target in targets:
            _check_target(target, inputs, force)
        if fmt == "json":
            with _replacing(targets[0]) as f:
                _export_json(match, f)
        else:
            with _replacing(targets[0]) as events, _replacing(targets[1]) as tracks:
                _export_csv(match, events, tracks)
    return targets


def _beside(path: Path) -> list[Path]:
    return [path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal")]


def _check_target(target: Path, inputs: list[Path], force: bool) -> None:
    """``target`` may be written: not an input (by any name), not a folder, in a folder
    that exists, new unless ``force``."""
    if target.is_dir():
        raise InputError(f"{target}: is a folder; -o names the file to write")
    with contextlib.suppress(OSError):
        mode = os.lstat(target).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):  # never replace a device or a pipe
            raise InputError(f"{target}: is {special(mode)}; -o names the file to write")
    folder = target.parent
    if not folder.is_dir():
        raise InputError(f"{target}: no such folder {folder}")
    lexical = os.path.abspath(target)
    for path in inputs:
        same = lexical == os.path.abspath(path)
        if not same and target.exists() and path.exists():
            try:
                same = os.path.samefile(target, path)
            except OSError:
                same = False
        if same:
            raise InputError(
                f"{target}: is the match's own file {path.name} (or a link to it); "
                "refusing to write over it"
            )
    if (target.exists() or target.is_symlink()) and not force:
        raise InputError(f"{target}: exists; add --force to replace it")


@contextlib.contextmanager
def _replacing(target: Path) -> Iterator[IO[str]]:
    """A new file beside ``target``, renamed over it once written (a link at ``target`` is
    replaced, not written through); removed if writing fails."""
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise InputError(f"{target}: cannot write here: {reason(exc)}") from None
    done = False
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)
        with open(fd, "w", encoding="utf-8", newline="") as f:
            yield f
        os.replace(temp, target)
        done = True
    except OSError as exc:
        raise InputError(f"{target}: cannot write it: {reason(exc)}") from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(temp)


def _export_json(match: Match, f: IO[str]) -> None:
    head = {
        "format": FORMAT,
        "version": EXPORT_VERSION,
        "meta": match.meta,
        "revisions": match.revisions(),
        "events": match.events(),
        "declarations": match.declarations(),
        "decisions": match.decisions(),
        "published": match.published(),
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


#: A text cell starting with one of these is a formula to a spreadsheet program.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A value as a CSV cell that a spreadsheet shows and never runs: a text starting like
    a formula gets a leading ``'`` (numbers, negative ones too, stay numbers)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _export_csv(match: Match, events: IO[str], tracks: IO[str]) -> None:
    writer = csv.writer(events)
    writer.writerow(EVENT_CSV_COLUMNS)
    for e in match.events():
        writer.writerow([csv_cell(e[c]) for c in EVENT_CSV_COLUMNS])
    writer = csv.writer(tracks)
    writer.writerow(TRACK_CSV_COLUMNS)
    for rows in match.pose_chunks():
        writer.writerows(
            (
                round(t, EXPORT_DIGITS),
                i,
                vf,
                csv_cell(m),
                round(x, EXPORT_DIGITS),
                round(y, EXPORT_DIGITS),
                round(h, EXPORT_DIGITS),
                round(s, EXPORT_DIGITS),
                csv_cell(state),
            )
            for t, i, vf, m, x, y, h, s, state in rows
        )
