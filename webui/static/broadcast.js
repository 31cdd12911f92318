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

  // Where can it go: the control (top left, faint until pointed at; ``?controls=0`` leaves
  // it off the page) shades one model's reach or a whole side's, by each model's declared
  // action, from where it stands; ``?reach=ID`` or ``?reach=side:NAME`` opens with it
  // shown. Pressing a model on the overlay shades its reach, and again hides it. Asked
  // again, at most every REACH_MS, while the table changes (the server works it out
  // again only when something near moved).
  const panel = document.getElementById("reach-panel"), pick = document.getElementById("reach-of");
  const explain = document.getElementById("reach-explain");
  panel.hidden = !TS.option("controls");
  let latest = null, wanted = new URLSearchParams(location.search).get("reach") || "";
  let reaches = [], asked = 0, askedAt = -Infinity, seen = null, at = null, timer = null, pending = false;

  function choices(state) {
    const want = ["", ...state.session.sides.map((s) => `side:${s}`), ...state.models.map((m) => m.id)];
    const have = [...pick.options].map((o) => o.value);
    if (have.join("|") !== want.join("|") && document.activeElement !== pick) {
      pick.textContent = "";
      pick.add(new Option("none", ""));
      const sides = document.createElement("optgroup"), models = document.createElement("optgroup");
      sides.label = "a side";
      models.label = "a model";
      for (const s of state.session.sides) sides.appendChild(new Option(`${s} side`, `side:${s}`));
      for (const m of state.models) models.appendChild(new Option(m.id, m.id));
      pick.append(sides, models);
    }
    if (pick.value !== wanted && [...pick.options].some((o) => o.value === wanted)) pick.value = wanted;
  }

  async function ask() {
    clearTimeout(timer);
    timer = null;
    const of = wanted, mine = ++asked;
    if (!of) { reaches = []; explain.textContent = ""; redraw(); return; }
    askedAt = performance.now();
    at = seen;
    pending = true;
    const q = of.startsWith("side:") ? `side=${encodeURIComponent(of.slice(5))}` : `model=${encodeURIComponent(of)}`;
    let got = null, why = "";
    try { got = await TS.get(`/api/reach?${q}`); } catch (err) { why = err.message; }
    if (mine !== asked) return;
    pending = false;
    const list = !got ? [] : got.reaches || [got];
    reaches = list.map((a) => ({ ...a, kind: "reach" }));
    const said = !got ? why
      : got.reaches ? `${got.side}: where its ${list.length} model${list.length === 1 ? "" : "s"} may end a move`
      : got.explain;
    if (explain.textContent !== said) explain.textContent = said;
    redraw();
    if (got) follow(seen);
  }

  function follow(version) {
    seen = version;
    if (!wanted || pending || timer || at === version) return;
    timer = setTimeout(ask, Math.max(0, askedAt + TS.REACH_MS - performance.now()));
  }

  function want(of) {
    wanted = of;
    if (pick.value !== of) pick.value = of;
    ask();
  }
  pick.onchange = () => want(pick.value);
  TS.pointer(svg, { model: (id) => want(wanted === id ? "" : id) });

  function redraw() { if (latest) drawState(latest); }

  function drawState(state) {
    const cam = state.camera;
    if (!cam) { TS.draw(svg, null, null, opts); svg._posed = null; return; }
    const [w, h] = cam.image_size;
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    TS.draw(svg, state, TS.projector(cam), { ...opts, fontPx: fontPx(), bounds: [0, 0, w, h], reaches });
    TS.move(svg, poses.for(generation));
  }

  // the full state redraws; each frame's poses move what it drew
  const poses = TS.livePoses();
  let generation = null, first = true;
  TS.connect({
    state(state) {
      tick(state);
      TS.cameraLost(banner, state);
      generation = state.live.generation;
      latest = state;
      choices(state);
      if (first) { first = false; if (wanted) ask(); }
      follow(state.live.version);
      drawState(state);
    },
    poses(msg) {
      poses.take(msg);
      if (msg.generation === generation) TS.move(svg, poses.for(generation));
    },
    event() {},
    reset() { ticker.textContent = ""; },
  });
})();
