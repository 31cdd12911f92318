"""The hands of rendered footage (:mod:`tablesight.rig.footage`): a skin-toned palm with fingers,
a thumb and a forearm reaching to the picture's border, drawn in image space.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np

from tablesight.rig.synth import PinholeCamera

#: Width of a palm across, inches (fingers and thumb come on top of it).
PALM_IN = 3.5
#: Width of a forearm at the wrist, inches.
FOREARM_IN = 2.5

SKIN_BGR = (118.0, 150.0, 205.0)

Side = Literal["left", "right", "top", "bottom"]
_OUTWARD: dict[str, tuple[float, float]] = {
    "left": (-1.0, 0.0),
    "right": (1.0, 0.0),
    "top": (0.0, -1.0),
    "bottom": (0.0, 1.0),
}


@dataclass(frozen=True)
class _Hand:
    """One hand as drawn in one picture: palm centre (px), the local table-to-pixel
    Jacobian there (px per inch, 2x2 row-major), palm half-width (in), arm border."""

    centre_px: tuple[float, float]
    jacobian: tuple[float, float, float, float]
    half_in: float
    side: str


def _jacobian(camera: PinholeCamera, point: Sequence[float] | np.ndarray) -> np.ndarray:
    """d(pixel)/d(table x, y) at a point (central differences over half an inch)."""
    p = np.asarray(point, dtype=float)
    h = 0.25
    pts = p + np.array([[h, 0, 0], [-h, 0, 0], [0, h, 0], [0, -h, 0]])
    px = camera.project(pts)
    return np.column_stack([(px[0] - px[1]) / (2 * h), (px[2] - px[3]) / (2 * h)])


def _ellipse(centre: Sequence[float], a: float, b: float, angle: float, n: int = 28) -> np.ndarray:
    """(n, 2) points of an ellipse: semi-axes ``a`` and ``b``, turned ``angle`` radians."""
    s = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    ca, sa = math.cos(angle), math.sin(angle)
    u, v = a * np.cos(s), b * np.sin(s)
    return np.column_stack([centre[0] + ca * u - sa * v, centre[1] + sa * u + ca * v])


def _hand_outline(half_in: float) -> list[np.ndarray]:
    """Palm, four fingers and thumb in inches, in the hand's frame (u toward the
    fingertips, v across), for a palm ``half_in`` wide on each side."""
    k = half_in / (PALM_IN / 2)
    shapes = [_ellipse((0.0, 0.0), 1.1 * half_in, half_in, 0.0)]
    for v, length in ((-1.2, 1.05), (-0.4, 1.4), (0.4, 1.3), (1.15, 1.15)):
        shapes.append(_ellipse(((1.35 + length) * k, v * k), length * k, 0.34 * k, 0.0))
    shapes.append(_ellipse((0.45 * k, 1.75 * k), 1.15 * k, 0.4 * k, math.radians(55)))
    return shapes


class _HandPainter:
    """Draws hands over a picture: opaque skin, shaded towards the edges."""

    def __init__(self, camera: PinholeCamera, seed: int) -> None:
        rng = np.random.default_rng([seed, 0x4A4D])
        self.height, self.width = camera.height_px, camera.width_px
        self.grain = rng.normal(0.0, 2.5, (self.height, self.width)).astype(np.float32)

    def draw(self, img: np.ndarray, hand: _Hand, camera: PinholeCamera) -> None:
        jac = np.array(hand.jacobian, dtype=float).reshape(2, 2)
        out = np.array(_OUTWARD[hand.side])
        toward_arm = np.linalg.solve(jac, out)
        f = -toward_arm / np.linalg.norm(toward_arm)  # toward the fingertips, table plane
        frame = np.column_stack([f, [-f[1], f[0]]])  # hand frame (u, v) -> table offsets
        centre = np.array(hand.centre_px)
        polys = [centre + (frame @ s.T).T @ jac.T for s in _hand_outline(hand.half_in)]
        wrist = centre + jac @ (frame @ [-0.8 * hand.half_in, 0.0])
        half_w = float(np.linalg.norm(jac @ (frame @ [0.0, FOREARM_IN / 2])))
        half_w *= hand.half_in / (PALM_IN / 2)
        end = _border_point(camera, wrist, out)
        if float((end - wrist) @ out) > 0:
            growth = self._growth(camera, end, jac)
            perp = np.array([-out[1], out[0]])
            polys.append(
                np.array(
                    [
                        wrist + perp * half_w,
                        end + perp * half_w * growth,
                        end - perp * half_w * growth,
                        wrist - perp * half_w,
                    ]
                )
            )
        self._paint(img, polys, half_w)

    def _growth(self, camera: PinholeCamera, end: np.ndarray, jac: np.ndarray) -> float:
        """How much wider the forearm looks at the border than at the wrist (perspective)."""
        edge = np.clip(end, [0, 0], [self.width - 1, self.height - 1])
        _, rays = camera.rays(edge[None])
        if rays[0, 2] >= -1e-6:
            return 1.6  # that border sees over the horizon: the arm comes from nearby
        at = camera.table_points(edge[None])[0]
        there = _jacobian(camera, (at[0], at[1], 0.0))
        ratio = math.sqrt(abs(np.linalg.det(there)) / max(abs(np.linalg.det(jac)), 1e-9))
        return min(max(ratio, 0.7), 2.5)

    def _paint(self, img: np.ndarray, polys: list[np.ndarray], half_w: float) -> None:
        every = np.concatenate(polys)
        x0 = max(0, math.floor(every[:, 0].min()) - 2)
        y0 = max(0, math.floor(every[:, 1].min()) - 2)
        x1 = min(self.width, math.ceil(every[:, 0].max()) + 3)
        y1 = min(self.height, math.ceil(every[:, 1].max()) + 3)
        if x1 <= x0 or y1 <= y0:
            return
        mask = np.zeros((y1 - y0, x1 - x0), dtype=np.uint8)
        shape = np.zeros_like(mask)
        for poly in polys:
            shape[:] = 0
            pts = np.round((poly - [x0, y0]) * 16).astype(np.int32)
            cv2.fillPoly(shape, [pts], 255, cv2.LINE_AA, shift=4)
            cv2.max(mask, shape, dst=mask)
        inside = (mask > 127).astype(np.uint8)
        depth = cv2.distanceTransform(inside, cv2.DIST_L2, 3)
        shade = 0.66 + 0.34 * np.sqrt(np.clip(depth / max(0.7 * half_w, 1.0), 0.0, 1.0))
        ramp = np.linspace(0.96, 1.04, x1 - x0, dtype=np.float32)[None, :]
        skin = np.asarray(SKIN_BGR, dtype=np.float32)
        colour = (shade * ramp)[..., None] * skin + self.grain[y0:y1, x0:x1, None]
        alpha = (mask.astype(np.float32) / 255.0)[..., None]
        region = img[y0:y1, x0:x1].astype(np.float32)
        img[y0:y1, x0:x1] = np.clip(region + alpha * (colour - region), 0, 255).astype(np.uint8)


def _border_point(camera: PinholeCamera, p: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Where a line from ``p`` in the direction ``out`` leaves the picture, and a margin on."""
    w, h = camera.width_px, camera.height_px
    margin = 0.1 * (w + h)
    x = {-1.0: -margin, 1.0: w - 1 + margin}.get(float(out[0]), float(p[0]))
    y = {-1.0: -margin, 1.0: h - 1 + margin}.get(float(out[1]), float(p[1]))
    return np.array([x, y])


def _smooth(s: float) -> float:
    s = min(max(s, 0.0), 1.0)
    return s * s * (3 - 2 * s)
