"""An RTSP camera for the tests: GStreamer's RTSP server (gst-rtsp-server, as IP cameras
and phone apps built on it serve) sending an H.264 file's frames at their own times, once,
as ``rtsp://127.0.0.1:PORT/video``.

It runs under the system's Python, which has GStreamer's bindings (Debian:
``python3-gi gir1.2-gst-rtsp-server-1.0 gstreamer1.0-plugins-good
gstreamer1.0-plugins-bad``), not TableSight's environment, and imports nothing of
TableSight::

    /usr/bin/python3 rig/rtspserve.py PORT CLIP.mp4

It prints ``serving rtsp://127.0.0.1:PORT/video`` once it listens, sends the clip to the
first client that plays it, and ends when the clip has been sent (as ``ffmpeg -listen 1``
serves one client over HTTP): a client that connects again once the clip has ended finds
no stream there, as with a camera switched off, not the clip from its start again.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    import gi

    gi.require_version("Gst", "1.0")
    gi.require_version("GstRtspServer", "1.0")
    from gi.repository import GLib, Gst, GstRtspServer

    if len(argv) != 2 or not argv[0].isdigit():
        print("usage: rtspserve.py PORT CLIP.mp4", file=sys.stderr)
        return 2
    port, clip = argv
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(port)
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(
        f'( filesrc location="{clip}" ! qtdemux ! h264parse ! '
        "rtph264pay name=pay0 pt=96 config-interval=1 )"
    )
    factory.set_shared(False)
    factory.set_eos_shutdown(True)
    loop = GLib.MainLoop()

    def gone() -> bool:  # a client that comes again finds no camera (as one unplugged)
        server.get_mount_points().remove_factory("/video")
        GLib.timeout_add(1000, loop.quit)  # the last packets sent, a second on: done
        return False

    def configured(_factory: object, media: GstRtspServer.RTSPMedia) -> None:
        def at_end(_pad: Gst.Pad, info: Gst.PadProbeInfo) -> Gst.PadProbeReturn:
            if info.get_event().type == Gst.EventType.EOS:  # sent once
                GLib.idle_add(gone)
            return Gst.PadProbeReturn.OK

        pay = media.get_element().get_by_name("pay0")
        pay.get_static_pad("sink").add_probe(Gst.PadProbeType.EVENT_DOWNSTREAM, at_end)

    factory.connect("media-configure", configured)
    server.get_mount_points().add_factory("/video", factory)
    if server.attach(None) == 0:
        print(f"rtspserve.py: cannot listen on 127.0.0.1:{port}", file=sys.stderr)
        return 1
    print(f"serving rtsp://127.0.0.1:{port}/video", flush=True)
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
