"""What ``tablesight detect`` prints for a person, from the answer it gives as JSON."""

from __future__ import annotations

from typing import Any


def detect_text(result: dict[str, object]) -> str:
    """``detect``'s answer for a person: models by id, then terrain, then markers nobody
    owns, then how well the table was seen (or, without a table, the markers in pixels)."""
    lines: list[str] = []
    if "pose" not in result:
        markers: list[dict[str, object]] = result["markers"]  # type: ignore[assignment]
        lines += [f"{len(markers)} marker{'' if len(markers) == 1 else 's'} seen:"]
        lines += [
            f"  marker {m['id']:>4}: centre ({m['center_px'][0]:.1f}, "  # type: ignore[index]
            f"{m['center_px'][1]:.1f}) px, side {m['side_px']:.1f} px"  # type: ignore[index]
            for m in markers
        ]
        return "\n".join(lines)
    models: list[dict[str, Any]] = result["models"]  # type: ignore[assignment]
    terrain: list[dict[str, Any]] = result["terrain"]  # type: ignore[assignment]
    unknown: list[int] = result["unknown_markers"]  # type: ignore[assignment]
    missing: list[str] = result["missing"]  # type: ignore[assignment]
    pose: dict[str, Any] = result["pose"]  # type: ignore[assignment]
    width = max((len(str(item["id"])) for item in models + terrain), default=4)
    if models or missing:
        lines.append(f"models ({len(models)}):" if models else "models: none seen")
    lines += [
        f"  {m['id']:<{width}}  x {m['x']:7.3f} in  y {m['y']:7.3f} in  "
        f"heading {m['heading']:6.1f} deg  {m['stands']}  (marker {m['marker']})"
        for m in models
    ]
    if terrain:
        lines.append(f"terrain ({len(terrain)}):")
        for piece in terrain:
            corners = piece["polygon"]
            cx = sum(p[0] for p in corners) / len(corners)
            cy = sum(p[1] for p in corners) / len(corners)
            lines.append(
                f"  {piece['id']:<{width}}  centre x {cx:7.3f} in  y {cy:7.3f} in, "
                f"{len(corners)} corners  (marker {piece['marker']})"
            )
    if not models and not terrain:  # no roster or terrain given: the markers themselves
        markers = result["markers"]  # type: ignore[assignment]
        lines.append(f"markers ({len(markers)}):")
        lines += [
            f"  marker {m['id']:>4}  x {m['x']:7.3f} in  y {m['y']:7.3f} in  "
            f"heading {m['heading']:6.1f} deg  z {m['z']:5.3f} in"
            for m in markers
        ]
    if unknown:
        lines.append("markers nobody owns: " + ", ".join(str(i) for i in unknown))
    if missing:
        lines.append("not seen: " + ", ".join(missing))
    anchors = pose["anchors_used"]
    lines.append(
        f"table seen from {len(anchors)} anchor{'' if len(anchors) == 1 else 's'} "
        f"({', '.join(str(a) for a in anchors)}), reprojection error "
        f"{pose['reprojection_px']:.2f} px"
        + ("; heights corrected" if pose["height_corrected"] else "; heights not corrected")
    )
    health: dict[str, Any] = result.get("health") or {}  # type: ignore[assignment]
    if health:
        lines[-1] += (
            f" ({health['reprojection_in']:.3f} in on the table; anchors' centres within "
            f"{health['anchor_error_in']:.3f} in of table.toml)"
        )
        lines += [f"warning: {w}" for w in health["warnings"]]
    return "\n".join(lines)
