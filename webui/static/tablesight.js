// TableSight pages: one stream per page, shapes drawn from the server's table-space state.
// Plain ES2020, no build step (OBS ships an older Chromium). No rules logic here: every
// number shown comes from the server; this file only maps inches to pixels and draws.
"use strict";

const TS = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  const PALETTE = ["#e8463c", "#3c8be8", "#f2b233", "#48b96b", "#b55fd6", "#e87b3c"];
  const params = new URLSearchParams(location.search);
  const token = keepToken();

  // The controls' token (a server listening on the LAN prints it in its URL): kept for this
  // tab's requests, and taken out of the address bar so that it stays out of the history,
  // bookmarks and links copied from the page.
  function keepToken() {
    const given = params.get("token");
    const store = (() => { try { return window.sessionStorage; } catch (err) { return null; } })();
    if (given === null) return store ? store.getItem("tablesight.token") : null;
    if (store) store.setItem("tablesight.token", given);
    params.delete("token");
    const url = new URL(location.href);
    url.search = params.toString();
    history.replaceState(history.state, "", url);
    return given;
  }

  function option(name, fallback = true) {
    const v = params.get(name);
    if (v === null) return fallback;
    return !["0", "false", "no", "off"].includes(v.toLowerCase());
  }

  // side -> colour: the palette in roster order, or ?side_colors=red:ff0000,blue:00f
  function sideColours(sides) {
    const given = {};
    for (const pair of (params.get("side_colors") || "").split(",")) {
      const [side, colour] = pair.split(":");
      if (side && colour) given[side] = colour.startsWith("#") ? colour : "#" + colour;
    }
    const out = {};
    sides.forEach((s, i) => { out[s] = given[s] || PALETTE[i % PALETTE.length]; });
    return out;
  }

  // Table inches (z = 0) to pixels: OpenCV's pinhole model with its distortion terms,
  // or a homography when the table was mapped without camera intrinsics.
  function projector(cam) {
    if (!cam) return null;
    if (cam.homography) {
      const H = cam.homography;
      return (x, y) => {
        const w = H[2][0] * x + H[2][1] * y + H[2][2];
        return [(H[0][0] * x + H[0][1] * y + H[0][2]) / w, (H[1][0] * x + H[1][1] * y + H[1][2]) / w];
      };
    }
    const R = cam.rotation, t = cam.translation, K = cam.camera_matrix, d = cam.dist_coeffs;
    const k = (i) => d[i] || 0;
    return (x, y) => {
      const X = R[0][0] * x + R[0][1] * y + t[0];
      const Y = R[1][0] * x + R[1][1] * y + t[1];
      const Z = R[2][0] * x + R[2][1] * y + t[2];
      const a = X / Z, b = Y / Z, r2 = a * a + b * b;
      const radial = (1 + k(0) * r2 + k(1) * r2 * r2 + k(4) * r2 * r2 * r2) /
                     (1 + k(5) * r2 + k(6) * r2 * r2 + k(7) * r2 * r2 * r2);
      const xd = a * radial + 2 * k(2) * a * b + k(3) * (r2 + 2 * a * a) + k(8) * r2 + k(9) * r2 * r2;
      const yd = b * radial + k(2) * (r2 + 2 * b * b) + 2 * k(3) * a * b + k(10) * r2 + k(11) * r2 * r2;
      return [K[0][0] * xd + K[0][1] * yd + K[0][2], K[1][1] * yd + K[1][2]];
    };
  }

  function el(name, attrs = {}, parent = null) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  function pathOf(points, map, closed = true) {
    if (!points || !points.length) return "";
    const p = points.map(([x, y]) => map(x, y).map((v) => v.toFixed(1)).join(" "));
    return "M" + p.join(" L") + (closed ? " Z" : "");
  }

  function ring(cx, cy, r, n = 72) {
    const out = [];
    for (let i = 0; i < n; i++) {
      const a = (2 * Math.PI * i) / n;
      out.push([cx + r * Math.cos(a), cy + r * Math.sin(a)]);
    }
    return out;
  }

  const num = (v, digits = 2) => (v === null || v === undefined ? "-" : Number(v).toFixed(digits));

  // "movement: 7.30 in / 6.00" or "close call: 0.97 in +/- 0.04 / 1.00"
  function flagLabel(f) {
    const pm = f.uncertainty ? ` +/- ${num(f.uncertainty)}` : "";
    if (f.measured === null) return f.rule;
    return `${f.rule.replace("_", " ")}: ${num(f.measured)} in${pm} / ${num(f.limit)}`;
  }

  // Draws the state into an <svg>. ``map`` turns table inches into the svg's units.
  function draw(svg, state, map, opts) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    if (!state || !map) return;
    const colours = sideColours(state.session.sides);
    const flagged = {};
    for (const f of state.flags) {
      if (f.decision === "dismiss") continue;
      (flagged[f.model] = flagged[f.model] || []).push(f);
    }
    const g = (cls) => el("g", { class: cls }, svg);
    const terrain = g("terrain");
    for (const t of state.terrain) {
      el("path", { d: pathOf(t.polygon, map), class: "terrain-piece", "data-terrain": t.id }, terrain);
    }
    if (opts.zones) {
      const zones = g("zones");
      for (const z of state.zones) {
        el("path", { d: pathOf(z.outline, map), class: "zone", "data-zone": z.model,
                     stroke: colours[z.side] }, zones);
      }
    }
    if (opts.links) {
      const links = g("links");
      for (const l of state.links) {
        const [a, b] = l.points;
        const [x1, y1] = map(a[0], a[1]), [x2, y2] = map(b[0], b[1]);
        el("line", { x1, y1, x2, y2, class: l.ok ? "link" : "link broken",
                     "data-link": `${l.a}-${l.b}` }, links);
      }
    }
    const reach = g("reach");
    for (const m of state.models) {
      if (!m.move || !(opts.selected === m.id || (opts.allReach && m.moved))) continue;
      el("path", { d: pathOf(ring(m.start[0], m.start[1], m.move.allowance_in), map),
                   class: "allowance", "data-reach": m.id }, reach);
      if (m.move.route.length > 1) {
        el("path", { d: pathOf(m.move.route, map, false), class: "route", "data-route": m.id }, reach);
      }
      if (m.start_outline) el("path", { d: pathOf(m.start_outline, map), class: "ghost" }, reach);
    }
    const bases = g("bases");
    for (const m of state.models) {
      const cls = ["base"];
      if (flagged[m.id]) cls.push("flagged");
      if (opts.selected === m.id) cls.push("selected");
      if (m.track === "hidden") cls.push("hidden");
      const node = el("path", { d: pathOf(m.outline, map), class: cls.join(" "),
                                stroke: colours[m.side], "data-model": m.id }, bases);
      node.addEventListener("click", (ev) => { ev.stopPropagation(); opts.onModel && opts.onModel(m.id); });
      node.addEventListener("mouseenter", () => opts.onHover && opts.onHover(m.id));
    }
    if (opts.labels) {
      const labels = g("labels");
      for (const m of state.models) {
        const [x, y] = map(m.x, m.y);
        const t = el("text", { x, y: y - opts.labelOffset, class: "label", "data-label": m.id }, labels);
        t.textContent = m.id;
        for (const [i, f] of (flagged[m.id] || []).entries()) {
          const n = el("text", { x, y: y + opts.labelOffset * (1.6 + 1.3 * i),
                                 class: `flag-label ${f.kind}`, "data-flag": f.id }, labels);
          n.textContent = flagLabel(f);
        }
      }
    }
  }

  // One EventSource per page: state messages and every event, in order.
  function connect(handlers) {
    let source = null, retry = null;
    let next = 0;
    function open() {
      source = new EventSource(`/api/stream?since=${next}`);
      source.addEventListener("state", (m) => handlers.state(JSON.parse(m.data)));
      source.addEventListener("event", (m) => {
        const e = JSON.parse(m.data);
        next = e.id + 1;
        handlers.event(e);
      });
      source.addEventListener("reset", () => { next = 0; handlers.reset && handlers.reset(); });
      // The browser would reconnect to the URL it first opened, and be sent every event
      // again from there: reconnect here instead, from the first event not yet seen.
      source.onerror = () => {
        handlers.status && handlers.status("reconnecting");
        source.close();
        clearTimeout(retry);
        retry = setTimeout(open, 1000);
      };
      source.onopen = () => handlers.status && handlers.status("connected");
    }
    open();
    return () => { clearTimeout(retry); source.close(); };
  }

  async function post(url, body) {
    const headers = { "Content-Type": "application/json" };
    if (token) headers["X-TableSight-Token"] = token;
    const r = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
    const data = await r.json();
    if (!r.ok) throw new Error(data.error ? data.error.message : r.statusText);
    return data;
  }

  async function get(url) {
    const r = await fetch(url);
    const data = await r.json();
    if (!r.ok) throw new Error(data.error ? data.error.message : r.statusText);
    return data;
  }

  // An HTML element with its text: every string from the server (names from a roster or a
  // match file, messages) goes into the page as text, never as markup.
  function html(name, text = null, parent = null) {
    const node = document.createElement(name);
    if (text !== null) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  // The card shown for a model: its profile, its move, and its distances to those near it.
  function modelCard(info) {
    const m = info.model;
    const card = document.createDocumentFragment();
    html("h2", m.id, card);
    html("div", `${m.side}, unit ${m.unit}, M ${m.movement_in} in, ` +
      `${m.base.shape} ${m.base.length_mm}x${m.base.width_mm} mm ${m.keywords.join(" ")}`, card);
    html("div", m.move ? `moved ${num(m.move.shortest_in)} in of ${num(m.move.allowance_in)} ` +
      `(straight ${num(m.move.straight_in)})` : "", card);
    const near = html("table", null, card);
    near.dataset.testid = "near";
    for (const n of info.near) {
      const row = html("tr", null, near);
      html("td", n.model, row);
      html("td", `${num(n.distance_in)} in +/- ${num(n.uncertainty_in)}`, row);
    }
    return card;
  }

  // "ganger to brute: 15.40 in +/- 0.01" (or to a point "(20.00, 10.00)")
  function measureText(out) {
    const to = Array.isArray(out.to) ? `(${num(out.to[0])}, ${num(out.to[1])})` : out.to;
    return `${out.from} to ${to}: ${num(out.distance_in)} in +/- ${num(out.uncertainty_in)}`;
  }

  // -- what the pages share: the message line, requests, selects and the keyboard -------

  // The page's message line (#message).
  function say(text) { document.getElementById("message").textContent = text; }

  // A request's answer, or null with its refusal said on the message line.
  async function act(promise) {
    try { const out = await promise; say(""); return out; } catch (err) { say(err.message); return null; }
  }

  // A <select>'s options: ``values`` (after a ``blank`` one, if given), keeping the one
  // chosen if it is still there and ``keep``.
  function fill(select, values, keep = true, blank = null) {
    const old = select.value;
    select.textContent = "";
    if (blank !== null) select.add(new Option(blank, ""));
    for (const v of values) select.add(new Option(v, v));
    if (keep && values.includes(old)) select.value = old;
  }

  // The page's keyboard: the server gives each key's action (#keys, from webui/keys.py,
  // which the help dialog lists too); ``actions`` maps action names to functions. Keys
  // are the page's unless typing in a field, with ctrl, alt or meta, or while the help is
  // open (but "?", which closes it); ``ready()`` says whether the page can act yet.
  function keyboard(actions, ready = () => true) {
    const bound = JSON.parse(document.getElementById("keys").textContent);
    const help = document.getElementById("help");
    actions = { help: () => (help.open ? help.close() : help.showModal()), ...actions };
    document.getElementById("help-button").onclick = () => help.showModal();
    document.addEventListener("keydown", (ev) => {
      const el = document.activeElement;
      const typing = (el.tagName === "INPUT" && el.type !== "range") ||
        ["SELECT", "TEXTAREA"].includes(el.tagName);
      if (typing || ev.ctrlKey || ev.metaKey || ev.altKey || !ready()) return;
      if (help.open && ev.key !== "?") return;
      const shifted = ev.shiftKey && ev.key.length > 1 ? bound[`Shift+${ev.key}`] : undefined;
      const action = actions[shifted || bound[ev.key]];
      if (!action) return;
      action(ev);
      if (ev.key !== "Escape") ev.preventDefault();  // Escape closes dialogs too
    });
  }

  // -- models and measuring ---------------------------------------------------------------

  // Clicking models: select one (its card shown), or measure edge to edge between two
  // models, or a model and a point of the map (drawn in inches, y = 0 at the bottom).
  // ``page``: { map, table: () => the state's table, select: (id) => void }.
  function modelTool(page) {
    const $ = (id) => document.getElementById(id);
    let measuring = null;  // null: selecting; "": measuring, no model yet; else the first
    const button = $("measure-button");
    function finish(out) {
      measuring = null;
      button.classList.remove("active");
      if (out) $("measure").textContent = measureText(out);
    }
    let asked = 0;  // the newest card asked for is the one shown, whatever answers last
    async function hover(id) {
      const mine = ++asked;
      const got = await act(get(`/api/models/${encodeURIComponent(id)}`));
      if (got && mine === asked) {
        $("info").textContent = "";
        $("info").appendChild(modelCard(got));
      }
    }
    async function click(id) {
      if (measuring === null) { page.select(id); hover(id); return; }
      if (measuring === "") {
        measuring = id;
        say(`measuring from ${id}: click a model or a point on the map`);
        return;
      }
      const a = encodeURIComponent(measuring), b = encodeURIComponent(id);
      finish(await act(get(`/api/measure?a=${a}&b=${b}`)));
    }
    page.map.addEventListener("click", async (ev) => {
      if (!measuring) return;
      const pt = page.map.createSVGPoint();
      pt.x = ev.clientX; pt.y = ev.clientY;
      const p = pt.matrixTransform(page.map.getScreenCTM().inverse());
      const y = page.table().depth_in - p.y;
      finish(await act(get(`/api/measure?a=${encodeURIComponent(measuring)}&x=${p.x}&y=${y}`)));
    });
    function start() {
      measuring = "";
      button.classList.add("active");
      say("measure: click the first model");
    }
    button.onclick = start;
    return { hover, click, start, cancel: () => finish(null) };
  }

  // The picture's overlay (cleared when the picture cannot be mapped) and the top-down
  // map, seen from the table's near edge (y = 0 at the bottom) as a camera usually is.
  function drawViews(overlay, map, state, opts) {
    const cam = state.camera;
    if (cam) {
      overlay.setAttribute("viewBox", `0 0 ${cam.image_size[0]} ${cam.image_size[1]}`);
      draw(overlay, state, projector(cam), { ...opts, labelOffset: cam.image_size[1] / 60 });
    } else {
      draw(overlay, null, null, opts);
    }
    const { width_in: width, depth_in: depth } = state.table;
    map.setAttribute("viewBox", `-1 -1 ${width + 2} ${depth + 2}`);
    draw(map, state, (x, y) => [x, depth - y], { ...opts, labelOffset: 0.9 });
    el("rect", { x: 0, y: 0, width, height: depth, class: "table-edge", fill: "none",
                 stroke: "#889", "stroke-width": 0.08 }, map);
  }

  // The open flags as list items, each with accept and dismiss: ``decide(id, decision)``.
  function listFlags(list, flags, decide) {
    list.textContent = "";
    for (const f of flags) {
      const li = document.createElement("li");
      li.className = `${f.kind} ${f.decision || ""}`;
      li.dataset.flag = f.id;
      li.textContent = `${f.model}: ${flagLabel(f)} ` + (f.decision ? `(${f.decision}ed) ` : "");
      li.title = f.message;
      for (const decision of ["accept", "dismiss"]) {
        const b = document.createElement("button");
        b.textContent = decision;
        b.className = `flag-${decision}`;
        b.onclick = () => decide(f.id, decision);
        li.appendChild(b);
      }
      list.appendChild(li);
    }
  }

  return { option, sideColours, projector, draw, connect, post, get, num, flagLabel, el, pathOf,
           modelCard, measureText, modelTool, drawViews, listFlags, say, act, fill, keyboard };
})();
