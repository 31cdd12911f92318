"""The README's pictures of the demo, taken again: the table view (1600 x 1000) and
``/broadcast`` (1920 x 1080) of ``tablesight demo`` (the Necromunda sample) at the moment
the README's caption names, the table view with one model's reach shaded (pressed on
the picture a second before), and the table view on a phone (390 x 844), in Debian's
Chromium::

    .venv/bin/python -m tablesight.rig.screenshots [--at 30.4] [--reach ryza]
        [--out docs/screenshots]

The demo plays at the clip's own speed, so this waits for the moment in the first loop.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"


def _state_t(url: str) -> float:
    with urllib.request.urlopen(url + "api/state", timeout=5) as answer:
        state = json.load(answer)
    return float((state.get("poses") or {}).get("t") or 0.0)


#: How long before the moment the model whose reach is shown is pressed (s).
REACH_BEFORE_S = 1.0


def take(at_s: float, out: Path, reach: str = "ryza") -> list[Path]:
    from playwright.sync_api import sync_playwright

    demo = subprocess.Popen(
        [sys.executable, "-m", "tablesight", "demo", "--no-browser", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert demo.stderr is not None
    try:
        url = ""
        for line in demo.stderr:
            found = re.search(r"table view: (http://127\.0\.0\.1:\d+/)", line)
            if found:
                url = found.group(1)
                break
        if not url:
            raise SystemExit("screenshots: the demo did not start")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM)
            table = browser.new_page(viewport={"width": 1600, "height": 1000})
            table.goto(url)
            cast = browser.new_page(viewport={"width": 1920, "height": 1080})
            cast.goto(url + "broadcast")
            reached = browser.new_page(viewport={"width": 1600, "height": 1000})
            reached.goto(url)
            phone = browser.new_page(
                viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True
            )
            phone.goto(url)
            while _state_t(url) < at_s - REACH_BEFORE_S:
                time.sleep(0.05)
            reached.locator(f'svg#overlay path.base[data-model="{reach}"]').click()
            reached.locator(f'svg#overlay g.shade path[data-reach-of="{reach}"]').wait_for()
            while _state_t(url) < at_s - 0.3:
                time.sleep(0.05)
            while _state_t(url) < at_s:
                time.sleep(0.01)
            pages = {"table-view": table, "broadcast": cast, "reach": reached, "phone": phone}
            paths = [out / f"{name}.png" for name in pages]
            for page, path in zip(pages.values(), paths, strict=True):
                page.screenshot(path=str(path))
            browser.close()
        return paths
    finally:
        demo.terminate()
        demo.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--at", type=float, default=30.4, help="seconds into the clip")
    parser.add_argument("--reach", default="ryza", help="the model whose reach is shaded")
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    args = parser.parse_args()
    for path in take(args.at, args.out, args.reach):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
