// The table view: picture + overlay, top-down map, controls, flags and events.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const overlay = $("overlay"), map = $("map");
  // One selection: the Model control, the card and the highlight all show ``selected``.
  let state = null, selected = null, measured = null, version = null, carded = 0;
  let stream = "", lost = false;  // the page's stream, and whether the camera is lost
  const opts = { zones: TS.option("zones"), links: TS.option("links"), labels: TS.option("labels"),
                 allReach: false, fit: true, fontPx: 14 };

  const { act, fill } = TS;

  function render() {
    if (!state) return;
    const s = state.session;
    $("game-title").textContent = state.game.title;
    $("phase").textContent = `Turn ${s.turn}: ${s.in_phase ? "movement" : "no phase"}` +
      (s.side ? `, ${s.side} moving` : "");
    const ids = state.models.map((m) => m.id);
    if (document.activeElement !== $("side")) fill($("side"), s.sides, false, "-");
    if (document.activeElement !== $("side")) $("side").value = s.side || "";
    if (selected && !ids.includes(selected)) { selected = null; tool.card(null); reach.hide(); }
    if (document.activeElement !== $("model")) {
      fill($("model"), ids, false, "-");
      $("model").value = selected || "";
    }
    if (document.activeElement !== $("action")) {
      // the actions come sorted; until one is chosen, a declaration is a plain move
      const chosen = $("action").value;
      fill($("action"), s.actions);
      if (!s.actions.includes(chosen) && s.actions.includes("move")) $("action").value = "move";
    }
    if (document.activeElement !== $("target")) fill($("target"), ids, true, "none");
    reach.actions(s.actions);
    reach.follow(state.live.version);
    TS.drawViews(overlay, map, state, { ...opts, selected, measured, reaches: reach.drawn() });
    if (!state.camera) overlay._posed = null;
    follow();  // the bases where the newest poses have them, and the labels placed round them
    lost = TS.cameraLost($("camera-lost"), state);
    showConnection();
    notePicture();
    // the card's distances follow the table, once a second at most
    if (selected && state.live.version !== version && performance.now() - carded > 1000) {
      version = state.live.version;
      carded = performance.now();
      tool.card(selected);
    }
    TS.listFlags($("flags"), state.flags, (id, decision) =>
      act(TS.post(`/api/flags/${id}`, { decision })));
    showPose(state.live.pose);
  }

  // The stream's state, and the camera's when it is lost: "connected" alone would say
  // all is well over a frozen picture.
  function showConnection() {
    const text = lost ? `${stream}; camera lost` : stream;
    if ($("connection").textContent !== text) $("connection").textContent = text;
    $("connection").classList.toggle("lost", lost);
  }

  // Under the picture, in words, what it cannot show: no picture mapped to the table yet,
  // or labels left off it for want of room (they are on the map, and flags in the list).
  function notePicture() {
    const note = $("picture-note");
    const off = Number(overlay.dataset.unplaced || 0);
    const text = !state.camera ? "The table is not mapped on the picture yet: nothing is drawn on it."
      : off ? `${off} label${off > 1 ? "s" : ""} left off the picture for want of room: ` +
              "the map and the lists below have them." : "";
    if (note.textContent !== text) note.textContent = text;
    note.hidden = !text;
  }

  // How far the table pose can be trusted: its error, its anchors, and what is wrong.
  function showPose(h) {
    const el = $("pose");
    if (!h) { el.textContent = "Table not seen yet"; el.className = "pose-unknown"; return; }
    el.className = h.healthy ? (h.warnings.length ? "pose-warn" : "pose-ok") : "pose-bad";
    const head = document.createElement("div");
    head.textContent = `Table pose: ${h.reprojection_px.toFixed(2)} px ` +
      `(${h.reprojection_in.toFixed(3)} in) from anchors ${h.anchors_used.join(", ")}` +
      (h.healthy ? "" : " - not trusted, moves are not judged");
    const lines = (h.healthy ? [] : [h.problem]).concat(h.warnings).map((text) => {
      const li = document.createElement("li");
      li.textContent = text;
      return li;
    });
    const ul = document.createElement("ul");
    ul.replaceChildren(...lines);
    el.replaceChildren(head, ...(lines.length ? [ul] : []));
  }

  function addEvent(e) {
    const li = document.createElement("li");
    li.className = e.kind;
    li.dataset.kind = e.kind;
    li.textContent = `${e.t === null ? "" : e.t.toFixed(1) + "s"} ${e.message}`;
    $("events").prepend(li);
    while ($("events").children.length > 200) $("events").lastChild.remove();
  }

  // Pressing a model selects it and shades its reach (by its declared action: a move
  // unless one was declared; the bar under the picture offers the game's other actions and
  // its threat); pressing it again hides the shading, and Esc both.
  function select(id) {
    const again = Boolean(id) && id === selected;
    selected = id || null;
    $("model").value = selected || "";
    if (!selected) reach.hide();
    else if (again) reach.toggle(selected);
    else reach.show(selected);
    carded = performance.now();
    if (!again) tool.card(selected);
    render();
  }

  // where can it go: from where it stands now, the other models where they stand
  const reach = TS.reachTool({ from: "here", render }, $("reach-bar"));
  $("reach-hide").onclick = () => reach.hide();

  const tool = TS.modelTool({
    map, overlay, table: () => state.table, select,
    measured(out) { measured = out; render(); },
  });

  const phase = (action) => act(TS.post("/api/phase", { action }));
  $("start-phase").onclick = () => phase("start");
  $("end-phase").onclick = () => phase("end");
  $("next-turn").onclick = () => phase("next_turn");
  $("side").onchange = () => $("side").value &&
    act(TS.post("/api/phase", { action: "side", side: $("side").value }));
  $("model").onchange = () => select($("model").value);
  function declare() {
    const body = { model: $("model").value, action: $("action").value };
    if ($("target").value) body.target = $("target").value;
    if ($("roll").value) body.roll = Number($("roll").value);
    return act(TS.post("/api/declare", body));
  }
  $("declare").onclick = declare;

  function nextSide() {
    if (!state) return;
    const sides = state.session.sides;
    const next = sides[(sides.indexOf(state.session.side) + 1) % sides.length];
    act(TS.post("/api/phase", { action: "side", side: next }));
  }
  function decideNewest(decision) {
    if (!state || !state.flags.length) return;
    const f = state.flags[state.flags.length - 1];
    act(TS.post(`/api/flags/${f.id}`, { decision }));
  }

  // what each key does is the server's to say (webui/keys.py); here, only how
  TS.keyboard({
    start_phase: () => phase("start"),
    end_phase: () => phase("end"),
    next_turn: () => phase("next_turn"),
    next_side: nextSide,
    measure: () => tool.start(),
    declare,
    accept_flag: () => decideNewest("accept"),
    dismiss_flag: () => decideNewest("dismiss"),
    cancel() { tool.cancel(); select(null); },
  });

  // the full state redraws; each frame's poses move what it drew
  const poses = TS.livePoses();
  function follow() {
    if (!state) return;
    const now = poses.for(state.live.generation);
    TS.move(overlay, now);
    TS.move(map, now);
  }

  TS.connect({
    state(s) { state = s; render(); },
    poses(msg) { poses.take(msg); follow(); },
    event: addEvent,
    reset() { $("events").textContent = ""; },
    status(text) { stream = text; showConnection(); },
  });
})();
