"""A network camera as it is: FFmpeg serves the sample match as a Motion JPEG stream over
HTTP at its real rate (60 frames a second at 1080p, 30 at 4K), or as H.264 in MPEG-TS
over HTTP; GStreamer's RTSP server serves it as H.264 over RTSP; while another FFmpeg
encodes a 1080p30 picture with x264 on one thread beside it (what OBS does on a
streamer's laptop), and
``tablesight run --record`` referees it. Every frame the stream sent is taken and
recorded, and the events are those ``analyze`` gives for the same footage.

Counts and events are asserted, never times: the benchmark prints those.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tablesight.match.reader import Match

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "necromunda"
#: Seconds of the sample streamed: four moves and two violations, and it ends half a
#: second after the last model is put down, 0.4 s before the next is lifted.
SECONDS = 12.5

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg is not installed"),
]
RTSP_SERVER = Path(__file__).resolve().parents[2] / "rig" / "rtspserve.py"
#: The Python with GStreamer's bindings that runs it.
SYSTEM_PYTHON = "/usr/bin/python3"


def _has_rtsp_server() -> bool:
    probe = 'import gi; gi.require_version("GstRtspServer", "1.0")'
    try:
        return subprocess.run([SYSTEM_PYTHON, "-c", probe], capture_output=True).returncode == 0
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ffmpeg(arguments: str) -> list[str]:
    """An FFmpeg command that says only its errors (paths here hold no spaces)."""
    return ["ffmpeg", "-v", "error", *arguments.split()]


def _judged(
    events: list[dict[str, object]], leaving: frozenset[object] = frozenset()
) -> list[tuple[object, ...]]:
    """What a referee said, without when and without the number: kind, rule, models
    (leaving out the events of the models ``leaving``)."""
    return [
        (e["kind"], e.get("rule"), e.get("model"), e.get("other"))
        for e in events
        if e.get("model") not in leaving
    ]


def _measured(
    events: list[dict[str, object]], leaving: frozenset[object] = frozenset()
) -> list[float]:
    """The numbers measured, in inches (0 where an event measures none)."""
    return [
        float(e.get("measured") or 0.0)  # type: ignore[arg-type]
        for e in events
        if e.get("model") not in leaving
    ]


def _edge_models(
    live: list[dict[str, object]], expected: list[dict[str, object]]
) -> frozenset[object]:
    """The models seen hidden (carried) by one referee and not by the other."""

    def hidden(events: list[dict[str, object]]) -> set[object]:
        return {e.get("model") for e in events if e["kind"] == "model_hidden"}

    return frozenset(hidden(live) ^ hidden(expected))


@pytest.mark.parametrize(
    ("height", "fps", "codec"),
    [
        (1080, 60, "mjpeg"),
        (2160, 30, "mjpeg"),
        (1080, 30, "h264"),
        (1080, 10, "h264-live"),
        (1080, 30, "h265"),
        (1080, 30, "rtsp"),
    ],
)
def test_a_camera_beside_an_x264_encode_is_refereed_frame_for_frame(
    height: int,
    fps: int,
    codec: str,
    tmp_path: Path,
    tablesight_command: list[str],
    sample_options: Callable[[str], list[str]],
) -> None:
    """Motion JPEG at 1080p 60 fps and at 4K 30 fps (the sample scaled up: its markers
    twice the pixels, as a 4K camera at the same place sees them), and H.264 in MPEG-TS at
    1080p 30 fps, as phone apps and most IP cameras send it, over HTTP and over RTSP, and
    H.265 in MPEG-TS over HTTP, as newer IP cameras send it. ``h264-live``: the sample at
    its own 10 fps, encoded as it is sent (as a phone app encodes), whose encoder's
    look-ahead sends the first 4 s in about half a second as the stream opens: the frames
    keep the stream's own times, so the first move (krotos's, 2.1-2.6 s in) is still
    seen to settle."""
    if codec == "rtsp" and not _has_rtsp_server():
        pytest.skip(
            f"{SYSTEM_PYTHON} has no GStreamer RTSP server: apt-get install python3-gi "
            "gir1.2-gst-rtsp-server-1.0 gstreamer1.0-plugins-good gstreamer1.0-plugins-bad"
        )
    clip = tmp_path / {"mjpeg": "camera.avi", "rtsp": "camera.mp4"}.get(codec, "camera.ts")
    encode = {
        "mjpeg": "-c:v mjpeg -q:v 3",
        "h265": "-c:v libx265 -x265-params log-level=error",
    }.get(codec, "-c:v libx264")
    made = subprocess.run(
        ffmpeg(
            f"-i {SAMPLE / 'match.mp4'} -t {SECONDS} -vf fps={fps},scale=-2:{height} "
            + f"{encode} {clip}"
        ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    sent = round(fps * SECONDS)
    analyzed = subprocess.run(
        [*tablesight_command, "analyze", str(clip), *sample_options("necromunda"), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert analyzed.returncode == 0, analyzed.stderr
    expected = json.loads(analyzed.stdout)["events"]
    assert [e["kind"] for e in expected].count("violation") >= 1  # something to judge

    port = _free_port()
    if codec == "rtsp":  # the clip sent once, from its start, at its rate
        camera = subprocess.Popen(
            [SYSTEM_PYTHON, str(RTSP_SERVER), str(port), str(clip)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert camera.stdout is not None
        assert camera.stdout.readline().startswith("serving rtsp://")
        stream = f"rtsp://127.0.0.1:{port}/video"
    else:
        sent_as = "-c:v libx264" if codec == "h264-live" else "-c copy"
        camera = subprocess.Popen(
            ffmpeg(
                f"-re -i {clip} {sent_as} -f {'mpjpeg' if codec == 'mjpeg' else 'mpegts'} "
                f"-listen 1 http://127.0.0.1:{port}/video"
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        stream = f"http://127.0.0.1:{port}/video"
    obs = subprocess.Popen(  # the streamer's encoder, on one thread
        ffmpeg(
            f"-f lavfi -i testsrc2=size=1920x1080:rate=30 -t {SECONDS + 30} "
            "-c:v libx264 -threads 1 -preset veryfast -f null -"
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    record = tmp_path / "live.db"
    run = subprocess.Popen(
        [
            *tablesight_command,
            "run",
            "--source",
            stream,
            *sample_options("necromunda"),
            "--record",
            str(record),
            "--port",
            "0",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        camera.wait(timeout=SECONDS + 60)  # the stream sent every frame at its rate
        time.sleep(3.0)  # the last frames judged and recorded
    finally:
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
        obs.kill()
        obs.wait()
        if camera.poll() is None:
            camera.kill()
        camera.wait()
        if camera.stdout is not None:
            camera.stdout.close()
    assert run.returncode == 0, err[-2000:]
    with Match(record) as match:
        taken = len(match.frames())
        live = [e for e in match.events() if e["kind"] not in ("camera_lost", "camera_back")]
    print(f"\n{taken} of {sent} frames taken; {len(live)} events")
    # every frame of a Motion JPEG camera (passed through as it came), and of the stream
    # whose first 4 s come in a burst as it opens (frames ahead of their own time wait for
    # the referee: 115 of 125 were taken when they replaced each other); an H.264 stream
    # at 30 fps may lose a few to the machine's load
    whole = codec in ("mjpeg", "h264-live")
    assert taken >= (0.99 if whole else 0.95) * sent, (taken, sent)
    if codec == "mjpeg":
        # what was judged: the same events as analyze's, in the same order, measured alike
        # to 0.01 in (a frame or two the stream dropped may move a settled position by a
        # few thousandths, which is enough to round 3.505 either way). A Motion JPEG
        # camera's frames are timed as they arrive, and one carry in the sample is 0.1 s
        # from the 1.0 s hold (varg unseen 1.1 s, expected-events.json): on a loaded
        # machine it may be seen as a slide, which the referee judges as one; at most that
        # one model's own events may differ, every other event is as analyze's
        edge = _edge_models(live, expected)
        assert len(edge) <= 1, edge
        assert _judged(live, edge) == _judged(expected, edge)
        assert _measured(live, edge) == pytest.approx(_measured(expected, edge), abs=0.01)
    else:
        # an H.264 stream's frames arrive at their own times and a few are skipped, so a
        # case on the edge (unseen for 0.98 s or 1.01 s, 0.01 in inside a zone) may fall
        # either way; every move is the same, measured alike to 0.05 in
        def moves(events: list[dict[str, object]]) -> list[tuple[object, float]]:
            return [
                (e["model"], float(e["measured"]))  # type: ignore[arg-type]
                for e in events
                if e["kind"] == "model_moved"
            ]

        got, want = moves(live), moves(expected)
        assert [m for m, _ in got] == [m for m, _ in want]
        assert [d for _, d in got] == pytest.approx([d for _, d in want], abs=0.05)
