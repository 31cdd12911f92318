"""What the user describes in files, validated once: the table and its anchors, the roster,
the terrain, the camera's intrinsics, a session script; and the printed targets (marker
sheets, the ChArUco board)."""
