"""A table's game published to the broker (``run --broker``, ``demo --broker``)."""

from __future__ import annotations

from vision.broker.link import BrokerLink
from vision.game import Game


class TablePublisher:
    def __init__(self, game: Game, link: BrokerLink, name: str, host: str, port: int) -> None:
        raise NotImplementedError

    def start(self) -> TablePublisher:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError
