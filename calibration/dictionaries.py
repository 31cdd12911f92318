"""ArUco dictionaries by the names users write in their files ("4x4_50", "apriltag_36h11").

>>> dictionary_id("4x4_50") == cv2.aruco.DICT_4X4_50
True
"""

from __future__ import annotations

import cv2

#: Dictionary names as users write them ("4x4_50", "apriltag_36h11") -> OpenCV ids.
DICTIONARIES: dict[str, int] = {
    name.removeprefix("DICT_").lower(): getattr(cv2.aruco, name)
    for name in dir(cv2.aruco)
    if name.startswith("DICT_") and isinstance(getattr(cv2.aruco, name), int)
}


class DictionaryError(ValueError):
    """An ArUco dictionary name that OpenCV does not know."""


def dictionary_id(name: str) -> int:
    """OpenCV's id of the dictionary called ``name`` (case-insensitive, ``DICT_`` optional)."""
    key = str(name).strip().lower().removeprefix("dict_")
    if key not in DICTIONARIES:
        known = ", ".join(sorted(DICTIONARIES))
        raise DictionaryError(f"unknown ArUco dictionary {name!r}; valid names: {known}")
    return DICTIONARIES[key]


def dictionary_size(name: str) -> int:
    """How many markers the dictionary called ``name`` has: its ids are 0 to size - 1.

    >>> dictionary_size("4x4_50")
    50
    """
    return int(cv2.aruco.getPredefinedDictionary(dictionary_id(name)).bytesList.shape[0])


def check_marker(name: str, marker: int) -> None:
    """A ``DictionaryError`` when ``marker`` is no marker of the dictionary ``name``."""
    size = dictionary_size(name)
    if not 0 <= marker < size:
        raise DictionaryError(f"expected a marker of {name} (0 to {size - 1}), got {marker}")
