"""One frame of a source: its time, its number, its picture in grey, colour and JPEG, and
the markers found in it when they were found ahead (on the thread that decoded it)."""

from __future__ import annotations

import cv2
import numpy as np

from tablesight.vision.aruco import MarkerDetections


class Frame:
    """One frame: its picture, its time in seconds and its number in the source.

    A camera's (or a Motion JPEG file's) frame keeps the JPEG picture it came as in
    ``jpeg`` and is decoded to grey only, which is all marker detection needs (a third of
    the time of a colour decode at 4K); its colour ``image`` is decoded from ``jpeg`` when
    something asks for it (a view, a snapshot), once. Recording writes ``jpeg`` as it came.

    A frame decoded on the pool comes with its markers, ``detections``, found there on the
    thread that decoded it; ``None`` when nobody looked (the observer then looks itself).
    """

    __slots__ = ("_gray", "_image", "_size", "detections", "index", "jpeg", "t")

    def __init__(
        self,
        image: np.ndarray | None,
        t: float,
        index: int,
        jpeg: np.ndarray | None = None,
        gray: np.ndarray | None = None,
        detections: MarkerDetections | None = None,
    ) -> None:
        if image is None and gray is None and jpeg is None:
            raise ValueError("Frame: needs a picture (image, gray or jpeg)")
        self.t = t
        self.index = index
        #: The picture as the camera encoded it (uint8 JPEG bytes), or ``None``.
        self.jpeg = jpeg
        #: The markers found in the picture ahead of the frame's turn, or ``None``.
        self.detections = detections
        self._image = image
        self._gray = gray
        self._size: tuple[int, int] | None = None

    @property
    def image(self) -> np.ndarray:
        """The picture in colour (BGR), decoded from ``jpeg`` the first time it is asked
        for when the frame came as grey or undecoded."""
        if self._image is None:
            decoded = None
            if self.jpeg is not None:
                decoded = cv2.imdecode(self.jpeg.reshape(-1), cv2.IMREAD_COLOR)
            if decoded is None:
                if self._gray is None:
                    raise ValueError(f"frame {self.index}: not a picture OpenCV can decode")
                decoded = cv2.cvtColor(self._gray, cv2.COLOR_GRAY2BGR)
            self._image = decoded
        return self._image

    @property
    def gray(self) -> np.ndarray:
        """The picture in grey, for detection: decoded from ``jpeg`` the first time it is
        asked for when the frame came undecoded."""
        if self._gray is None:
            if self._image is None:
                assert self.jpeg is not None
                gray = cv2.imdecode(self.jpeg.reshape(-1), cv2.IMREAD_GRAYSCALE)
                if gray is None:
                    raise ValueError(f"frame {self.index}: not a picture OpenCV can decode")
                self._gray = gray
                return gray
            image = self._image
            self._gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        return self._gray

    @property
    def decoded(self) -> bool:
        """Whether the picture has been decoded (a camera's JPEG may never need to be)."""
        return self._gray is not None or self._image is not None

    def encoded(self, quality: int = 80) -> bytes | None:
        """The picture as JPEG: the camera's own when it sent one (no decoding, no
        encoding), else encoded at ``quality``; ``None`` if OpenCV cannot encode it."""
        if self.jpeg is not None:
            return self.jpeg.tobytes()
        ok, data = cv2.imencode(".jpg", self.image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        return data.tobytes() if ok else None

    @property
    def size(self) -> tuple[int, int]:
        """Width and height in pixels: of an undecoded JPEG, read from its header (no
        decoding: the recorder and the views ask it of every frame)."""
        if self._size is None:
            shown = self._gray if self._gray is not None else self._image
            if shown is not None:
                self._size = (shown.shape[1], shown.shape[0])
            else:
                assert self.jpeg is not None
                self._size = jpeg_size(self.jpeg)
                if self._size is None:
                    raise ValueError(f"frame {self.index}: not a picture OpenCV can decode")
        return self._size

    def __repr__(self) -> str:
        return f"Frame(index={self.index}, t={self.t:.3f}, size={self.size})"


#: The JPEG markers that start a frame's header (SOF0-SOF15 but DHT, JPG and DAC), where
#: its height and width are written.
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def jpeg_size(jpeg: np.ndarray) -> tuple[int, int] | None:
    """A JPEG picture's width and height from its frame header, without decoding it;
    ``None`` when the bytes hold no such header (not a JPEG, or cut short before it).

    >>> ok, data = cv2.imencode(".jpg", np.zeros((48, 64), np.uint8))
    >>> jpeg_size(data)
    (64, 48)
    """
    data = np.ascontiguousarray(jpeg.reshape(-1)).data  # the header read in place, no copy
    if bytes(data[:2]) != b"\xff\xd8":
        return None
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        length = int.from_bytes(data[at + 2 : at + 4], "big")
        if marker in _SOF:
            height = int.from_bytes(data[at + 5 : at + 7], "big")
            width = int.from_bytes(data[at + 7 : at + 9], "big")
            return (width, height) if width and height else None
        at += 2 + length
    return None
