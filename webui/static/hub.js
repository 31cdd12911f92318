// The hub's page: every table of the hall, those needing a judge first, as the hub's
// /api/stream says them; a table's details from /api/tables/<name>; a judge's decision
// posted to /api/tables/<name>/decide. The order, the counts, the numbers and the
// decisions are the server's and the tables': this file shows them and posts what the
// judge clicks. The one sum here is how long ago something was, on the hub's clock.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const JUDGE_KEY = "tablesight.hub.judge";
  const FLAGS_ON_CARD = 4;
  const KINDS = { violation: "violation", advisory: "advisory", close_call: "close call" };
  const DECIDED = { accept: "accepted", dismiss: "dismissed" };

  let listing = null;   // the newest list: {hub, tables} in the server's order
  const rows = new Map(); // each table's newest row, by name
  let offset = 0;       // the hub's clock less this browser's (s)
  let chosen = null;    // the name of the table whose details are open
  let details = null;   // its newest details
  let fetchedFor = "";  // its row as it was when its details were last fetched
  let fetching = false, again = false;
  let sent = null;      // the decision this page sent last: {table, id, flag, decision}

  const { html, Refusal, post, answer } = TS;  // as every page talks to its server

  // -- talking to the hub ----------------------------------------------------------------

  // The token the hub printed (tablesight.js keeps it for the tab): with it, the hub shows
  // what it made of the tables' own pages (url, reachable), which it keeps from viewers
  // without it. The stream cannot send a header: it gives the token in its address.
  const token = (() => {
    try { return window.sessionStorage.getItem("tablesight.token"); } catch (err) { return null; }
  })();

  async function get(url) {
    const headers = token ? { "X-TableSight-Token": token } : {};
    return answer(await fetch(url, { cache: "no-store", headers }));
  }

  function connect() {
    const query = token ? `?token=${encodeURIComponent(token)}` : "";
    const source = new EventSource(`/api/stream${query}`);
    source.addEventListener("tables", (m) => showList(JSON.parse(m.data)));
    source.onopen = () => say("connection", "");
    source.onerror = () => say("connection", "hub unreachable, reconnecting...");
  }

  function say(id, text) { const node = $(id); if (node.textContent !== text) node.textContent = text; }

  // -- times -----------------------------------------------------------------------------

  function duration(seconds) {
    const s = Math.max(0, Math.round(seconds));
    if (s < 60) return `${s} s`;
    const m = Math.floor(s / 60);
    if (m < 60) return `${m} min`;
    const h = Math.floor(m / 60);
    return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  }

  function ago(since) { return duration(Date.now() / 1000 + offset - since); }

  function statusText(t) {
    const how = t.status === "online" ? "online" : "offline";
    const why = t.status === "offline" && t.reason ? ` (${t.reason})` : "";
    return t.since ? `${how} for ${ago(t.since)}${why}` : `${how}${why}`;
  }

  function gameText(t) {
    const parts = [t.title || t.game || "no game yet"];
    if (t.turn !== null && t.turn !== undefined) parts.push(`turn ${t.turn}`);
    if (t.phase) parts.push(t.phase + (t.side ? ` (${t.side})` : ""));
    if (t.state && t.state !== "playing") parts.push(t.state);
    return parts.join(" \u00b7 ");
  }

  function flagText(f) {
    return `#${f.id} ` + (f.headline || `${f.model}: ${f.label || f.message}`);
  }

  function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

  // -- the list --------------------------------------------------------------------------

  // A stream message: the rows that changed (all of them when ``full``), and every
  // table's name in the server's order.
  function showList(message) {
    if (message.full) rows.clear();
    for (const row of message.tables) rows.set(row.name, row);
    const listed = new Set(message.order);
    for (const name of [...rows.keys()]) if (!listed.has(name)) rows.delete(name);
    listing = { hub: message.hub, tables: message.order.map((name) => rows.get(name)).filter(Boolean) };
    show(message.now);
  }

  function show(now) {
    const message = listing;
    offset = now - Date.now() / 1000;
    const hub = message.hub;
    const problems = hub.problems ? ` \u00b7 ${plural(hub.problems, "message")} not read` : "";
    say("connection", hub.connected ? `broker ${hub.broker}${problems}`
      : `${hub.refused || `not connected to the broker ${hub.broker}`}, retrying...${problems}`);
    $("connection").classList.toggle("bad", !hub.connected);
    const waiting = message.tables.filter((t) => t.open_flags > 0).length;
    const online = message.tables.filter((t) => t.status === "online").length;
    say("summary", `${plural(message.tables.length, "table")}, ${online} online` +
      (waiting ? ` \u00b7 ${waiting} with open flags` : ""));
    $("empty").hidden = message.tables.length > 0;
    drawCards(message.tables);
    if (chosen) {
      const row = message.tables.find((t) => t.name === chosen);
      const text = row ? JSON.stringify(row) : "";
      if (text !== fetchedFor) fetchDetails(text);
    }
  }

  // While the judge's pointer is over the list (a finger on a tablet, from touch to
  // lift), the cards keep their places: a card never slides away under a finger about to
  // tap it. New tables join at the end; the list takes the server's order when the
  // pointer leaves.
  let pointerOnList = false;

  function holdOrder() {
    const list = $("tables");
    list.addEventListener("pointerenter", () => { pointerOnList = true; });
    list.addEventListener("pointerleave", () => {
      pointerOnList = false;
      if (listing) drawCards(listing.tables);
    });
  }

  // One card (a button) per table, in the server's order (held while the pointer is on
  // the list); kept by name, so that the card under the pointer or the keyboard's focus
  // stays the same element as the list moves.
  function drawCards(tables) {
    const list = $("tables");
    const old = new Map([...list.children].map((li) => [li.dataset.table, li]));
    const listed = new Set(tables.map((t) => t.name));
    const place = pointerOnList
      ? [...[...list.children].map((li) => li.dataset.table).filter((n) => listed.has(n)),
         ...tables.map((t) => t.name).filter((n) => !old.has(n))]
      : tables.map((t) => t.name);
    const rows = new Map(tables.map((t) => [t.name, t]));
    place.forEach((name, i) => {
      let li = old.get(name);
      if (li) old.delete(name);
      else li = newCard(name);
      fillCard(li, rows.get(name));
      if (list.children[i] !== li) list.insertBefore(li, list.children[i] || null);
    });
    for (const li of old.values()) li.remove();
  }

  function newCard(name) {
    const li = html("li");
    li.dataset.table = name;
    const button = html("button", null, li, "card");
    button.type = "button";
    button.setAttribute("aria-controls", "details");
    button.onclick = () => choose(name);
    const head = html("span", null, button, "card-head");
    html("span", name, head, "name");
    html("span", null, head, "badges");
    html("span", null, button, "state");
    html("span", null, button, "game-line");
    html("span", null, button, "card-flags");
    html("span", null, button, "card-answer");
    return li;
  }

  function fillCard(li, t) {
    const button = li.firstChild;
    const cls = `card ${t.status}` + (t.violations ? " needs-judge" : t.open_flags ? " has-flags" : "") +
      (t.name === chosen ? " selected" : "");
    if (button.className !== cls) button.className = cls;
    button.setAttribute("aria-expanded", String(t.name === chosen));
    button.dataset.violations = t.violations;
    const badges = button.querySelector(".badges");
    const others = t.open_flags - t.violations;
    const badgeText = [t.violations ? plural(t.violations, "violation") : "",
      others ? plural(others, "other flag") : ""].filter(Boolean);
    const key = badgeText.join("|");
    if (badges.dataset.key !== key) {
      badges.dataset.key = key;
      badges.replaceChildren();
      if (t.violations) html("span", badgeText[0], badges, "badge violation");
      if (others) html("span", badgeText[badgeText.length - 1], badges, "badge other");
    }
    const state = button.querySelector(".state");
    state.textContent = statusText(t);
    state.className = `state ${t.status}`;
    button.querySelector(".game-line").textContent = gameText(t);
    const open = t.flags.filter((f) => !f.decision);
    const flagKey = JSON.stringify(open.map((f) => [f.id, f.kind, flagText(f)]));
    const list = button.querySelector(".card-flags");
    if (list.dataset.key !== flagKey) {
      list.dataset.key = flagKey;
      list.replaceChildren();
      for (const f of open.slice(0, FLAGS_ON_CARD)) html("span", flagText(f), list, `card-flag ${f.kind}`);
      if (open.length > FLAGS_ON_CARD) {
        html("span", `and ${open.length - FLAGS_ON_CARD} more`, list, "card-flag more");
      }
    }
    const said = t.answer;
    button.querySelector(".card-answer").textContent = said && said.ok === false
      ? `refused a decision: ${said.error || "no reason given"}` : "";
  }

  // -- one table's details ---------------------------------------------------------------

  function choose(name) {
    chosen = name;
    details = null;
    fetchedFor = "";
    $("details").hidden = false;
    say("d-name", name);
    if (listing) drawCards(listing.tables);
    fetchDetails("");
    $("d-name").focus();
  }

  function closeDetails() {
    const was = chosen;
    chosen = null;
    details = null;
    $("details").hidden = true;
    if (listing) drawCards(listing.tables);
    const card = was && document.querySelector(`li[data-table="${CSS.escape(was)}"] button`);
    if (card) card.focus();
  }

  async function fetchDetails(rowText) {
    fetchedFor = rowText;
    if (fetching) { again = true; return; }
    fetching = true;
    try {
      do {
        again = false;
        const name = chosen;
        if (!name) break;
        try {
          const shown = await get(`/api/tables/${encodeURIComponent(name)}`);
          if (name === chosen) { details = shown; showDetails(); }
        } catch (err) {
          if (name === chosen) say("d-answer", err instanceof Refusal && err.status === 404
            ? `${name} is no longer listed` : `the hub did not answer: ${err.message}`);
        }
      } while (again);
    } finally {
      fetching = false;
    }
  }

  function showDetails() {
    const t = details;
    say("d-name", t.name);
    const state = $("d-status");
    state.textContent = statusText(t);
    state.className = `state ${t.status}`;
    say("d-game", gameText(t) + (t.events ? ` \u00b7 ${plural(t.events, "event")} received` : ""));
    const problem = $("d-problem");
    problem.hidden = !t.problem;
    problem.textContent = t.problem ? `${plural(t.problems, "message")} not read; the last: ${t.problem}` : "";
    const link = $("d-link");
    const linkable = Boolean(t.reachable === true && t.url && /^https?:\/\//i.test(t.url));
    link.hidden = !linkable;
    if (linkable && link.href !== t.url) link.href = t.url;
    // tried and not answering; or not tried, and why (an address the hub does not try)
    const note = $("d-unreachable");
    const why = t.reachable === false ? "Its table view cannot be reached from here."
      : t.url && t.unchecked ? `Its table view's address is not tried from here (${t.unchecked}).`
        : "";
    note.hidden = !why;
    if (note.textContent !== why) note.textContent = why;
    showFlags(t);
    showAnswer(t);
    showEvents(t);
  }

  // Each flag of the table's game, its decision as the table says it, and Accept and
  // Dismiss for one not decided yet; kept by flag id, so a button keeps its focus.
  function showFlags(t) {
    const list = $("d-flags");
    $("d-no-flags").hidden = t.flags.length > 0;
    const old = new Map([...list.children].map((li) => [li.dataset.flag, li]));
    t.flags.forEach((f, i) => {
      let li = old.get(String(f.id));
      if (li) old.delete(String(f.id));
      else li = newFlag(t.name, f.id);
      fillFlag(li, f, t.commands, t.game_id, t.status === "online");
      if (list.children[i] !== li) list.insertBefore(li, list.children[i] || null);
    });
    for (const li of old.values()) li.remove();
  }

  function newFlag(table, id) {
    const li = html("li");
    li.dataset.flag = id;
    html("span", null, li, "flag-kind");
    html("span", null, li, "flag-text");
    html("span", null, li, "flag-numbers");
    html("span", null, li, "flag-message");
    html("span", null, li, "flag-decision");
    const row = html("span", null, li, "row decide");
    for (const [decision, word] of [["accept", "Accept"], ["dismiss", "Dismiss"]]) {
      const b = html("button", word, row, `decide-${decision}`);
      b.type = "button";
      b.dataset.decision = decision;
      b.setAttribute("aria-label", `${word} flag ${id}`);
      b.onclick = () => decide(table, id, decision);
    }
    return li;
  }

  // Who decided, as the table records it: "table" (its own page or keys), or
  // "hub:<name>" for a judge through a hub.
  function decidedBy(by) {
    if (!by) return "";
    by = String(by);
    if (by === "table") return " at the table";
    return by.startsWith("hub:") ? ` by judge ${by.slice(4)}` : ` by ${by}`;
  }

  function fillFlag(li, f, commands, gameId, online) {
    const cls = `${f.kind}${f.decision ? " decided " + f.decision : ""}`;
    if (li.className !== cls) li.className = cls;
    li.querySelector(".flag-kind").textContent = KINDS[f.kind] || f.kind;
    li.querySelector(".flag-text").textContent = flagText(f);
    li.querySelector(".flag-numbers").textContent = f.label && f.headline ? f.label : "";
    li.querySelector(".flag-message").textContent = f.message;
    let decided = "", refused = false;
    if (f.decision) {
      decided = `${DECIDED[f.decision] || f.decision}` + decidedBy(f.by) +
        (f.note ? `: ${f.note}` : "");
    } else {
      // the newest command about it in this game (commands come newest first)
      const last = commands.find((c) => c.flag === f.id && c.game_id === gameId);
      if (last && !last.answer) {
        decided = `${last.decision} sent by ${last.by}; waiting for the table` +
          (last.queued ? " (the hub is not connected to the broker)" : "");
      } else if (last && !last.answer.ok) {
        refused = true;
        decided = `${last.decision} by ${last.by} refused by the table: ` +
          (last.answer.error || "no reason given");
      }
    }
    const said = li.querySelector(".flag-decision");
    said.textContent = decided;
    said.classList.toggle("refused", refused);
    li.querySelector(".decide").hidden = Boolean(f.decision);
    // a table away cannot take a decision: it would be lost, so none is offered
    for (const b of li.querySelectorAll(".decide button")) {
      b.disabled = !online;
      b.title = online ? "" : "the table is offline: decide once it is back";
    }
  }

  function showAnswer(t) {
    if (!sent || sent.table !== t.name) return;
    const command = t.commands.find((c) => c.id === sent.id);
    if (!command) return;
    const what = `${sent.decision === "accept" ? "Accept" : "Dismiss"} flag #${sent.flag}`;
    const box = $("d-answer");
    if (!command.answer) {
      say("d-answer", `${what}: sent to ${t.name}, waiting for its answer...`);
      box.className = "answer waiting";
    } else if (command.answer.ok) {
      say("d-answer", `${what}: ${t.name} took it.`);
      box.className = "answer ok";
    } else {
      say("d-answer", `${what}: ${t.name} refused it: ${command.answer.error || "no reason given"}`);
      box.className = "answer refused";
    }
  }

  function showEvents(t) {
    const list = $("d-events");
    const key = JSON.stringify(t.last_events.map((e) => [t.game_id, e.id]));
    if (list.dataset.key === key) return;
    list.dataset.key = key;
    list.replaceChildren();
    for (const e of [...t.last_events].reverse()) {
      const at = typeof e.t === "number" ? `${e.t.toFixed(1)} s ` : "";
      const li = html("li", null, list, e.kind);
      html("span", at, li, "event-time");
      html("span", `${e.kind.replace(/_/g, " ")}: ${e.message || ""}`, li);
    }
  }

  // -- deciding ---------------------------------------------------------------------------

  function clearErrors() {
    for (const out of document.querySelectorAll("#details .field-error")) out.textContent = "";
    for (const input of document.querySelectorAll("#details .invalid")) input.classList.remove("invalid");
  }

  async function decide(table, flag, decision) {
    clearErrors();
    const by = $("judge").value.trim();
    const note = $("note").value.trim();
    const body = { flag, decision, by };
    if (note) body.note = note;
    const box = $("d-answer");
    box.className = "answer waiting";
    say("d-answer", `sending ${decision} of flag #${flag}...`);
    try {
      const out = await post(`/api/tables/${encodeURIComponent(table)}/decide`, body);
      sent = { table, id: out.command, flag, decision };
      $("note").value = "";
      fetchDetails(fetchedFor);
    } catch (err) {
      box.className = "answer refused";
      if (err instanceof Refusal && (err.field === "by" || err.field === "note")) {
        const input = $(err.field === "by" ? "judge" : "note");
        input.classList.add("invalid");
        document.querySelector(`#details .field-error[data-field="${err.field}"]`).textContent =
          err.message.startsWith(`${err.field}: `) ? err.message.slice(err.field.length + 2) : err.message;
        say("d-answer", "");
        input.focus();
      } else {
        say("d-answer", err instanceof Refusal ? err.message : `the hub did not answer: ${err.message}`);
      }
    }
  }

  // -- the judge's name, kept in this browser ----------------------------------------------

  function keepJudge() {
    const store = (() => { try { return window.localStorage; } catch (err) { return null; } })();
    const input = $("judge");
    if (store) input.value = store.getItem(JUDGE_KEY) || "";
    input.addEventListener("input", () => { if (store) store.setItem(JUDGE_KEY, input.value.trim()); });
  }

  // -- start -----------------------------------------------------------------------------

  keepJudge();
  holdOrder();
  $("d-close").onclick = closeDetails;
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && chosen) closeDetails();
  });
  // the ages said ("offline for 2 min") grow between messages
  setInterval(() => {
    if (listing) drawCards(listing.tables);
    if (details) {
      const state = $("d-status");
      state.textContent = statusText(details);
    }
  }, 10000);
  connect();
})();
