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

  function pathOf(points, map, closed = true, digits = 1) {
    if (!points || !points.length) return "";
    const p = points.map(([x, y]) => map(x, y).map((v) => v.toFixed(digits)).join(" "));
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

  // A flag's words come from the server (rules/view.py): ``label`` with the numbers for the
  // players ("movement: 7.30 in / 6.00"), ``caption`` and ``headline`` for viewers.
  function flagLabel(f) { return f.label; }

  // -- drawing ---------------------------------------------------------------------------
  // Each drawing keeps its layers, and each layer its shapes, keyed (by model id, flag id,
  // ...): a redraw updates them in place, so the shape under the pointer stays the same
  // element however often the state comes.

  // "shade" holds the fills of reach regions (the layer is faded as a whole, so regions
  // that overlap do not darken each other), "shade-edge" their outlines; both lie under
  // everything else, the labels on top.
  const LAYERS = ["edge", "terrain", "shade", "shade-edge", "zones", "links", "reach", "rings",
                  "bases", "climbs", "marks", "measure", "leaders", "labels"];

  function layers(svg) {
    if (!svg._layers) {
      svg._layers = {};
      for (const name of LAYERS) svg._layers[name] = el("g", { class: name }, svg);
    }
    return svg._layers;
  }

  // Makes ``group``'s children the ``items`` ({key, tag, attrs, text, make}) in order: a
  // child of the same key is kept and its attributes changed where they differ.
  function sync(group, items) {
    const old = new Map();
    for (const c of group.children) old.set(c.getAttribute("data-key"), c);
    let i = 0;
    for (const it of items) {
      let node = old.get(it.key);
      if (node && node.tagName !== it.tag) node = undefined;
      if (node) old.delete(it.key);
      else {
        node = document.createElementNS(SVG, it.tag);
        node.setAttribute("data-key", it.key);
        if (it.make) it.make(node);
      }
      for (const [k, v] of Object.entries(it.attrs)) {
        const value = String(v);
        if (node.getAttribute(k) !== value) node.setAttribute(k, value);
      }
      for (const a of [...node.attributes]) {
        if (a.name !== "data-key" && !(a.name in it.attrs)) node.removeAttribute(a.name);
      }
      if (it.text !== undefined && node.textContent !== it.text) node.textContent = it.text;
      node._base = it.attrs.transform === undefined ? "" : String(it.attrs.transform);
      if (group.children[i] !== node) group.insertBefore(node, group.children[i] || null);
      i++;
    }
    for (const n of old.values()) n.remove();
  }

  // Screen pixels to the drawing's units (its viewBox scales it uniformly).
  function unitsPerPixel(svg) {
    const ctm = svg.getScreenCTM && svg.getScreenCTM();
    if (ctm && ctm.a > 0) return 1 / ctm.a;
    const vb = svg.viewBox && svg.viewBox.baseVal;
    return vb && vb.width && svg.clientWidth ? vb.width / svg.clientWidth : 1;
  }

  // A text's width and its ascent and descent, in pixels at ``px``.
  const ruler = document.createElement("canvas").getContext("2d");
  const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
  const sizes = new Map();
  function textSize(text, px) {
    const key = `${px}|${text}`;
    if (!sizes.has(key)) {
      ruler.font = `600 ${px}px ${FONT}`;
      const m = ruler.measureText(text);
      const up = m.fontBoundingBoxAscent || px * 0.95, down = m.fontBoundingBoxDescent || px * 0.25;
      if (sizes.size > 2000) sizes.clear();
      sizes.set(key, { w: m.width, up, down });
    }
    return sizes.get(key);
  }

  const hits = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
  const grow = (b, d) => [b[0] - d, b[1] - d, b[2] + d, b[3] + d];

  // Whether the segment p-q meets the box [l, t, r, b] (Liang-Barsky).
  function segmentHits(p, q, box) {
    let t0 = 0, t1 = 1;
    const dx = q[0] - p[0], dy = q[1] - p[1];
    for (const [a, c] of [[-dx, p[0] - box[0]], [dx, box[2] - p[0]], [-dy, p[1] - box[1]], [dy, box[3] - p[1]]]) {
      if (a === 0) { if (c < 0) return false; continue; }
      const t = c / a;
      if (a < 0) { if (t > t1) return false; if (t > t0) t0 = t; }
      else { if (t < t0) return false; if (t < t1) t1 = t; }
    }
    return true;
  }

  function inside(pt, poly) {
    let inn = false;
    for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
      const [xi, yi] = poly[i], [xj, yj] = poly[j];
      if ((yi > pt[1]) !== (yj > pt[1]) && pt[0] < ((xj - xi) * (pt[1] - yi)) / (yj - yi) + xi) inn = !inn;
    }
    return inn;
  }

  // Whether the box meets a shape: {box} alone, or {box, poly} (an outline, closed).
  function meets(box, shape) {
    if (!hits(box, shape.box)) return false;
    const poly = shape.poly;
    if (!poly) return true;
    if (inside([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2], poly)) return true;
    for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
      if (segmentHits(poly[j], poly[i], box)) return true;
    }
    return false;
  }

  // How far a point is from a box (0 inside it), and the box's nearest point to it.
  function nearest(box, [x, y]) {
    const nx = Math.min(Math.max(x, box[0]), box[2]), ny = Math.min(Math.max(y, box[1]), box[3]);
    return [nx, ny, Math.hypot(nx - x, ny - y)];
  }

  // Reach regions (``reaches``: the API's answers, /api/reach and /api/threat, each with
  // ``kind`` "reach" or "threat"), shaded in the model's side colour with an outline over a
  // dark halo, readable over the picture; a threat's outline is dashed, and each model it
  // threatens is ringed. The server works every region out; here they are only drawn.
  function shade(L, state, map, reaches, colours) {
    const fills = [], edges = [];
    const models = new Map(state.models.map((m) => [m.id, m]));
    for (const a of reaches) {
      const colour = colours[a.side] || "#fff";
      // to a hundredth: the map is drawn in inches, and the region is exact to 0.05 in
      const d = a.geometry.coordinates.map((poly) => poly.map((r) => pathOf(r, map, true, 2)).join(" ")).join(" ");
      const key = `${a.kind}:${a.model}`;
      if (d) {
        fills.push({ key, tag: "path",
                     attrs: { d, class: `reach-area ${a.kind}`, fill: colour, "data-reach-of": a.model, "data-kind": a.kind } });
        edges.push({ key: `halo:${key}`, tag: "path", attrs: { d, class: "reach-halo" } });
        edges.push({ key: `edge:${key}`, tag: "path",
                     attrs: { d, class: `reach-edge ${a.kind}`, stroke: colour, "data-reach-edge": a.model } });
      }
      for (const id of a.threatened || []) {
        const m = models.get(id);
        if (!m) continue;
        let r = 0;
        for (const [x, y] of m.outline) r = Math.max(r, Math.hypot(x - m.x, y - m.y));
        edges.push({ key: `threatened:${a.model}:${id}`, tag: "path",
                     attrs: { d: pathOf(ring(m.x, m.y, r + 0.35, 36), map), class: "threatened", stroke: colour,
                              "data-threatened": id, "data-by": a.model } });
      }
    }
    sync(L.shade, fills);
    sync(L["shade-edge"], edges);
  }

  // Where can it go? A page's reach: one model's region at a time (``show``, ``toggle``,
  // ``hide``), by an action of its game or its threat, asked of the server
  // (/api/reach, /api/threat; ``from``: "here" or "start") and asked again, at most
  // every ``REACH_MS``, while the table changes (the server works it out again only when
  // something near the model moved). ``page``: { from, render: () => void }; ``bar``:
  // the page's reach bar (its model, a button per action and the threat, Hide, and the
  // server's one-line explanation), or null. ``drawn()``: the answers to draw
  // (``opts.reaches``).
  const REACH_MS = 500;
  function reachTool(page, bar = null) {
    let shown = null;      // {model, kind, action, answer, at: the table version asked at}
    let asked = 0, askedAt = -Infinity, timer = null, seen = null, off = null, pending = false;
    const enc = encodeURIComponent;
    const explain = bar && bar.querySelector(".reach-explain");
    function url(s) {
      const from = `&from=${page.from}`;
      if (s.kind === "threat") return `/api/threat?model=${enc(s.model)}${from}`;
      return `/api/reach?model=${enc(s.model)}${from}${s.action ? `&action=${enc(s.action)}` : ""}`;
    }
    function words(a) {
      if (a.kind !== "threat") return a.explain;
      const who = a.threatened.length ? a.threatened.join(", ") : "none of the other side";
      return `${a.explain}; its charge could reach ${who}`;
    }
    async function ask() {
      clearTimeout(timer);
      timer = null;
      const s = shown;
      if (!s) return;
      const mine = ++asked;
      askedAt = performance.now();
      s.at = seen;
      pending = true;
      let got = null, why = "";
      try { got = await get(url(s)); } catch (err) {
        why = err.message;
        if (err.field === "action") off = err.message;  // the game has no such action: not again
      }
      if (mine !== asked || shown !== s) return;
      pending = false;
      s.answer = got ? { ...got, kind: s.kind } : null;
      if (!got) s.why = why;
      paint();
      page.render();
      if (got) follow(seen);  // the table changed while it was worked out
    }
    // the bar: whose reach, by what, and what limits it
    function paint() {
      if (!bar) return;
      bar.hidden = !shown;
      if (!shown) return;
      const of = bar.querySelector(".reach-of");
      const text = `${shown.model}:`;
      if (of.textContent !== text) of.textContent = text;
      const action = shown.answer ? shown.answer.action : shown.action;
      for (const b of bar.querySelectorAll(".reach-actions button")) {
        const on = shown.kind === "threat" ? b.dataset.choice === "threat"
          : shown.kind === "reach" && b.dataset.choice === action;
        b.setAttribute("aria-pressed", String(on));
      }
      const said = shown.answer ? words(shown.answer) : shown.why || "working it out...";
      if (explain.textContent !== said) explain.textContent = said;
    }
    // the bar's buttons: the game's actions and the threat (``actions``: the state's)
    function actions(names) {
      if (!bar) return;
      const group = bar.querySelector(".reach-actions");
      const want = [...names, "threat"];
      const have = [...group.children].map((b) => b.dataset.choice);
      if (have.join("|") !== want.join("|")) {
        group.textContent = "";
        for (const name of want) {
          const b = html("button", name, group, name === "threat" ? "reach-threat" : null);
          b.type = "button";
          b.dataset.choice = name;
          b.title = name === "threat" ? "where its charge could end at most, and whom it could reach"
            : `where it may end a ${name}`;
          b.onclick = () => choose(name);
        }
      }
      paint();
    }
    function show(model, kind = "reach", action = null) {
      if (off) {
        shown = { model, kind, action, answer: null, why: off };
        paint();
        page.render();
        return;
      }
      shown = { model, kind, action, answer: null, at: null };
      paint();
      ask();
    }
    function hide() {
      clearTimeout(timer);
      timer = null;
      pending = false;
      asked++;
      const was = shown;
      shown = null;
      paint();
      if (was) page.render();
    }
    function choose(name) {
      if (!shown) return;
      if (name === "threat") show(shown.model, "threat");
      else show(shown.model, "reach", name);
    }
    // the table changed (``version``: the state's): asked again, at most every REACH_MS
    function follow(version) {
      seen = version;
      if (!shown || !shown.answer || pending || timer || shown.at === version) return;
      timer = setTimeout(ask, Math.max(0, askedAt + REACH_MS - performance.now()));
    }
    return {
      show, hide, choose, follow, actions,
      toggle(model) { if (shown && shown.model === model) hide(); else show(model); },
      of: () => (shown ? shown.model : null),
      drawn: () => (shown && shown.answer ? [shown.answer] : []),
    };
  }

  // Where each label goes: layout only, from what is drawn (no rules here). Each label,
  // in order (the measure, then flags, then names), takes the cheapest free spot round its
  // model: a spot is free when its box, with a gap of ``GAP_PX`` all round, is inside
  // ``bounds`` and meets neither a label placed before it nor any other model's base
  // outline or flag mark (``obstacles``: {owner, box, poly}). The spots: beside the base
  // in 16 directions, then ring by ring farther out, then anywhere in the bounds, nearest
  // first; covering its own base costs more, and a label keeps the spot it had (``kept``,
  // by its key: the offset from its anchor) while that is free and nearly as cheap. A
  // label no spot is free for is left off (``unplaced``). A label set apart from its base
  // gets a leader line (``leader``).
  // ``labels``: {key, owner, text, anchor: [x, y], r (the base's reach), prefer: "above" |
  // "below"}; lengths in the drawing's units, ``px`` the font's size on screen, ``k``
  // units per pixel. Returns each label with its ``box`` [left, top, right, bottom] and
  // the text's ``x`` (centre) and ``y`` (baseline).
  const GAP_PX = 3, LEADER_PX = 6;
  const DIRECTIONS = [[0, -1], [0.5, -1], [-0.5, -1], [1, -0.5], [-1, -0.5], [1, 0], [-1, 0],
                      [1, 0.5], [-1, 0.5], [0, 1], [0.5, 1], [-0.5, 1], [1, -1], [-1, -1],
                      [1, 1], [-1, 1]];
  function place(labels, obstacles, bounds, px, k, kept = new Map()) {
    const placed = [], out = [];
    const gap = GAP_PX * k;
    for (const lab of labels) {
      const size = textSize(lab.text, px);
      const pad = 0.15 * px * k;
      const w = size.w * k + 2 * pad, h = (size.up + size.down) * k + 2 * pad;
      const [ax, ay] = lab.anchor, r = lab.r;
      const own = obstacles.filter((o) => o.owner === lab.owner);
      const others = obstacles.filter((o) => o.owner !== lab.owner);
      const free = (box) => {
        if (box[0] < bounds[0] || box[1] < bounds[1] || box[2] > bounds[2] || box[3] > bounds[3]) return false;
        const wide = grow(box, gap);
        for (const p of placed) if (hits(wide, p.box)) return false;
        for (const o of others) if (meets(o.margin ? grow(box, o.margin) : wide, o)) return false;
        return true;
      };
      // how far a box is from its own base: from the outline where there is one
      const outline = own.find((o) => o.poly);
      const apart = (box) => {
        if (!outline) return Math.max(0, nearest(box, [ax, ay])[2] - r);
        if (meets(box, outline)) return 0;
        let d = Infinity;
        for (const q of outline.poly) d = Math.min(d, nearest(box, q)[2]);
        return d;
      };
      const cost = (box, turn) => {
        const [nx, ny] = nearest(box, [ax, ay]), far = apart(box);
        let c = far / k + turn;
        for (const o of own) if (meets(box, o)) c += o.poly ? 60 : 20;
        if (far > LEADER_PX * k) {  // a leader across another label or base is hard to follow
          for (const p of placed) if (segmentHits([ax, ay], [nx, ny], p.box)) c += 25;
          for (const o of others) if (o.poly && segmentHits([ax, ay], [nx, ny], o.box)) c += 10;
        }
        return c;
      };
      const up = lab.prefer === "below" ? 1 : -1;
      let best = null;
      const consider = (box, turn) => {
        if (!free(box)) return;
        const c = cost(box, turn);
        if (!best || c < best.cost) best = { cost: c, box };
      };
      for (let ring = 0; ring < 12; ring++) {
        const extra = ring * 0.9 * h;
        if (best && extra / k > best.cost) break;
        for (const [ux, uy0] of DIRECTIONS) {
          const uy = uy0 * -up;
          const reach = (r + gap + extra) * (Math.abs(ux) === 1 && Math.abs(uy) === 1 ? 0.72 : 1);
          const cx = ax + ux * (reach + w / 2), cy = ay + uy * (reach + h / 2);
          const turn = (uy0 === -1 ? 0 : uy0 === 1 ? 8 : 5) + Math.abs(ux) * 2;
          consider([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], turn);
        }
      }
      if (!best) {  // nothing free round it: anywhere in the bounds, nearest first
        const stepX = Math.max(w / 4, (bounds[2] - bounds[0]) / 60);
        const stepY = Math.max(h / 2, (bounds[3] - bounds[1]) / 60);
        for (let t = bounds[1]; t + h <= bounds[3]; t += stepY) {
          for (let l = bounds[0]; l + w <= bounds[2]; l += stepX) consider([l, t, l + w, t + h], 20);
        }
      }
      const was = kept.get(lab.key);
      if (best && was) {  // the spot it had, while free and nearly as cheap
        const box = [ax + was[0] - w / 2, ay + was[1] - h / 2, ax + was[0] + w / 2, ay + was[1] + h / 2];
        if (free(box) && cost(box, 0) <= best.cost + 12) best = { cost: 0, box };
      }
      if (!best) { out.push({ ...lab, unplaced: true }); continue; }
      const box = best.box;
      kept.set(lab.key, [(box[0] + box[2]) / 2 - ax, (box[1] + box[3]) / 2 - ay]);
      placed.push({ box });
      out.push({ ...lab, box, x: (box[0] + box[2]) / 2, y: box[1] + pad + size.up * k,
                 leader: apart(box) > LEADER_PX * k });
    }
    return out;
  }

  // The exclamation badge of a flagged model, drawn in a unit circle.
  function makeBadge(node) {
    el("circle", { r: 1, class: "badge-disc" }, node);
    el("path", { d: "M-0.15 -0.62 L0.15 -0.62 L0.09 0.16 L-0.09 0.16 Z M0 0.3 A0.16 0.16 0 1 0 0.001 0.3 Z",
                 class: "badge-glyph" }, node);
  }

  function boxOf(points) {
    let l = Infinity, t = Infinity, r = -Infinity, b = -Infinity;
    for (const [x, y] of points) { l = Math.min(l, x); t = Math.min(t, y); r = Math.max(r, x); b = Math.max(b, y); }
    return [l, t, r, b];
  }

  // Draws the state into an <svg>. ``map`` turns table inches into the svg's units;
  // ``opts.bounds`` is the part of the svg shown [left, top, right, bottom].
  function draw(svg, state, map, opts) {
    const L = layers(svg);
    if (!state || !map) {
      for (const g of Object.values(L)) sync(g, []);
      forget(svg);
      return;
    }
    const colours = sideColours(state.session.sides);
    const flagged = {}, routed = new Set();
    for (const f of state.flags) {
      if (f.decision === "dismiss") continue;
      (flagged[f.model] = flagged[f.model] || []).push(f);
      if (f.of_move) routed.add(f.model);  // a flag on its move: its measured route is drawn
    }
    sync(L.terrain, state.terrain.map((t) => ({
      key: t.id, tag: "path",
      attrs: { d: pathOf(t.polygon, map), class: "terrain-piece", "data-terrain": t.id } })));
    sync(L.zones, !opts.zones ? [] : state.zones.map((z) => ({
      key: z.model, tag: "path",
      attrs: { d: pathOf(z.outline, map), class: "zone", "data-zone": z.model, stroke: colours[z.side] } })));
    sync(L.links, !opts.links ? [] : state.links.map((l) => {
      const [a, b] = l.points;
      const [x1, y1] = map(a[0], a[1]), [x2, y2] = map(b[0], b[1]);
      return { key: `${l.a}-${l.b}`, tag: "line",
               attrs: { x1, y1, x2, y2, class: l.ok ? "link" : "link broken", "data-link": `${l.a}-${l.b}` } };
    }));
    // a move's reach (its allowance round its start, its start's outline) where it is
    // selected (every moved model's on a broadcast); the route the judge measured there
    // and wherever a flag is on the move, with a mark where it changes level (``climbs``)
    const k = unitsPerPixel(svg), px = opts.fontPx || 14;
    const reach = [], climbs = [], climbLabels = [], climbBoxes = [];
    const CLIMB_PX = 5;
    for (const m of state.models) {
      if (!m.move) continue;
      const reached = opts.selected === m.id || (opts.allReach && m.moved);
      if (reached) {
        reach.push({ key: `allowance:${m.id}`, tag: "path",
                     attrs: { d: pathOf(ring(m.start[0], m.start[1], m.move.allowance_in), map),
                              class: "allowance", "data-reach": m.id } });
      }
      if ((reached || routed.has(m.id)) && m.move.route.length > 1) {
        reach.push({ key: `route:${m.id}`, tag: "path",
                     attrs: { d: pathOf(m.move.route, map, false),
                              class: routed.has(m.id) ? "route flagged" : "route", "data-route": m.id } });
        (m.move.climbs || []).forEach((c, i) => {
          const [x, y] = map(c.at[0], c.at[1]), s = CLIMB_PX * k, up = c.rise_in > 0;
          const tip = up ? -s : s, foot = up ? 0.8 * s : -0.8 * s;  // a triangle pointing up or down
          const key = `${m.id}:${i}`;
          climbs.push({ key, tag: "path",
                        attrs: { d: `M${x.toFixed(2)} ${(y + tip).toFixed(2)} L${(x + s).toFixed(2)} ${(y + foot).toFixed(2)} ` +
                                    `L${(x - s).toFixed(2)} ${(y + foot).toFixed(2)} Z`,
                                 class: `climb ${up ? "up" : "down"}`, "data-climb": key, "data-model": m.id } });
          climbBoxes.push({ owner: `climb:${key}`, box: [x - s, y - s, x + s, y + s] });
          climbLabels.push({ key: `climb-label:${key}`, owner: `climb:${key}`, text: c.label, anchor: [x, y],
                             r: s, cls: "climb-label", data: { "data-climb": key } });
        });
      }
      if (reached && m.start_outline) {
        reach.push({ key: `ghost:${m.id}`, tag: "path",
                     attrs: { d: pathOf(m.start_outline, map), class: "ghost" } });
      }
    }
    sync(L.reach, reach);
    sync(L.climbs, climbs);
    shade(L, state, map, opts.reaches || [], colours);

    // bases in their side's colour; a flagged one keeps it, ringed and badged in the flag's
    const rings = [], bases = [], marks = [], names = [];
    const outlines = new Map(), badges = new Map();
    for (const m of state.models) {
      const pts = m.outline.map(([x, y]) => map(x, y));
      const box = boxOf(pts);
      const [cx, cy] = map(m.x, m.y);
      const r = Math.max(box[2] - box[0], box[3] - box[1]) / 2;
      const d = pathOf(m.outline, map);
      const cls = ["base"];
      const flags = flagged[m.id];
      if (flags) cls.push("flagged");
      if (opts.selected === m.id) cls.push("selected");
      if (m.track === "hidden") cls.push("hidden");
      bases.push({ key: m.id, tag: "path",
                   attrs: { d, class: cls.join(" "), stroke: colours[m.side], "data-model": m.id } });
      // what labels keep off: the outline as drawn, its stroke (and a flag's halo) round it
      outlines.set(m.id, { pts, centre: [cx, cy], r, margin: (flags ? 4 : 1.5) * k });
      names.push({ key: `label:${m.id}`, owner: m.id, text: m.id, r, cls: "label", data: { "data-label": m.id } });
      if (flags) {
        const kind = flags.some((f) => f.kind === "violation") ? "violation"
          : flags.some((f) => f.kind === "close_call") ? "close_call" : "advisory";
        rings.push({ key: m.id, tag: "path",
                     attrs: { d, class: `flag-ring ${kind}`, "data-flag-ring": m.id } });
        const br = 0.55 * px * k;
        const bx = box[2] + br * 0.2, by = box[1] - br * 0.2;
        marks.push({ key: m.id, tag: "g", make: makeBadge,
                     attrs: { class: `flag-mark ${kind}`, "data-model": m.id,
                              transform: `translate(${bx.toFixed(2)} ${by.toFixed(2)}) scale(${br.toFixed(3)})` } });
        badges.set(m.id, [bx, by, br]);
      }
    }
    sync(L.rings, rings);
    sync(L.bases, bases);
    sync(L.marks, marks);

    // the measured line, edge to edge between the closest points, with its length
    const measure = [], labels = [];
    const out = opts.measured;
    if (out && out.points) {
      const [[x1, y1], [x2, y2]] = out.points.map(([x, y]) => map(x, y));
      measure.push({ key: "line", tag: "line", attrs: { x1, y1, x2, y2, class: "measure-line" } });
      [[x1, y1], [x2, y2]].forEach(([x, y], i) => {
        measure.push({ key: `end:${i}`, tag: "circle", attrs: { cx: x, cy: y, r: 3 * k, class: "measure-end" } });
      });
      labels.push({ key: "measure-label:", owner: "", text: `${num(out.distance_in)} in`,
                    anchor: [(x1 + x2) / 2, (y1 + y2) / 2], r: 2 * k, cls: "measure-label", data: {} });
    }
    sync(L.measure, measure);

    // labels: the measure's, then each flag's and each name, placed apart (see ``place``)
    if (opts.labels) {
      for (const m of state.models) {
        for (const f of flagged[m.id] || []) {
          labels.push({ key: `flag-label:${f.id}`, owner: m.id, text: opts.caption ? f.caption : f.label,
                        r: outlines.get(m.id).r, prefer: "below", cls: `flag-label ${f.kind}`,
                        data: { "data-flag": f.id } });
        }
      }
      labels.push(...names, ...climbLabels);  // a climb's label last: it yields to the models'
    }
    // placed once the newest poses have moved the bases (the page's ``move`` right after
    // this), or at the end of this task where no poses follow (the replay)
    const kept = svg._labelling ? svg._labelling.kept : new Map();
    forget(svg);
    const S = svg._labelling = { labels, outlines, badges, climbs: climbBoxes, moved: new Map(), px, k, kept,
                                 bounds: opts.bounds || [-Infinity, -Infinity, Infinity, Infinity],
                                 due: true, placed: -Infinity, at: new Map(), follow: new Map(), timer: null };
    queueMicrotask(() => { if (svg._labelling === S && S.due) layout(svg); });

    // what each model's light message moves: its shapes, turned, and its marker, shifted
    // (see ``move``); its labels with it, and placed anew as it moves (see ``relabel``)
    const keyed = (g) => new Map([...g.children].map((n) => [n.getAttribute("data-key"), n]));
    const [B, R, M, Z] = [L.bases, L.rings, L.marks, L.zones].map(keyed);
    const posed = new Map();
    for (const m of state.models) {
      posed.set(m.id, { x: m.x, y: m.y, heading: m.heading || 0, track: m.track,
                        turned: [B.get(m.id), R.get(m.id), Z.get(m.id)].filter(Boolean),
                        shifted: [M.get(m.id)].filter(Boolean), moved: "" });
    }
    svg._posed = { map, models: posed };
  }

  // The labels of a drawing placed where its models stand now (as drawn: the last full
  // state's outlines, each moved as ``move`` moved its base) and drawn: each label's text,
  // and a leader from its base's edge to a label set apart. A label no room is left for
  // is kept, hidden (class ``unplaced``); ``svg.dataset.unplaced`` counts them.
  function layout(svg) {
    const S = svg._labelling;
    if (!S) return;
    clearTimeout(S.timer);
    S.timer = null;
    S.due = false;
    S.placed = performance.now();
    const L = layers(svg);
    const { k, px } = S;
    const where = new Map(), obstacles = [];
    for (const [id, o] of S.outlines) {
      const f = S.moved.has(id) ? S.moved.get(id).turn : (p) => p;
      const pts = o.pts.map(f);
      where.set(id, { centre: f(o.centre), pts });
      obstacles.push({ owner: id, poly: pts, box: grow(boxOf(pts), o.margin), margin: o.margin });
    }
    for (const [id, [bx, by, br]] of S.badges) {
      const [dx, dy] = S.moved.has(id) ? S.moved.get(id).shift : [0, 0];
      const x = bx + dx, y = by + dy;
      obstacles.push({ owner: id, box: [x - br, y - br, x + br, y + br] });
    }
    obstacles.push(...S.climbs);  // a route's climb marks stand where they are drawn
    // a model's labels go round where it stands now; others (the measure's, a climb's)
    // round their own point
    const labels = S.labels.map((lab) => (where.has(lab.owner) ? { ...lab, anchor: where.get(lab.owner).centre } : lab));
    const done = place(labels, obstacles, S.bounds, px, k, S.kept);
    const texts = [], leaders = [];
    let unplaced = 0;
    for (const p of done) {
      const attrs = { class: p.cls, "font-size": (px * k).toFixed(3), "stroke-width": (0.25 * px * k).toFixed(3), ...p.data };
      // every label keeps its text and its leader (idle, hidden, while the label sits by
      // its base): moving models re-place labels without making or removing elements
      const idle = { key: p.key, tag: "line",
                     attrs: { x1: p.anchor[0].toFixed(2), y1: p.anchor[1].toFixed(2), x2: p.anchor[0].toFixed(2),
                              y2: p.anchor[1].toFixed(2), class: `leader idle ${p.cls}`, "data-leader": p.key } };
      if (p.unplaced) {
        unplaced++;
        texts.push({ key: p.key, tag: "text", text: p.text,
                     attrs: { ...attrs, class: `${p.cls} unplaced`, x: p.anchor[0].toFixed(2), y: p.anchor[1].toFixed(2) } });
        leaders.push(idle);
        continue;
      }
      texts.push({ key: p.key, tag: "text", text: p.text, attrs: { ...attrs, x: p.x.toFixed(2), y: p.y.toFixed(2) } });
      if (!p.leader) leaders.push(idle);
      else {
        const [nx, ny] = nearest(p.box, p.anchor);
        const dx = nx - p.anchor[0], dy = ny - p.anchor[1];
        // from the outline's farthest point towards the label (its edge, for a convex base)
        let from = [p.anchor[0] + dx, p.anchor[1] + dy], most = -Infinity;
        for (const q of where.has(p.owner) ? where.get(p.owner).pts : [p.anchor]) {
          const along = (q[0] - p.anchor[0]) * dx + (q[1] - p.anchor[1]) * dy;
          if (along > most) { most = along; from = q; }
        }
        leaders.push({ key: p.key, tag: "line",
                       attrs: { x1: from[0].toFixed(2), y1: from[1].toFixed(2), x2: nx.toFixed(2), y2: ny.toFixed(2),
                                class: `leader ${p.cls}`, "data-leader": p.key } });
      }
    }
    sync(L.leaders, leaders);
    sync(L.labels, texts);
    svg.dataset.unplaced = String(unplaced);
    // where each base stood for this placement (its centre and a point of its edge), and
    // what moves with it until the next: its labels' texts and leaders
    S.at = new Map([...where].map(([id, w]) => [id, [w.centre, w.pts[0]]]));
    S.follow = new Map();
    const nodes = new Map([...L.labels.children, ...L.leaders.children].map((n) => [n, n.getAttribute("data-key")]));
    const owners = new Map(S.labels.map((lab) => [lab.key, lab.owner]));
    for (const [node, key] of nodes) {
      const owner = owners.get(key);
      if (!owner) continue;
      if (!S.follow.has(owner)) S.follow.set(owner, []);
      S.follow.get(owner).push(node);
    }
  }

  // Labels are placed anew (``layout``, which looks at every label against every base and
  // label) only when a base has moved from where their placement had it by more than
  // ``STILL_PX`` (a camera's noise moves none), and then at most every ``PLACE_MS``: the
  // first move at once, and the last one's placement when it is due. Meanwhile each
  // label is moved with its base, so a frame's poses cost a transform each, not a layout.
  const PLACE_MS = 200, STILL_PX = 0.5;
  function relabel(svg) {
    const S = svg._labelling;
    if (S.timer) return;
    const wait = S.due ? 0 : S.placed + PLACE_MS - performance.now();
    if (wait <= 0) layout(svg);
    else S.timer = setTimeout(() => { if (svg._labelling === S) layout(svg); }, wait);
  }

  // A drawing's labelling dropped (its placement due, if any, with it).
  function forget(svg) {
    if (svg._labelling) clearTimeout(svg._labelling.timer);
    svg._labelling = null;
  }

  // Moves the shapes drawn from the last full state to the models' newest poses (``poses``:
  // id -> [id, x, y, heading, z, track], from the stream's ``poses`` messages): a transform
  // on the existing elements, nothing made or removed. The next full state draws them anew.
  function move(svg, poses) {
    const P = svg._posed;
    if (!P) return;
    const turn = (x, y, heading) => {
      const a = (heading * Math.PI) / 180, [px, py] = P.map(x, y);
      const [qx, qy] = P.map(x + 0.5 * Math.cos(a), y + 0.5 * Math.sin(a));
      return [px, py, (Math.atan2(qy - py, qx - px) * 180) / Math.PI];
    };
    let stale = false;  // a base away from where its labels were placed
    for (const [id, m] of P.models) {
      const now = poses.get(id);
      if (!now) continue;
      const [, x, y, heading, , track] = now;
      const key = `${x} ${y} ${heading}`;
      if (key !== m.moved) {
        m.moved = key;
        const [x0, y0, a0] = turn(m.x, m.y, m.heading), [x1, y1, a1] = turn(x, y, heading);
        const dx = x1 - x0, dy = y1 - y0, da = a1 - a0;
        const still = Math.abs(dx) < 0.05 && Math.abs(dy) < 0.05;
        const turned = still && Math.abs(da) < 0.05 ? "" :
          `translate(${x1.toFixed(2)} ${y1.toFixed(2)}) rotate(${da.toFixed(2)}) ` +
          `translate(${(-x0).toFixed(2)} ${(-y0).toFixed(2)})`;
        const shifted = still ? "" : `translate(${dx.toFixed(2)} ${dy.toFixed(2)})`;
        for (const node of m.turned) transform(node, turned);
        for (const node of m.shifted) transform(node, shifted);
        // the same for the outline and the badge that the labels keep off; its labels
        // go with it from where they were placed, placed anew once it is away from there
        const S = svg._labelling;
        const o = S && S.outlines.get(id);
        if (o) {
          const a = (da * Math.PI) / 180, c = Math.cos(a), s = Math.sin(a);
          const f = ([u, v]) => [x1 + c * (u - x0) - s * (v - y0), y1 + s * (u - x0) + c * (v - y0)];
          if (!turned) S.moved.delete(id);
          else S.moved.set(id, { turn: f, shift: still ? [0, 0] : [dx, dy] });
          const was = S.at.get(id);
          if (was) {
            const [centre, edge] = [f(o.centre), f(o.pts[0])];
            const ex = centre[0] - was[0][0], ey = centre[1] - was[0][1];
            const along = Math.abs(ex) < 0.05 && Math.abs(ey) < 0.05 ? "" : `translate(${ex.toFixed(2)} ${ey.toFixed(2)})`;
            for (const node of S.follow.get(id) || []) transform(node, along);
            const away = Math.max(Math.hypot(ex, ey), Math.hypot(edge[0] - was[1][0], edge[1] - was[1][1]));
            if (away > STILL_PX * S.k) stale = true;
          }
        }
      }
      if (m.turned[0] && track !== m.track) m.turned[0].classList.toggle("hidden", track === "hidden");
    }
    if (svg._labelling && (stale || svg._labelling.due)) relabel(svg);
  }

  function transform(node, moved) {
    const value = `${moved} ${node._base || ""}`.trim();
    if (value) node.setAttribute("transform", value);
    else node.removeAttribute("transform");
  }

  // The models' newest poses, merged from the stream's ``poses`` messages (each holds the
  // models that changed); ``take(message)`` merges one, ``for(generation)`` gives them for
  // the game a state belongs to (none from a game started over). With ``?latency=1`` the
  // page notes, for each message, the time from its frame's arrival at the server to the
  // animation frame that draws it (ms, in ``window.tableSightLatency``).
  function livePoses() {
    const poses = new Map();
    let generation = null;
    const latency = option("latency", false) ? (window.tableSightLatency = []) : null;
    return {
      take(msg) {
        if (msg.generation !== generation) { poses.clear(); generation = msg.generation; }
        for (const m of msg.models) poses.set(m[0], m);
        if (latency) {
          requestAnimationFrame(() => {
            latency.push(performance.timeOrigin + performance.now() - msg.arrived_ms);
          });
        }
      },
      for(gen) { return gen === generation ? poses : new Map(); },
    };
  }

  // Model shapes take the pointer: pressing one (pointerdown, so a click held while the
  // drawing is redrawn still lands) calls ``on.model(id)``; pressing elsewhere
  // ``on.point(event)``. Set once per drawing; the handlers may be replaced.
  function pointer(svg, on) {
    if (!svg._on) {
      svg.addEventListener("pointerdown", (ev) => {
        if (ev.button !== 0) return;
        const hit = ev.target.closest ? ev.target.closest("path.base[data-model]") : null;
        if (hit) svg._on.model && svg._on.model(hit.getAttribute("data-model"));
        else svg._on.point && svg._on.point(ev);
      });
    }
    svg._on = on;
  }

  // One EventSource per page: state messages, every event, in order, and each frame's poses.
  function connect(handlers) {
    let source = null, retry = null;
    let next = 0;
    function open() {
      source = new EventSource(`/api/stream?since=${next}`);
      source.addEventListener("state", (m) => handlers.state(JSON.parse(m.data)));
      source.addEventListener("poses", (m) => handlers.poses && handlers.poses(JSON.parse(m.data)));
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

  // A refusal from the API: its message, its HTTP status and the field it names (or null).
  class Refusal extends Error {
    constructor(status, field, message) { super(message); this.status = status; this.field = field; }
  }

  // The API's answer to a request: its JSON, or a Refusal (whose message is the API's
  // own, or the HTTP status's when the body is not the API's JSON).
  async function answer(r) {
    let data = null;
    try { data = await r.json(); } catch (err) { data = null; }
    if (r.ok) return data;
    const e = data && data.error ? data.error : { field: null, message: r.statusText };
    throw new Refusal(r.status, e.field || null, e.message || r.statusText);
  }

  async function post(url, body) {
    const headers = { "Content-Type": "application/json" };
    if (token) headers["X-TableSight-Token"] = token;
    return answer(await fetch(url, { method: "POST", headers, body: JSON.stringify(body) }));
  }

  async function get(url) {
    return answer(await fetch(url, { cache: "no-store" }));
  }

  // An HTML element with its text (and class): every string from the server (names from a
  // roster or a match file, messages) goes into the page as text, never as markup.
  function html(name, text = null, parent = null, cls = null) {
    const node = document.createElement(name);
    if (text !== null) node.textContent = text;
    if (cls) node.className = cls;
    if (parent) parent.appendChild(node);
    return node;
  }

  // The card shown for a model: its profile, its move, and its distances to those near it.
  function modelCard(info) {
    const m = info.model;
    const card = document.createDocumentFragment();
    html("h2", m.id, card);
    html("div", `${m.side}, unit ${m.unit}, M ${m.movement_in} in, ` +
      `${m.base.text} base${m.keywords.length ? ", " + m.keywords.join(" ") : ""}`, card);
    html("div", m.stands, card);
    html("div", m.move ? `moved ${num(m.move.shortest_in)} in of ${num(m.move.allowance_in)} ` +
      `(straight ${num(m.move.straight_in)})` : "", card);
    const climbs = m.move && m.move.climbs ? m.move.climbs : [];
    if (climbs.length) {
      html("div", "climbs " + climbs.map((c) => `${c.label} at (${num(c.at[0])}, ${num(c.at[1])})`).join(", "),
           card).dataset.testid = "climbs";
    }
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

  // Pressing models: select one, or measure edge to edge between two models, or a model
  // and a point of the map (drawn in inches, y = 0 at the bottom). The measured line is
  // drawn on the drawings until the next measure or Escape.
  // ``page``: { map, overlay, table: () => the state's table, select: (id) => void,
  //             measured: (out | null) => void }.
  function modelTool(page) {
    const $ = (id) => document.getElementById(id);
    let measuring = null;  // null: selecting; "": measuring, no model yet; else the first
    const button = $("measure-button");
    function finish(out) {
      measuring = null;
      button.classList.remove("active");
      if (out) { $("measure").textContent = measureText(out); page.measured(out); }
    }
    let asked = 0;  // the newest card asked for is the one shown, whatever answers last
    async function card(id) {
      const mine = ++asked;
      if (id === null) { $("info").textContent = ""; delete $("info").dataset.model; return; }
      const got = await act(get(`/api/models/${encodeURIComponent(id)}`));
      if (got && mine === asked) {
        $("info").textContent = "";
        $("info").dataset.model = id;
        $("info").appendChild(modelCard(got));
      }
    }
    async function press(id) {
      if (measuring === null) { page.select(id); return; }
      if (measuring === "") {
        measuring = id;
        say(`measuring from ${id}: click a model or a point on the map`);
        return;
      }
      if (id === measuring) return;
      const a = encodeURIComponent(measuring), b = encodeURIComponent(id);
      finish(await act(get(`/api/measure?a=${a}&b=${b}`)));
    }
    async function point(ev) {
      if (!measuring) return;
      const pt = page.map.createSVGPoint();
      pt.x = ev.clientX; pt.y = ev.clientY;
      const p = pt.matrixTransform(page.map.getScreenCTM().inverse());
      const y = page.table().depth_in - p.y;
      finish(await act(get(`/api/measure?a=${encodeURIComponent(measuring)}&x=${p.x}&y=${y}`)));
    }
    pointer(page.map, { model: press, point });
    pointer(page.overlay, { model: press });
    function start() {
      measuring = "";
      page.measured(null);
      button.classList.add("active");
      say("measure: click the first model");
    }
    button.onclick = start;
    return { card, press, start, cancel: () => { finish(null); page.measured(null); } };
  }

  // The part of the picture to show: the table (its corners through the lens) with a
  // margin, or the whole picture when the table is not mapped. Kept while it moves less
  // than 2% of the picture (a bumped camera), so the view does not twitch.
  function crop(cam, table, kept) {
    const [W, H] = cam.image_size;
    const f = projector(cam);
    const pts = [[0, 0], [table.width_in, 0], [table.width_in, table.depth_in], [0, table.depth_in]]
      .map(([x, y]) => f(x, y));
    let [l, t, r, b] = boxOf(pts);
    const mx = 0.06 * (r - l), my = 0.1 * (b - t);
    l = Math.max(0, l - mx); r = Math.min(W, r + mx); t = Math.max(0, t - my); b = Math.min(H, b + my);
    if (!(r - l > W * 0.2 && b - t > H * 0.2)) [l, t, r, b] = [0, 0, W, H];
    const box = [l, t, r, b];
    if (kept && box.every((v, i) => Math.abs(v - kept[i]) < 0.02 * W)) return kept;
    return box;
  }

  // The picture's overlay (cleared when the picture cannot be mapped) and the top-down
  // map, seen from the table's near edge (y = 0 at the bottom) as a camera usually is.
  // With ``opts.fit`` (the table view), the picture is cropped to the table, which fills
  // its box: the overlay's viewBox is the crop, and the <img> is moved and scaled to match.
  function drawViews(overlay, map, state, opts) {
    const cam = state.camera;
    if (cam) {
      let box = [0, 0, cam.image_size[0], cam.image_size[1]];
      if (opts.fit) {
        box = overlay._crop = crop(cam, state.table, overlay._crop);
        fitPicture(overlay, box, cam.image_size);
      }
      const [l, t, r, b] = box;
      const vb = `${l.toFixed(1)} ${t.toFixed(1)} ${(r - l).toFixed(1)} ${(b - t).toFixed(1)}`;
      if (overlay.getAttribute("viewBox") !== vb) overlay.setAttribute("viewBox", vb);
      draw(overlay, state, projector(cam), { ...opts, bounds: box });
    } else {
      draw(overlay, null, null, opts);
    }
    const { width_in: width, depth_in: depth } = state.table;
    const vb = `-1 -1 ${width + 2} ${depth + 2}`;
    if (map.getAttribute("viewBox") !== vb) map.setAttribute("viewBox", vb);
    sync(layers(map).edge, [{ key: "edge", tag: "rect",
                              attrs: { x: 0, y: 0, width, height: depth, class: "table-edge" } }]);
    draw(map, state, (x, y) => [x, depth - y], { ...opts, bounds: [-1, -1, width + 1, depth + 1] });
  }

  // The picture box takes the crop's shape (as wide as its column, as high as the window
  // lets it); the <img> in it is scaled and shifted so that the crop fills the box.
  function fitPicture(overlay, box, size) {
    const frame = overlay.parentElement, img = frame.querySelector("img");
    const [l, t, r, b] = box, [W, H] = size;
    const set = (node, name, value) => { if (node.style.getPropertyValue(name) !== value) node.style.setProperty(name, value); };
    set(frame, "--aspect", ((r - l) / (b - t)).toFixed(4));
    if (!img) return;
    set(img, "width", `${((100 * W) / (r - l)).toFixed(3)}%`);
    set(img, "left", `${((-100 * l) / (r - l)).toFixed(3)}%`);
    set(img, "top", `${((-100 * t) / (b - t)).toFixed(3)}%`);
    frame.classList.add("fitted");
  }

  // The camera lost (``state.camera_lost``, the server's: the loss, and the time of the
  // last picture it sent): said over that picture, which is dimmed, until the camera is
  // back. ``banner``: the page's .camera-lost, in the box holding the picture. Whether it is.
  const two = (n) => String(n).padStart(2, "0");
  function clock(ms) {
    const d = new Date(ms);
    return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  }
  function cameraLost(banner, state) {
    const lost = state ? state.camera_lost : null;
    let text = "";
    if (lost) {
      const t = `${Number(lost.t).toFixed(1)} s`;
      text = lost.last_picture_ms === null || lost.last_picture_ms === undefined
        ? `Camera lost at ${t} into the game: this is the last picture it sent`
        : `Camera lost since ${clock(lost.last_picture_ms)} (${t} into the game): ` +
          "this is the last picture it sent";
    }
    if (banner.textContent !== text) banner.textContent = text;
    banner.hidden = !lost;
    banner.parentElement.classList.toggle("lost", Boolean(lost));
    return Boolean(lost);
  }

  // Who decided a flag, as its list says it: nothing for the table itself (its page or
  // keys), "judge <name>" for a tournament judge through the hub (``by`` "hub:<name>").
  function decidedBy(by) {
    if (!by || by === "table") return "";
    by = String(by);
    return by.startsWith("hub:") ? `judge ${by.slice(4)}` : by;
  }

  // The open flags as list items, each with accept and dismiss: ``decide(id, decision)``;
  // a decided one says how, who decided when it was not the table, and their note. Kept
  // per flag and updated in place, so that a button being pressed stays the same element
  // while states come. Every value goes in as text: names are what people typed.
  function listFlags(list, flags, decide) {
    const old = new Map([...list.children].map((li) => [li.dataset.flag, li]));
    flags.forEach((f, i) => {
      let li = old.get(String(f.id));
      if (li) old.delete(String(f.id));
      else {
        li = document.createElement("li");
        li.dataset.flag = f.id;
        html("span", null, li).className = "flag-what";
        html("span", null, li).className = "flag-decided";
        for (const decision of ["accept", "dismiss"]) {
          const b = html("button", decision, li);
          b.className = `flag-${decision}`;
          b.onclick = () => decide(f.id, decision);
        }
        html("span", null, li).className = "flag-note";
      }
      const cls = `${f.kind} ${f.decision || ""}`.trim();
      if (li.className !== cls) li.className = cls;
      const what = `${f.model}: ${flagLabel(f)} `;
      const who = f.decision ? decidedBy(f.by) : "";
      const decided = f.decision ? `(${f.decision}ed${who ? " by " + who : ""}) ` : "";
      const judged = String(f.by || "").startsWith("hub:");
      const note = f.decision && f.note ? `${judged ? "ruling" : "note"}: ${f.note}` : "";
      for (const [sel, text] of [[".flag-what", what], [".flag-decided", decided], [".flag-note", note]]) {
        const span = li.querySelector(sel);
        if (span.textContent !== text) span.textContent = text;
      }
      if (li.title !== f.message) li.title = f.message;
      if (list.children[i] !== li) list.insertBefore(li, list.children[i] || null);
    });
    for (const li of old.values()) li.remove();
  }

  return { option, sideColours, projector, draw, move, livePoses, connect, post, get, answer,
           Refusal, html, num, flagLabel, el, pathOf,
           modelCard, measureText, modelTool, drawViews, listFlags, say, act, fill, keyboard,
           pointer, place, cameraLost, reachTool, REACH_MS };
})();
