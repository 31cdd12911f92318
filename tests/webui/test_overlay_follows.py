"""The overlay follows the models frame by frame: each frame's ``poses`` message moves the
shapes the last full state drew (a transform on the same elements), with no full state in
between and no element made or removed.

The game: ``played_game`` (the ganger moved from (10, 10) to (17, 10)); one more frame
with the ganger back at (10, 10) is processed while the page watches, the full state held
back (one state per minute at most), so that only its poses can move the base.
"""

from __future__ import annotations

import pytest

from tablesight.vision.sources import Frame
from tablesight.webui.serve import Server

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")

#: The page counts the states and the poses its stream brings, and notes the newest poses.
HEARD = """
window.heard = { states: 0, poses: 0, frame: -1 };
const Native = window.EventSource;
window.EventSource = class extends Native {
  constructor(...args) {
    super(...args);
    this.addEventListener("state", () => { window.heard.states += 1; });
    this.addEventListener("poses", (m) => {
      window.heard.poses += 1;
      window.heard.frame = JSON.parse(m.data).frame;
    });
  }
};
"""

CENTRE = """() => {
  const b = document.querySelector("#overlay path.base[data-model=ganger]").getBoundingClientRect();
  return [b.x + b.width / 2, b.y + b.height / 2];
}"""


@pytest.fixture
def server(played_game, monkeypatch):
    monkeypatch.setattr("tablesight.webui.stream.STATE_HZ", 1 / 60)
    s = Server(played_game, port=0).start()
    yield s
    played_game.stop()
    s.close()


def test_a_poses_message_moves_the_base_without_a_full_state(pages, server, played_game, footage):
    page = pages(
        f"http://127.0.0.1:{server.port}/overlay?ticker=0",
        1920,
        1080,
        init_script=HEARD,
        # the server closes before the page: its stream is cut, or the page, reconnecting
        # a second after the stream ended, finds no server (or a socket closing)
        allow=("ERR_CONNECTION_RESET", "ERR_CONNECTION_REFUSED", "ERR_SOCKET_NOT_CONNECTED"),
    )
    page.wait_for_function("() => window.heard.states === 1 && window.heard.poses >= 1")
    base = page.locator("#overlay path.base[data-model=ganger]")
    sync_api.expect(base).to_have_count(1)
    page.evaluate(
        "() => { document.querySelector('#overlay path.base[data-model=ganger]')._same = 1; }"
    )
    nodes = page.evaluate("() => document.querySelectorAll('#overlay *').length")
    before = page.evaluate(CENTRE)
    outline = base.get_attribute("d")

    _, pics = footage
    k = played_game.frame.index + 1
    played_game.process(Frame(pics["start"], k / 30, k))
    ganger = next(m for m in played_game.poses()["models"] if m[0] == "ganger")
    assert abs(ganger[1] - 10) < 0.2 and abs(ganger[2] - 10) < 0.2

    page.wait_for_function(f"() => window.heard.frame === {k}")
    after = page.evaluate(CENTRE)
    print(f"the ganger's base moved from {before} to {after} (px)")
    # 7 in to the left on the picture: well over a hundred pixels, hardly up or down
    assert before[0] - after[0] > 100
    assert abs(before[1] - after[1]) < 0.3 * (before[0] - after[0])
    # the same element, its outline as the full state drew it, no element made or removed,
    # and no full state since the first
    assert page.evaluate(
        "() => document.querySelector('#overlay path.base[data-model=ganger]')._same === 1"
    )
    assert base.get_attribute("d") == outline
    assert page.evaluate("() => document.querySelectorAll('#overlay *').length") == nodes
    assert page.evaluate("() => window.heard.states") == 1
