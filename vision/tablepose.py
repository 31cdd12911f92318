"""Where the camera sees the table from, frame by frame: the table pose.

``TablePose`` is the one mapping between pixels and table inches, both ways. With
camera intrinsics it is a full camera pose solved from the anchor markers' corners, and
a pixel maps to the point where its ray meets the plane at a given height (so raised
markers land where they are, without parallax). Without intrinsics it is a homography
from the anchors to the table plane, and heights are not corrected.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import cv2
import numpy as np

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.table import MM_PER_IN, Anchor, TableSpec
from tablesight.vision.aruco import MarkerDetections


class PoseError(ValueError):
    """The table pose cannot be solved from what is visible (too few anchors, say)."""


#: Anchors needed without camera intrinsics (a homography from four spread markers).
MIN_ANCHORS_HOMOGRAPHY = 4

#: An anchor whose centre, mapped onto the table by the pose of the other anchors, lies
#: farther than this (inches) from where ``table.toml`` puts it disagrees with them: it
#: was moved, or its place was mistyped. 0.1 in (2.5 mm) is ten times the spread of an
#: anchor's centre as a 1080p webcam sees it over a 44 x 30 in table (about 0.01 in), and
#: an anchor off by that much moves the models near it by up to half of it.
ANCHOR_OFF_IN = 0.1

#: A pose whose anchors' corners lie farther than this (inches on the table, root mean
#: square, less the even shrink the detector gives every marker) from where the pose
#: projects them is not trusted: the anchors as table.toml describes them do not fit what
#: the camera sees. A sound pose of 40 mm anchors at 1080p fits to about 0.01 in; three
#: anchors one of which is 0.3 in from its stated place fit to 0.05 in.
MAX_CORNER_ERROR_IN = 0.04
#: The same without camera intrinsics, where the lens's distortion is part of the error.
MAX_CORNER_ERROR_IN_FLAT = 0.15
#: The limits above, in pixels at the anchors, for a camera that resolves less than they
#: assume (a 360p picture of a 44 in table puts about 10 px in an inch, so 0.04 in is 0.4 px
#: and a sound pose's noise alone would pass it): each limit is the larger of the two. A
#: corner found 0.3 px off is ordinary; a wrongly described anchor is off by tens of
#: pixels (turned: 47 px; upside down: 27 px; 1 in off at 1080p: 10 px).
ANCHOR_OFF_PX = 2.5
MAX_CORNER_ERROR_PX = 1.5
#: Leaving one anchor out must fit the others at least this much better than leaving out
#: any other for it to be the one that disagrees.
CLEARLY = 0.7

#: The quarter-turns an anchor may be stuck down at, against its stated heading.
QUARTER_TURNS = (0, 90, 180, 270)
#: Corner order after each quarter-turn: each corner moves one place on.
_ROLLED = (np.arange(4)[None, :] - np.arange(4)[:, None]) % 4
_TURN_WORDS = {90: "90 deg counterclockwise", 180: "180 deg", 270: "90 deg clockwise"}


def diagonal_centres(quads: np.ndarray) -> np.ndarray:
    """Where each quadrilateral's diagonals cross, (N, 4, 2) -> (N, 2): a square's centre
    seen through any perspective, whichever corner is taken as first."""
    quads = np.asarray(quads, dtype=float)
    p0, p1, p2, p3 = quads[:, 0], quads[:, 1], quads[:, 2], quads[:, 3]
    d1, d2, w = p2 - p0, p3 - p1, p1 - p0
    cross = d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]
    cross = np.where(np.abs(cross) < 1e-12, 1e-12, cross)
    s = (w[:, 0] * d2[:, 1] - w[:, 1] * d2[:, 0]) / cross
    return np.asarray(p0 + s[:, None] * d1)


@dataclass(frozen=True)
class TablePose:
    """The mapping between pixels and table inches, both ways, for one frame, and how far
    it can be trusted."""

    anchors_used: tuple[int, ...]
    reprojection_px: float
    camera: CameraModel | None = None
    rvec: np.ndarray | None = None
    tvec: np.ndarray | None = None
    homography: np.ndarray | None = None
    #: The reprojection error as inches on the table: each corner's error in pixels over
    #: its anchor's pixels per inch (root mean square).
    reprojection_in: float = 0.0
    #: The anchors' centres, mapped onto the table by this pose, against table.toml: the
    #: farthest, in inches.
    anchor_error_in: float = 0.0
    #: Anchors stuck down turned from their stated heading: (id, degrees counterclockwise).
    turned: tuple[tuple[int, int], ...] = ()
    #: Anchors that disagree with the others, left out: (id, inches from table.toml).
    left_out: tuple[tuple[int, float], ...] = ()
    #: One line per anchor table.toml describes wrong that the pose made up for.
    warnings: tuple[str, ...] = ()
    #: Why this pose is not trusted; empty when it is.
    problem: str = ""
    #: How far outward (negative: inward) the detector put the corners of the anchors
    #: used, along the lines from their centres, in pixels: the even shrink it gives
    #: every marker (about 0.8 px in), which moves no centre but makes every size short.
    corner_bias_px: float = 0.0

    @property
    def height_corrected(self) -> bool:
        return self.camera is not None

    @property
    def healthy(self) -> bool:
        return not self.problem

    @classmethod
    def solve(
        cls, detections: MarkerDetections, table: TableSpec, camera: CameraModel | None = None
    ) -> TablePose:
        """The pose from whatever anchors are visible; refuses a fit it cannot trust.

        Each anchor's printed rotation is found from the picture (its corner order is
        chosen against a first fit of the anchors' centres, which no rotation changes);
        an anchor that disagrees with the others is left out when enough remain, and a
        pose whose anchors still disagree is returned with its ``problem`` said.
        """
        spec = {a.id: a for a in table.anchors}
        seen = detections.by_id()
        visible = tuple(sorted(i for i in spec if i in seen))
        need = 1 if camera is not None else MIN_ANCHORS_HOMOGRAPHY
        if len(visible) < need:
            how = "with camera intrinsics" if camera is not None else "without camera intrinsics"
            which = ", ".join(map(str, visible)) or "none"
            raise PoseError(
                f"{len(visible)} of {len(spec)} anchors visible ({which}); {need} needed {how}"
            )
        return _Solver(spec, seen, visible, camera).solve(need)

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


class _Solver:
    """One frame's anchors: their rotations found, the ones that disagree left out."""

    def __init__(
        self,
        spec: dict[int, Anchor],
        seen: dict[int, np.ndarray],
        visible: tuple[int, ...],
        camera: CameraModel | None,
    ) -> None:
        self.spec = spec
        self.camera = camera
        self.visible = visible
        self.px = np.stack([np.asarray(seen[i], dtype=float).reshape(4, 2) for i in visible])
        # the image plane without the lens's distortion (pixels without intrinsics)
        plane = camera.undistort(self.px.reshape(-1, 2)) if camera is not None else self.px
        self.plane = np.asarray(plane, dtype=float).reshape(-1, 4, 2)
        self.row = {i: k for k, i in enumerate(visible)}
        self.centre_in = np.array([[spec[i].x_in, spec[i].y_in] for i in visible])
        side_px = np.linalg.norm(self.px - np.roll(self.px, -1, axis=1), axis=2).mean(axis=1)
        side_in = np.array([spec[i].size_mm / MM_PER_IN for i in visible])
        self.px_per_in = side_px / side_in
        # every anchor's corners (n, 4 turns, 4, 3) as printed when stuck down a quarter-turn
        # more counterclockwise each (a quarter-turn moves each corner one place on)
        a = np.radians([spec[i].heading for i in visible])
        half = side_in / 2
        fwd = np.column_stack([np.cos(a), np.sin(a)]) * half[:, None]
        left = np.column_stack([-np.sin(a), np.cos(a)]) * half[:, None]
        stated = self.centre_in[:, None] + np.stack(
            [fwd + left, fwd - left, -fwd - left, -fwd + left], axis=1
        )
        self.printed = np.zeros((len(visible), 4, 4, 3))
        self.printed[..., :2] = stated[:, _ROLLED]

    def corners(self, i: int, turn: int) -> np.ndarray:
        """Anchor ``i``'s corners (4, 3) as printed when it is stuck down ``turn`` degrees
        counterclockwise from its stated heading."""
        return np.asarray(self.printed[self.row[i], QUARTER_TURNS.index(turn)])

    def solve(self, need: int) -> TablePose:
        turns = self.turns(self.rough())
        used = list(self.visible)
        left_out: list[tuple[int, float]] = []
        pose = self.fit(used, turns)
        inch_px = float(np.median(self.px_per_in))
        limit = MAX_CORNER_ERROR_IN if self.camera is not None else MAX_CORNER_ERROR_IN_FLAT
        limit = max(limit, MAX_CORNER_ERROR_PX / inch_px)
        off_in = max(ANCHOR_OFF_IN, ANCHOR_OFF_PX / inch_px)
        problem = ""
        while True:
            errors = self.centre_errors(pose, used)
            worst = max(errors, key=lambda i: errors[i])
            if errors[worst] <= off_in and self.corner_error_in(pose, used, turns) <= limit:
                break
            if self.camera is None:  # a homography cannot tell a moved anchor from the lens
                problem = (
                    f"anchor {worst} is {errors[worst]:.2f} in from where table.toml puts it "
                    "by the pose of all the anchors, and without camera intrinsics a moved "
                    "anchor cannot be told from the lens's distortion: give camera.toml, or "
                    "check the anchors' x_in, y_in and size_mm in table.toml"
                )
                break
            ranked = self.leave_one_out(used, turns)
            clear = len(ranked) > 0 and (
                ranked[0][2] > off_in
                and ranked[0][3] <= off_in
                and ranked[0][0] <= limit
                and (len(ranked) == 1 or ranked[0][0] <= CLEARLY * ranked[1][0])
            )
            if not clear:
                problem = (
                    f"the anchors disagree (anchor {worst} is {errors[worst]:.2f} in from where "
                    f"table.toml puts it by the pose of all {len(used)}) and no one of them is "
                    "alone in disagreeing: check the anchors' x_in, y_in and size_mm in "
                    "table.toml"
                )
                break
            _, j, off, _, without = ranked[0]
            if len(used) - 1 < max(need, 3) or len(used) - 1 <= len(left_out) + 1:
                problem = (
                    f"anchor {j} is {off:.1f} in from where table.toml puts it by the other "
                    f"anchors' pose, but {len(used)} anchors are too few to leave one out "
                    f"(three must remain, more than are left out)"
                )
                break
            used.remove(j)
            left_out.append((j, off))
            pose = without
        return self.health(pose, used, turns, errors, left_out, problem)

    def rough(self) -> np.ndarray | None:
        """A first mapping from the table plane to the image plane that no anchor's
        rotation changes: from the anchors' centres (where their diagonals cross), or,
        with fewer than four spread anchors, from the largest one turned the way that
        best places the others' centres. None for a lone anchor: nothing to check it by."""
        n = len(self.visible)
        seen_centres = diagonal_centres(self.plane)
        if n >= 4:
            d = self.centre_in - self.centre_in.mean(axis=0)
            (sxx, sxy), (_, syy) = d.T @ d / n
            thinnest = (sxx + syy) / 2 - np.hypot((sxx - syy) / 2, sxy)
            if thinnest > 1.0:  # not all along one line (variance across it, square inches)
                h, _ = cv2.findHomography(self.centre_in, seen_centres, 0)
                if h is not None and abs(np.linalg.det(h)) > 1e-12:
                    return np.asarray(h)
        if n == 1:
            return None
        ref = int(np.argmax(self.px_per_in))
        others = [k for k in range(n) if k != ref]
        best: tuple[float, np.ndarray] | None = None
        for turn in QUARTER_TURNS:
            src = self.corners(self.visible[ref], turn)[:, :2].astype(np.float32)
            h = cv2.getPerspectiveTransform(src, self.plane[ref].astype(np.float32))
            guess = cv2.perspectiveTransform(self.centre_in[None, others], h)[0]
            cost = float(np.sum((guess - seen_centres[others]) ** 2))
            if best is None or cost < best[0]:
                best = (cost, np.asarray(h))
        assert best is not None
        return best[1]

    def turns(self, h: np.ndarray | None) -> dict[int, int]:
        """Each anchor's quarter-turn from its stated heading: the corner order whose shape,
        as ``h`` maps it, best matches the corners seen (both taken about their centres, so
        an error in where ``h`` puts the anchor does not matter, only its turn)."""
        if h is None:
            return {i: 0 for i in self.visible}
        shapes = self.printed[..., :2].reshape(1, -1, 2)
        mapped = cv2.perspectiveTransform(shapes, h).reshape(-1, 4, 4, 2)
        mapped -= mapped.mean(axis=2, keepdims=True)
        seen = self.plane - self.plane.mean(axis=1, keepdims=True)
        cost = np.sum((mapped - seen[:, None]) ** 2, axis=(2, 3))
        best = np.argmin(cost, axis=1)
        return {i: QUARTER_TURNS[int(k)] for i, k in zip(self.visible, best, strict=True)}

    def points(self, ids: list[int], turns: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """These anchors' corners: on the table as printed (N, 3), and as seen (N, 2)."""
        rows = [self.row[i] for i in ids]
        obj = self.printed[rows, [QUARTER_TURNS.index(turns[i]) for i in ids]].reshape(-1, 3)
        return obj, self.px[rows].reshape(-1, 2)

    def fit(self, ids: list[int], turns: dict[int, int]) -> TablePose:
        """The pose from these anchors' corners alone (errors not yet worked out)."""
        obj, img = self.points(ids, turns)
        camera = self.camera
        if camera is None:
            h, _ = cv2.findHomography(obj[:, :2], img, 0)
            if h is None or abs(np.linalg.det(h)) < 1e-12:
                raise PoseError("the anchors give a degenerate homography (all in a line?)")
            return TablePose(tuple(sorted(ids)), 0.0, homography=h)
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
        if len(ids) < 4:
            # The detector finds every corner about 0.8 px inside the printed square. Four
            # anchors round the table cancel that out; fewer cannot (small far anchors look
            # farther, and the pose tilts), so the corners are put back out by the shrink
            # the first fit shows, and the fit refined once more.
            proj, _ = cv2.projectPoints(obj, rvec, tvec, camera.camera_matrix, camera.dist_coeffs)
            seen = img.reshape(-1, 4, 2)
            out = seen - seen.mean(axis=1, keepdims=True)
            out /= np.linalg.norm(out, axis=2, keepdims=True)
            shrink = float(np.mean(np.sum((proj.reshape(-1, 4, 2) - seen) * out, axis=2)))
            img = (seen + shrink * out).reshape(-1, 2)
            rvec, tvec = cv2.solvePnPRefineLM(
                obj, img, camera.camera_matrix, camera.dist_coeffs, rvec, tvec
            )
        r, _ = cv2.Rodrigues(rvec)
        if (r @ np.array([0.0, 0.0, 1.0]))[2] > 0:
            raise PoseError("the solved camera looks at the table from below: check anchor ids")
        return TablePose(tuple(sorted(ids)), 0.0, camera, rvec.reshape(3), tvec.reshape(3))

    def centre_errors(self, pose: TablePose, ids: list[int]) -> dict[int, float]:
        """How far (inches) each anchor's centre, as ``pose`` maps it onto the table, is
        from where table.toml puts it."""
        rows = [self.row[i] for i in ids]
        on_table = pose.pixels_to_table(self.px[rows].reshape(-1, 2)).reshape(-1, 4, 2)
        off = np.linalg.norm(diagonal_centres(on_table) - self.centre_in[rows], axis=1)
        return {i: float(d) for i, d in zip(ids, off, strict=True)}

    def leave_one_out(
        self, used: list[int], turns: dict[int, int]
    ) -> list[tuple[float, int, float, float, TablePose]]:
        """Each anchor left out in turn, best first: how well the others' corners fit their
        own pose (inches), the one left out, how far it is from table.toml by that pose,
        how far the farthest of the others is, and the pose."""
        if len(used) < 3:
            return []
        out = []
        for j in used:
            rest = [i for i in used if i != j]
            try:
                pose = self.fit(rest, turns)
            except PoseError:
                continue
            errors = self.centre_errors(pose, used)
            spread = max(errors[i] for i in rest)
            out.append((self.corner_error_in(pose, rest, turns), j, errors[j], spread, pose))
        return sorted(out, key=lambda c: c[0])

    def residuals(self, pose: TablePose, ids: list[int], turns: dict[int, int]) -> np.ndarray:
        """The corners as seen less as ``pose`` projects them, (N, 4, 2) pixels."""
        obj, img = self.points(ids, turns)
        return np.asarray(img - pose.table_to_pixels(obj)).reshape(-1, 4, 2)

    def corner_error_in(self, pose: TablePose, ids: list[int], turns: dict[int, int]) -> float:
        """How well the corners fit ``pose``: their errors as inches on the table (root
        mean square), less the even shrink the detector gives every marker (the corners
        found about 0.8 px inside the printed square, which moves no centre)."""
        rows = [self.row[i] for i in ids]
        res = self.residuals(pose, ids, turns)
        out = self.outward(ids)
        shrink = np.sum(res * out, axis=2).mean(axis=1)
        res = res - shrink[:, None, None] * out
        each = np.linalg.norm(res, axis=2) / self.px_per_in[rows][:, None]
        return float(np.sqrt(np.mean(each**2)))

    def outward(self, ids: list[int]) -> np.ndarray:
        """Unit vectors (N, 4, 2) from each anchor's centre out through its corners as seen."""
        seen = self.px[[self.row[i] for i in ids]]
        out = seen - seen.mean(axis=1, keepdims=True)
        return np.asarray(out / np.linalg.norm(out, axis=2, keepdims=True))

    def health(
        self,
        pose: TablePose,
        used: list[int],
        turns: dict[int, int],
        errors: dict[int, float],
        left_out: list[tuple[int, float]],
        problem: str,
    ) -> TablePose:
        """``pose`` with its errors, the anchors it made up for, and its problem if any."""
        res = self.residuals(pose, used, turns)
        each = np.linalg.norm(res, axis=2)
        scale = self.px_per_in[[self.row[i] for i in used]]
        reprojection_in = float(np.sqrt(np.mean((each / scale[:, None]) ** 2)))
        turned = tuple((i, turns[i]) for i in self.visible if turns[i] and i in used)
        warnings = tuple(
            f"anchor {i} is turned {_TURN_WORDS[t]} from table.toml's heading "
            f"{self.spec[i].heading:g} (it lies at heading {(self.spec[i].heading + t) % 360:g})"
            for i, t in turned
        ) + tuple(
            f"anchor {i} is {off:.1f} in from where table.toml puts it; left out"
            for i, off in left_out
        )
        return dataclasses.replace(
            pose,
            reprojection_px=float(np.sqrt(np.mean(each**2))),
            reprojection_in=reprojection_in,
            anchor_error_in=max(errors[i] for i in used),
            turned=turned,
            left_out=tuple(left_out),
            warnings=warnings,
            problem=problem,
            corner_bias_px=float(np.sum(res * self.outward(used), axis=2).mean()),
        )
