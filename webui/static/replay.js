// The replay viewer: a recorded match at any moment - the picture and its overlay, the
// map, the flags and events as they stood, a timeline, and re-judging. Every shape and
// number comes from the server (/api/replay, /api/replay/seek); this file only asks for
// moments and draws what it gets.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const overlay = $("overlay"), map = $("map"), timeline = $("timeline");
  const opts = { zones: TS.option("zones"), links: TS.option("links"), labels: TS.option("labels"),
                 allReach: false, fit: true, fontPx: 14 };
  let info = null;      // the match: footage, revisions, roster, events of the revision shown
  let pos = null;       // where the replay stands: t, frame, prev_t, next_t, revision
  let state = null;     // the table at that moment, as the live view gets it
  let selected = null;  // one selection: the Model control, the card and the highlight
  let measured = null;  // the measured line drawn
  let playing = null;   // {from, began} while playing
  let wanted = null, seeking = null;  // the newest time asked for; the seeks under way
  let dragging = false;  // the timeline's handle is held

  const { say, act, fill } = TS;
  const seconds = (t) => (t === null || t === undefined ? "-" : Number(t).toFixed(2) + " s");

  // -- seeking ---------------------------------------------------------------------------

  // Ask for the moment at t; while a seek is under way only the newest request is kept.
  function seek(t) {
    wanted = t;
    if (!seeking) seeking = drain();
    return seeking;
  }

  async function drain() {
    try {
      while (wanted !== null) {
        const t = wanted;
        wanted = null;
        const out = await act(TS.post("/api/replay/seek", { t }));
        if (out) { pos = out.position; state = out.state; render(); }
        else if (playing) stop();
      }
    } finally { seeking = null; }
  }

  const clamp = (t) => Math.min(info.end_t, Math.max(info.start_t, t));

  function go(t) { stop(); return seek(clamp(t)); }

  function step(direction, second) {
    if (!pos) return;
    if (second) go(pos.frame.t + direction);
    else {
      const t = direction > 0 ? pos.next_t : pos.prev_t;
      if (t !== null) go(t);
    }
  }

  function jumpToFlag(direction) {
    if (!pos) return;
    const now = pos.frame.t;
    const flags = shownEvents().filter((e) => e.flag);
    const target = direction > 0 ? flags.find((e) => e.t > now + 1e-9)
                                 : flags.filter((e) => e.t < now - 1e-9).pop();
    if (target) toEvent(target);
    else say(direction > 0 ? "no flag after this moment" : "no flag before this moment");
  }

  // An event's moment; a flag's shows its model's reach then: where its move, from where
  // it started, could legally have ended, the other models as they stood.
  async function toEvent(e) {
    await go(e.t);
    if (!e.flag || !e.model || !state || !state.models.some((m) => m.id === e.model)) return;
    selected = e.model;
    $("model").value = selected;
    reach.show(selected);
    render();
  }

  // Playing is seeking forward in real time, as fast as the moments come back.
  function play() {
    if (!pos || playing) return;
    const from = pos.frame.t >= info.end_t ? info.start_t : pos.frame.t;
    playing = { from, began: performance.now() };
    $("play").textContent = "Pause";
    const tick = async () => {
      if (!playing) return;
      const t = Math.min(info.end_t, playing.from + (performance.now() - playing.began) / 1000);
      await seek(t);
      if (t >= info.end_t) stop();
      else if (playing) requestAnimationFrame(tick);
    };
    tick();
  }

  function stop() {
    const was = playing;
    playing = null;
    $("play").textContent = "Play";
    keepTime(true);
    if (was && state) renderCard();  // the distances of the moment it stopped at
  }

  // -- drawing ---------------------------------------------------------------------------

  // the time for the address: to the millisecond, rounded up so that it opens this frame
  function timeParam(t) {
    const ms = Math.ceil(t * 1000 - 1e-6) / 1000;
    return String(ms <= info.end_t ? ms : t);
  }

  // the address keeps the moment shown (a few times a second at most while playing)
  let kept = 0;
  function keepTime(now = false) {
    if (!pos || (playing && !now && performance.now() - kept < 250)) return;
    kept = performance.now();
    const url = new URL(location.href);
    url.searchParams.set("time", timeParam(pos.frame.t));
    history.replaceState(null, "", url);
  }

  function render() {
    if (!state || !pos || !info) return;
    const s = state.session;
    $("phase").textContent = `Turn ${s.turn}: ${s.in_phase ? "movement" : "no phase"}` +
      (s.side ? `, ${s.side} moving` : "");
    $("clock").textContent = `${seconds(pos.frame.t)} of ${seconds(info.end_t)}, frame ${pos.frame.index}`;
    $("clock").dataset.t = pos.frame.t;
    if (!dragging) timeline.value = pos.frame.t;
    keepTime();

    if (info.video) {
      const src = `/replay/frame.jpg?t=${encodeURIComponent(pos.frame.t)}`;
      if ($("picture").getAttribute("src") !== src) $("picture").setAttribute("src", src);
    }
    reach.actions(s.actions);
    reach.follow(`${state.live.generation}.${state.live.version}`);
    TS.drawViews(overlay, map, state, { ...opts, selected, measured, reaches: reach.drawn() });
    TS.cameraLost($("camera-lost"), state);
    TS.listFlags($("flags"), state.flags, (id, decision) =>
      rejudged(TS.post(`/api/flags/${id}`, { decision })));
    renderCard();
    markNow();
  }

  // The selected model's card, of the moment shown. Its model (profile, where it stands,
  // its move: how far, of what allowance) is the state's, the very state the flags and
  // drawings are of: after a seek or a re-judge the card cannot keep a move the flag no
  // longer has. Only the distances to those near it are asked for (/api/models/<id>), again
  // for each moment shown (once a second at most while playing, as the table view does);
  // their answer leaves the message line as it is ("revision 2 saved").
  let near = null;       // {model, key, near}: the distances last answered
  let nearAsked = null;  // the model and moment they were last asked for
  let nearAt = 0;        // when, while playing
  function renderCard() {
    const box = $("info");
    box.textContent = "";
    if (!selected) { delete box.dataset.model; return; }
    box.dataset.model = selected;
    const model = state.models.find((m) => m.id === selected);
    if (!model) {
      TS.html("h2", selected, box);
      TS.html("div", "not on the table at this moment", box);
      return;
    }
    const key = `${selected}@${state.live.generation}.${state.live.version}`;
    if (nearAsked !== key && (!playing || performance.now() - nearAt > 1000)) askNear(selected, key);
    box.appendChild(TS.modelCard({ model, near: near && near.model === selected ? near.near : [] }));
  }

  async function askNear(id, key) {
    nearAsked = key;
    nearAt = performance.now();
    let got;
    try { got = await TS.get(`/api/models/${encodeURIComponent(id)}`); }
    catch (err) { if (nearAsked === key) say(err.message); return; }
    if (nearAsked !== key) return;  // a newer moment or model was asked for since
    near = { model: id, key, near: got.near };
    render();
  }

  // the events up to the moment shown are "past"; the newest of them is "now"
  function markNow() {
    let last = null;
    for (const li of $("events").children) {
      const past = Number(li.dataset.t) <= pos.frame.t + 1e-9;
      li.classList.toggle("past", past);
      li.classList.remove("now");
      if (past) last = li;
    }
    if (last) {
      last.classList.add("now");
      // keep it in sight in the list (the list scrolls, the page does not)
      const list = $("events");
      const top = last.offsetTop;
      if (top < list.scrollTop || top + last.offsetHeight > list.scrollTop + list.clientHeight) {
        list.scrollTop = top - list.clientHeight / 2;
      }
    }
  }

  // -- the match: timeline marks, event list, filters -----------------------------------

  function shownEvents() {
    const f = { model: $("filter-model").value, unit: $("filter-unit").value,
                side: $("filter-side").value, rule: $("filter-rule").value };
    return info.events.filter((e) =>
      (!f.model || e.model === f.model || e.other === f.model) &&
      (!f.unit || e.unit === f.unit) && (!f.side || e.side === f.side) &&
      (!f.rule || e.rule === f.rule));
  }

  function renderMatch() {
    $("game-title").textContent = info.game.title;
    const shown = info.revisions.find((r) => r.revision === info.revision);
    $("revision").textContent = info.revision === 0 ? "live record"
      : `revision ${info.revision}: ${shown ? shown.note : ""}`;
    $("revision").dataset.revision = info.revision;
    timeline.min = info.start_t;
    timeline.max = info.end_t;
    const ids = info.roster.map((m) => m.id);
    const distinct = (values) => [...new Set(values.filter((v) => v !== null && v !== undefined))].sort();
    fill($("filter-model"), ids, true, "all");
    fill($("filter-unit"), distinct(info.roster.map((m) => m.unit)), true, "all");
    fill($("filter-side"), distinct(info.roster.map((m) => m.side)), true, "all");
    fill($("filter-rule"), distinct(info.events.map((e) => e.rule)), true, "all");
    fill($("model"), ids, false, "-");
    $("model").value = selected || "";
    const chosen = $("action").value;
    fill($("action"), info.actions);
    if (!info.actions.includes(chosen) && info.actions.includes("move")) $("action").value = "move";
    fill($("target"), ids, true, "none");
    renderEvents();
  }

  function renderEvents() {
    const span = info.end_t - info.start_t || 1;
    const marks = $("marks"), list = $("events");
    marks.textContent = "";
    list.textContent = "";
    for (const e of shownEvents()) {
      const mark = document.createElement("span");
      mark.className = `mark ${e.kind}`;
      mark.dataset.kind = e.kind;
      mark.dataset.event = e.id;
      mark.style.left = `${(100 * (e.t - info.start_t)) / span}%`;
      mark.title = `${seconds(e.t)} ${e.message}`;
      mark.onclick = () => toEvent(e);
      marks.appendChild(mark);
      const li = document.createElement("li");
      li.className = e.kind;
      li.dataset.kind = e.kind;
      li.dataset.event = e.id;
      li.dataset.t = e.t;
      li.textContent = `${seconds(e.t)} ${e.message}`;
      li.onclick = () => toEvent(e);
      list.appendChild(li);
    }
    if (pos) markNow();
  }

  async function reload() {
    const got = await act(TS.get("/api/replay"));
    if (got) { info = got; renderMatch(); }
  }

  // a declaration or a decision re-judges the match: a new revision, shown at once
  async function rejudged(promise) {
    stop();
    const out = await act(promise);
    if (!out) return;
    await reload();
    await seek(pos.t);
    say(`revision ${info.revision} saved`);
  }

  // -- models and measuring (as on the table view) ----------------------------------------

  // Pressing a model selects it and shades the reach of its move at this moment (from where
  // it started the phase, by its declared action; the bar offers the others and its
  // threat); pressing it again hides the shading, and Esc both.
  function select(id) {
    const again = Boolean(id) && id === selected;
    selected = id || null;
    $("model").value = selected || "";
    if (!selected) reach.hide();
    else if (again) reach.toggle(selected);
    else reach.show(selected);
    render();
  }

  const reach = TS.reachTool({ from: "start", render }, $("reach-bar"));
  $("reach-hide").onclick = () => reach.hide();

  const tool = TS.modelTool({
    map, overlay, table: () => state.table, select,
    measured(out) { measured = out; render(); },
  });

  // -- controls ---------------------------------------------------------------------------

  $("play").onclick = (ev) => { if (playing) stop(); else play(); ev.currentTarget.blur(); };
  timeline.addEventListener("input", () => go(Number(timeline.value)));
  timeline.addEventListener("pointerdown", () => { dragging = true; });
  window.addEventListener("pointerup", () => {
    if (dragging) { dragging = false; if (pos) timeline.value = pos.frame.t; }
  });
  for (const id of ["filter-model", "filter-unit", "filter-side", "filter-rule"]) {
    $(id).onchange = renderEvents;
  }
  $("model").onchange = () => select($("model").value);
  $("declare").onclick = () => {
    const body = { model: $("model").value, action: $("action").value };
    if ($("target").value) body.target = $("target").value;
    if ($("roll").value) body.roll = Number($("roll").value);
    rejudged(TS.post("/api/declare", body));
  };

  // what each key does is the server's to say (webui/keys.py); here, only how
  TS.keyboard({
    previous_frame: () => step(-1, false),
    next_frame: () => step(1, false),
    second_back: () => step(-1, true),
    second_on: () => step(1, true),
    next_flag: () => jumpToFlag(1),
    previous_flag: () => jumpToFlag(-1),
    start: () => go(info.start_t),
    end: () => go(info.end_t),
    play: () => (playing ? stop() : play()),
    measure: () => tool.start(),
    cancel() { tool.cancel(); select(null); },
  }, () => info !== null);

  // -- start: the match, then the moment in the address (?time=) or where the replay stands

  (async () => {
    info = await act(TS.get("/api/replay"));
    if (!info) return;
    if (!info.video) {
      $("picture-box").hidden = true;
      $("stage").appendChild($("map-panel"));
    }
    renderMatch();
    // the server checks the time: a bad one is said, and the replay opens where it stands
    const asked = new URLSearchParams(location.search).get("time");
    if (asked !== null && asked.trim() !== "") await seek(Number(asked));
    if (!pos) {
      const message = $("message").textContent;
      await seek(info.position.t);
      say(message);
    }
  })();
})();
