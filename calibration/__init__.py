"""Camera intrinsics, the camera-to-table mapping and printable targets."""
