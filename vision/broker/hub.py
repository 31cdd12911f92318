"""Every table's state as the broker tells it (``tablesight hub``)."""

from __future__ import annotations

from vision.broker.link import BrokerLink


class Hub:
    def __init__(self, link: BrokerLink, name: str) -> None:
        raise NotImplementedError

    def start(self) -> Hub:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError
