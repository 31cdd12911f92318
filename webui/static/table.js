// The table view: picture + overlay, top-down map, controls, flags and events.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const overlay = $("overlay"), map = $("map");
  let state = null, selected = null;
  const opts = { zones: TS.option("zones"), links: TS.option("links"), labels: TS.option("labels"),
                 allReach: false };

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
    if (document.activeElement !== $("model")) fill($("model"), ids);
    if (selected && document.activeElement !== $("model")) $("model").value = selected;
    if (document.activeElement !== $("action")) {
      // the actions come sorted; until one is chosen, a declaration is a plain move
      const chosen = $("action").value;
      fill($("action"), s.actions);
      if (!s.actions.includes(chosen) && s.actions.includes("move")) $("action").value = "move";
    }
    if (document.activeElement !== $("target")) fill($("target"), ids, true, "none");
    const common = { ...opts, selected, onModel: (id) => tool.click(id), onHover: (id) => tool.hover(id) };
    TS.drawViews(overlay, map, state, common);
    TS.listFlags($("flags"), state.flags, (id, decision) =>
      act(TS.post(`/api/flags/${id}`, { decision })));
  }

  function addEvent(e) {
    const li = document.createElement("li");
    li.className = e.kind;
    li.dataset.kind = e.kind;
    li.textContent = `${e.t === null ? "" : e.t.toFixed(1) + "s"} ${e.message}`;
    $("events").prepend(li);
    while ($("events").children.length > 200) $("events").lastChild.remove();
  }

  const tool = TS.modelTool({
    map, table: () => state.table,
    select(id) { selected = id; $("model").value = id; render(); },
  });

  const phase = (action) => act(TS.post("/api/phase", { action }));
  $("start-phase").onclick = () => phase("start");
  $("end-phase").onclick = () => phase("end");
  $("next-turn").onclick = () => phase("next_turn");
  $("side").onchange = () => $("side").value &&
    act(TS.post("/api/phase", { action: "side", side: $("side").value }));
  $("model").onchange = () => { selected = $("model").value; tool.hover(selected); render(); };
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
    cancel() { tool.cancel(); selected = null; render(); },
  });

  TS.connect({
    state(s) { state = s; render(); },
    event: addEvent,
    reset() { $("events").textContent = ""; },
    status(text) { $("connection").textContent = text; },
  });
})();
