"""Where the camera sees the table from, frame by frame: the table pose.

``TablePose`` is the one mapping between pixels and table inches, both ways. With
camera intrinsics it is a full camera pose solved from the anchor markers' corners, and
a pixel maps to the point where its ray meets the plane at a given height (so raised
markers land where they are, without parallax). Without intrinsics it is a homography
from the anchors to the table plane, and heights are not corrected.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.table import TableSpec
from vision.aruco import MarkerDetections


class PoseError(ValueError):
    """The table pose cannot be solved from what is visible (too few anchors, say)."""


#: Anchors needed without camera intrinsics (a homography from four spread markers).
MIN_ANCHORS_HOMOGRAPHY = 4


@dataclass(frozen=True)
class TablePose:
    """The mapping between pixels and table inches, both ways, for one frame."""

    anchors_used: tuple[int, ...]
    reprojection_px: float
    camera: CameraModel | None = None
    rvec: np.ndarray | None = None
    tvec: np.ndarray | None = None
    homography: np.ndarray | None = None

    @property
    def height_corrected(self) -> bool:
        return self.camera is not None

    @classmethod
    def solve(
        cls, detections: MarkerDetections, table: TableSpec, camera: CameraModel | None = None
    ) -> TablePose:
        """The pose from whatever anchors are visible; refuses a fit it cannot trust."""
        corners = table.anchor_corners_in()
        seen = detections.by_id()
        used = tuple(sorted(i for i in corners if i in seen))
        need = 1 if camera is not None else MIN_ANCHORS_HOMOGRAPHY
        if len(used) < need:
            how = "with camera intrinsics" if camera is not None else "without camera intrinsics"
            which = ", ".join(map(str, used)) or "none"
            raise PoseError(
                f"{len(used)} of {len(corners)} anchors visible ({which}); {need} needed {how}"
            )
        obj = np.concatenate([corners[i] for i in used])
        img = np.concatenate([seen[i] for i in used])
        if camera is None:
            h, _ = cv2.findHomography(obj[:, :2], img, 0)
            if h is None or abs(np.linalg.det(h)) < 1e-12:
                raise PoseError("the anchors give a degenerate homography (all in a line?)")
            back = cv2.perspectiveTransform(obj[None, :, :2], h)[0]
            err = float(np.sqrt(np.mean(np.sum((back - img) ** 2, axis=1))))
            return cls(used, err, homography=h)
        # SQPnP finds the global optimum; IPPE can return the mirror-image pose of a
        # single small square off the image centre.
        ok, rvec, tvec = cv2.solvePnP(
            obj, img, camera.camera_matrix, camera.dist_coeffs, flags=cv2.SOLVEPNP_SQPNP
        )
        if not ok:
            raise PoseError("solvePnP found no camera pose from the anchors")
        rvec, tvec = cv2.solvePnPRefineLM(
            obj, img, camera.camera_matrix, camera.dist_coeffs, rvec, tvec
        )
        proj, _ = cv2.projectPoints(obj, rvec, tvec, camera.camera_matrix, camera.dist_coeffs)
        err = float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - img) ** 2, axis=1))))
        r, _ = cv2.Rodrigues(rvec)
        if (r @ np.array([0.0, 0.0, 1.0]))[2] > 0:
            raise PoseError("the solved camera looks at the table from below: check anchor ids")
        return cls(used, err, camera, rvec.reshape(3), tvec.reshape(3))

    def pixels_to_table(self, pixels: np.ndarray, z_in: float | np.ndarray = 0.0) -> np.ndarray:
        """Pixels (N, 2) to table points (N, 2) on the plane at height ``z_in``."""
        pixels = np.asarray(pixels, dtype=float).reshape(-1, 2)
        if self.camera is None:
            assert self.homography is not None
            inv = np.linalg.inv(self.homography)
            return np.asarray(cv2.perspectiveTransform(pixels[None], inv)[0])
        assert self.rvec is not None and self.tvec is not None
        r, _ = cv2.Rodrigues(self.rvec)
        rays = np.column_stack([self.camera.undistort(pixels), np.ones(len(pixels))])
        # In table coordinates: camera centre c = -R^T t, ray direction d = R^T ray.
        c = -r.T @ self.tvec
        d = rays @ r  # (R^T ray^T)^T
        s = (np.broadcast_to(z_in, (len(pixels),)) - c[2]) / d[:, 2]
        return np.asarray(c[None, :2] + s[:, None] * d[:, :2])

    def for_views(self, image_size: tuple[int, int]) -> dict[str, object]:
        """This mapping as plain JSON values for views to draw with (table inches at z = 0
        to pixels): a pinhole camera with OpenCV's distortion, or a homography."""
        out: dict[str, object] = {"image_size": [int(image_size[0]), int(image_size[1])]}
        if self.camera is not None and self.rvec is not None and self.tvec is not None:
            rotation, _ = cv2.Rodrigues(self.rvec)
            out["rotation"] = rotation.tolist()
            out["translation"] = self.tvec.reshape(3).tolist()
            out["camera_matrix"] = self.camera.camera_matrix.tolist()
            out["dist_coeffs"] = self.camera.dist_coeffs.reshape(-1).tolist()
        else:
            assert self.homography is not None
            out["homography"] = self.homography.tolist()
        return out

    def table_to_pixels(self, points: np.ndarray) -> np.ndarray:
        """Table points (N, 3) (or (N, 2) on the table) to distorted pixels (N, 2)."""
        points = np.asarray(points, dtype=float)
        if points.shape[-1] == 2:
            points = np.column_stack([points, np.zeros(len(points))])
        if self.camera is None:
            assert self.homography is not None
            return np.asarray(cv2.perspectiveTransform(points[None, :, :2], self.homography)[0])
        assert self.rvec is not None and self.tvec is not None
        proj, _ = cv2.projectPoints(
            points, self.rvec, self.tvec, self.camera.camera_matrix, self.camera.dist_coeffs
        )
        return np.asarray(proj.reshape(-1, 2))
