"""Pixels to poses: camera sources, ArUco marker detection and tracking."""
