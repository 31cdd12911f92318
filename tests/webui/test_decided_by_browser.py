"""The table's own page says who decided a flag when it was not the table: a tournament
judge deciding through the hub (``Game.decide(..., by="hub:<judge>", note=...)``) is named
with their ruling, as text; the table's own decisions (its page, its keys) name nobody.

The game is the clip's long move refereed frame by frame (``played_game``: its violation
is flag 2), served by waitress; the test decides that flag in turn at the table and as
judges, and reads the page's list of flags."""

from __future__ import annotations

import pytest

from tablesight.webui.serve import Server

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

FLAG = 2


@pytest.fixture
def served(played_game, browser):
    web = Server(played_game, "127.0.0.1", 0).start()
    yield web
    played_game.stop()
    web.close()


def test_a_judges_decision_is_named_with_its_ruling_and_the_tables_is_not(
    played_game, served, pages, wait_ms
):
    # (served before pages: its pages close before the server does, not left to retry)
    assert [f["id"] for f in played_game.state()["flags"]] == [FLAG]
    page = pages(served.url)
    item = page.locator(f'#flags li[data-flag="{FLAG}"]')
    expect(item).to_have_count(1)
    decided, note = item.locator(".flag-decided"), item.locator(".flag-note")
    expect(decided).to_have_text("")

    # the table decides, on its page: nobody named, no note
    item.locator("button.flag-accept").click()
    expect(item).to_have_class("violation accept")
    expect(decided).to_have_text("(accepted)")
    expect(item).not_to_contain_text("by judge")
    expect(note).to_have_text("")
    expect(note).to_be_hidden()

    # a judge, through the hub, with a ruling
    played_game.decide(FLAG, "dismiss", by="hub:Ann Judge", note="base on the line")
    expect(decided).to_have_text("(dismissed by judge Ann Judge)")
    expect(item).to_contain_text("dismissed by judge Ann Judge")
    expect(note).to_have_text("ruling: base on the line")
    expect(note).to_be_visible()
    expect(item).to_have_class("violation dismiss")

    # names and notes are what people typed: markup shows as text
    played_game.decide(FLAG, "accept", by="hub:<b>x</b>", note="<b>x</b> & <i>y</i>")
    expect(decided).to_have_text("(accepted by judge <b>x</b>)")
    expect(note).to_have_text("ruling: <b>x</b> & <i>y</i>")
    expect(page.locator("#flags b, #flags i")).to_have_count(0)

    # the table again (its keys, say): the judge and their ruling are gone
    played_game.decide(FLAG, "dismiss")
    expect(decided).to_have_text("(dismissed)", timeout=wait_ms)
    expect(item).not_to_contain_text("by judge")
    expect(note).to_have_text("")
    expect(note).to_be_hidden()
    (flag,) = played_game.state()["flags"]
    assert (flag["decision"], flag["by"], flag["note"]) == ("dismiss", "table", None)
