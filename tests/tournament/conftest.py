"""What the hub's tests share: the broker's link, tables speaking to the broker, and hubs
started on it (each closed afterwards)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tablesight.rig.tablevoices import TableVoices
from tablesight.tournament.hub import Hub
from tablesight.tournament.link import BrokerLink

#: How long a test waits for the broker or the hub (s).
WAIT_S = 10.0


@pytest.fixture
def link(mosquitto) -> BrokerLink:
    return BrokerLink.parse(mosquitto.url)


@pytest.fixture
def tables(mosquitto) -> Iterator[TableVoices]:
    publisher = TableVoices(mosquitto.port)
    yield publisher
    publisher.close()


@pytest.fixture
def started(link) -> Iterator[Callable[..., Hub]]:
    """``started(name="hub", **options)``: a hub, subscribed; closed afterwards."""
    made: list[Hub] = []

    def start(name: str = "hub", **options: Any) -> Hub:
        hub = Hub(link, name, **options).start()
        made.append(hub)
        assert hub.wait_subscribed(WAIT_S), "the hub never subscribed"
        return hub

    yield start
    for hub in made:
        hub.close()
