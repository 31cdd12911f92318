// The broadcast and overlay pages (for OBS): the overlay on the picture (or on nothing)
// and a ticker of what is current: the open flags not yet decided, newest first, and the
// phase being played. Every word comes from the server (rules/view.py: each flag's
// ``headline`` and ``caption``, the session's ``headline``).
"use strict";

(() => {
  const svg = document.getElementById("overlay");
  const ticker = document.getElementById("ticker");
  const banner = document.getElementById("camera-lost");
  const opts = { zones: TS.option("zones"), links: TS.option("links"), labels: TS.option("labels"),
                 allReach: true, caption: true };
  // labels 22 px high on a 1920 x 1080 source, in proportion on a smaller one (13 px at least)
  const fontPx = () => Math.max(13, 22 * Math.min(innerWidth / 1920, innerHeight / 1080));
  if (!TS.option("ticker")) ticker.hidden = true;
  const LINES = 3;

  function tick(state) {
    const lines = state.flags.filter((f) => !f.decision).sort((a, b) => b.id - a.id)
      .map((f) => ({ key: `flag:${f.id}`, kind: f.kind, text: f.headline, flag: f.id }));
    if (state.session.in_phase) lines.push({ key: "phase", kind: "phase", text: state.session.headline });
    const shown = lines.slice(0, LINES);
    const old = new Map([...ticker.children].map((n) => [n.dataset.key, n]));
    shown.forEach((line, i) => {
      let item = old.get(line.key);
      if (item) old.delete(line.key);
      else { item = document.createElement("div"); item.dataset.key = line.key; }
      if (item.className !== `tick ${line.kind}`) item.className = `tick ${line.kind}`;
      if (item.textContent !== line.text) item.textContent = line.text;
      if (line.flag !== undefined) item.dataset.flag = line.flag;
      if (ticker.children[i] !== item) ticker.insertBefore(item, ticker.children[i] || null);
    });
    for (const n of old.values()) n.remove();
  }

  // the full state redraws; each frame's poses move what it drew
  const poses = TS.livePoses();
  let generation = null;
  TS.connect({
    state(state) {
      tick(state);
      TS.cameraLost(banner, state);
      const cam = state.camera;
      generation = state.live.generation;
      if (!cam) { TS.draw(svg, null, null, opts); svg._posed = null; return; }
      const [w, h] = cam.image_size;
      svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
      TS.draw(svg, state, TS.projector(cam), { ...opts, fontPx: fontPx(), bounds: [0, 0, w, h] });
      TS.move(svg, poses.for(generation));
    },
    poses(msg) {
      poses.take(msg);
      if (msg.generation === generation) TS.move(svg, poses.for(generation));
    },
    event() {},
    reset() { ticker.textContent = ""; },
  });
})();
