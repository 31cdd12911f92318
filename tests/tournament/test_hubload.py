"""The hall's load rig (``tablesight bench hub``) on a small hall: what it reports is
what happened. Three tables replay the Trench Crusade sample's recorded events (31 per
game, ids 0-30) at 10x for 20 s into a real broker and a real ``tablesight hub``; every
event published is seen once on the hub's page stream, and the hub's count of each
table's current game is what was published in it."""

from __future__ import annotations

import pytest

from tablesight.rig.hubload import record_stream, run

pytestmark = pytest.mark.slow


def test_a_small_hall_is_shown_event_for_event(tmp_path, mosquitto) -> None:
    # (the rig starts a broker of its own; the fixture only proves mosquitto is there)
    stream = record_stream("trench-crusade", tmp_path)
    assert [e["id"] for e in stream] == list(range(31))
    result = run(
        tables=3,
        speed=10.0,
        minutes=20 / 60,
        sample_s=5.0,
        cache=tmp_path,
        say=print,
        games=("trench-crusade",),
    )
    print(result.published, "published;", len(result.page_delays_ms), "shown")
    # 31 events over 3.1 s at 10x and 1 s between games: about 4.1 s a game, so 20 s
    # is 4 to 5 games a table: 3 x 4 x 31 = 372 events at least
    assert result.published >= 372
    # each shown once; under load a game's last event may be replaced by the next game
    # before a page update shows it (the page shows each table's current game)
    assert len(result.page_delays_ms) + result.superseded == result.published
    assert result.superseded <= 0.05 * result.published
    assert len(result.broker_delays_ms) == result.published
    assert result.counted == result.expected > 0
    assert all(d >= 0 for d in result.page_delays_ms)
