// The set-up page: from a webcam and a printer to a refereed game, step by step. It shows
// what /api/setup/state says and posts what the user enters; every check, default and
// mapping (clicks to table inches, anchors, the roster's fields) is the server's. The one
// sum here turns a click on the displayed picture into the picture's pixels.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  const STEPS = ["camera", "calibrate", "table", "roster", "print", "start"];
  const CORNERS = ["near-left", "near-right", "far-right", "far-left"];
  const POLL_MS = 500;

  let state = null;         // the newest /api/setup/state
  let step = STEPS.includes(location.hash.slice(1)) ? location.hash.slice(1) : "camera";
  let corners = null;       // the table's corners clicked, picture pixels, in CORNERS order
  let models = null, terrain = null;  // the lists the page posts whole, as last accepted
  let editing = null;       // the entry in the form: {kind, index (-1: new), marker}
  const shown = {};         // what each list was last built from, to rebuild only on change

  // -- talking to the server -------------------------------------------------------------

  const { Refusal, answer, post } = TS;  // the API's answers and refusals, as every page's

  // The controls' token, as the pages' script kept it for this tab: the state is whole
  // (the game's address with its token, the sources' credentials) only for those with it.
  function token() {
    try { return window.sessionStorage.getItem("tablesight.token"); } catch (err) { return null; }
  }

  // Posts ``body`` for the step in ``section``: its old refusals cleared, a new one said at
  // the field it names (``rename`` turns the API's field into the page's). The answer, or
  // null when refused; ``ask(refusal)``, when given, may answer a refusal instead (true:
  // it did).
  async function send(section, url, body, rename = (f) => f, ask = null) {
    clearErrors(section);
    try {
      const out = await post(url, body);
      poll();
      return out;
    } catch (err) {
      if (ask && err instanceof Refusal && await ask(err)) return null;
      if (err instanceof Refusal) {
        // beside its field the message goes without the field's name it starts with
        const bare = err.field && err.message.startsWith(`${err.field}: `)
          ? err.message.slice(err.field.length + 2) : err.message;
        showError(section, err.field ? rename(err.field) : null, err.message, bare);
      } else showError(section, null, `the server did not answer: ${err.message}`);
      return null;
    }
  }

  // -- refusals at their fields ----------------------------------------------------------

  function clearErrors(section) {
    for (const out of section.querySelectorAll(".field-error")) out.textContent = "";
    for (const el of section.querySelectorAll(".invalid")) el.classList.remove("invalid");
    section.querySelector(".step-message").textContent = "";
  }

  // "models[3].base.diameter_mm", then "models[3].base", "models[3]", "models".
  function* shorter(field) {
    let f = field;
    while (f) {
      yield f;
      const cut = Math.max(f.lastIndexOf("."), f.lastIndexOf("["));
      if (cut <= 0) return;
      f = f.slice(0, cut);
    }
  }

  const byAttr = (section, attr, value) =>
    [...section.querySelectorAll(`[${attr}]`)].find((el) => el.getAttribute(attr) === value);

  // The message next to the field it names (or the nearest one holding it; ``bare``
  // there), else on the step's message line; the field's input is marked.
  function showError(section, field, message, bare = message) {
    let out = null, input = null;
    if (field) {
      for (const f of shorter(field)) {
        out = out || byAttr(section, "data-field", f);
        input = input || byAttr(section, "name", f);
        if (out && input) break;
      }
      if (input) input.classList.add("invalid");
    }
    if (out) out.textContent = bare;
    else (out = section.querySelector(".step-message")).textContent = message;
    if (out.scrollIntoView) out.scrollIntoView({ block: "nearest" });
  }

  // -- the steps -------------------------------------------------------------------------

  function show(name) {
    step = name;
    if (name === "print") shown.sheet = null;
    if (location.hash.slice(1) !== name) history.replaceState(history.state, "", `#${name}`);
    for (const s of document.querySelectorAll("section.step")) s.hidden = s.dataset.step !== name;
    for (const b of document.querySelectorAll("#steps button")) {
      b.classList.toggle("current", b.dataset.step === name);
      b.setAttribute("aria-current", b.dataset.step === name ? "step" : "false");
    }
    const button = document.querySelector(`#steps button[data-step="${name}"]`);
    $("step-title").textContent = button ? button.textContent : "";
    render();
  }

  // What each step has done, as the state says it.
  function done(s) {
    const markers = s.markers || [];
    return {
      camera: !!(s.source && s.source.width),
      calibrate: !!(s.calibration && s.calibration.calibrated),
      table: !!(s.table && s.table.proposal && s.table.proposal.healthy),
      roster: (s.models || []).length > 0 && markers.every((m) => m.assigned),
      print: (s.models || []).length > 0,
      start: !!s.run,
    };
  }

  // -- the picture: its pixels, and what is drawn on it ----------------------------------

  // The picture's size in its own pixels (the pixels the API's positions are in).
  function pictureSize() {
    const img = $("picture");
    if (img.naturalWidth > 0) return [img.naturalWidth, img.naturalHeight];
    if (state && state.source && state.source.width) return [state.source.width, state.source.height];
    return null;
  }

  // A click on the displayed picture, in the picture's pixels.
  function clickedPixel(ev) {
    const size = pictureSize();
    if (!size) return null;
    const r = $("picture").getBoundingClientRect();
    const x = ((ev.clientX - r.left) * size[0]) / r.width;
    const y = ((ev.clientY - r.top) * size[1]) / r.height;
    return [Math.round(x * 100) / 100, Math.round(y * 100) / 100];
  }

  function svgNode(name, attrs, text) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // The layer's children made the ``items`` ({key, tag, attrs, text}), each element kept
  // by its key: a shape under the pointer stays the same element however often it is drawn.
  function sync(layer, items) {
    const old = new Map([...layer.children].map((c) => [c.dataset.key, c]));
    items.forEach((it, i) => {
      let node = old.get(it.key);
      if (node && node.tagName !== it.tag) node = undefined;
      if (node) old.delete(it.key);
      else { node = svgNode(it.tag, {}); node.dataset.key = it.key; }
      for (const [k, v] of Object.entries(it.attrs)) {
        if (node.getAttribute(k) !== String(v)) node.setAttribute(k, v);
      }
      if (it.text !== undefined && node.textContent !== it.text) node.textContent = it.text;
      if (layer.children[i] !== node) layer.insertBefore(node, layer.children[i] || null);
    });
    for (const n of old.values()) n.remove();
  }

  function layer(svg, name) {
    let g = svg.querySelector(`g.${name}`);
    if (!g) { g = svgNode("g", { class: name }); svg.appendChild(g); }
    return g;
  }

  function draw() {
    const svg = $("marks"), size = pictureSize();
    if (!size) return;
    const [w, h] = size;
    const box = `0 0 ${w} ${h}`;
    if (svg.getAttribute("viewBox") !== box) svg.setAttribute("viewBox", box);
    $("stage").style.setProperty("--aspect", String(w / h));
    const font = Math.max(12, w / 70);
    sync(layer(svg, "coverage-cells"), step === "calibrate" ? coverageCells(w, h) : []);
    sync(layer(svg, "board"), step === "calibrate" ? boardCorners(w) : []);
    sync(layer(svg, "clicks"), step === "table" ? cornerMarks(w, font) : []);
    const carried = ["roster", "print", "start"].includes(step);
    sync(layer(svg, "markers"), carried ? markerBoxes(font) : []);
  }

  function coverageCells(w, h) {
    const grid = state && state.calibration && state.calibration.coverage
      ? state.calibration.coverage.grid : null;
    if (!grid) return [];
    const out = [];
    grid.forEach((row, r) => row.forEach((covered, c) => {
      const cw = w / row.length, ch = h / grid.length;
      out.push({ key: `${r},${c}`, tag: "rect", attrs: {
        x: c * cw, y: r * ch, width: cw, height: ch, class: covered ? "cover-cell covered" : "cover-cell" } });
    }));
    return out;
  }

  function boardCorners(w) {
    const last = state && state.calibration ? state.calibration.last : null;
    if (!last || !last.corners_px) return [];
    return last.corners_px.map(([x, y], i) => ({
      key: String(i), tag: "circle",
      attrs: { cx: x, cy: y, r: w / 400, class: last.kept ? "board-corner kept" : "board-corner" } }));
  }

  function cornerMarks(w, font) {
    const out = [];
    const pts = corners || [];
    if (pts.length > 1) {
      const d = "M" + pts.map(([x, y]) => `${x} ${y}`).join(" L") + (pts.length === 4 ? " Z" : "");
      out.push({ key: "edge", tag: "path", attrs: { d, class: "corner-edge" } });
    }
    pts.forEach(([x, y], i) => {
      out.push({ key: `c${i}`, tag: "circle", attrs: { cx: x, cy: y, r: w / 250, class: "corner-dot" } });
      // each name on the table's side of its corner, so that none runs off the picture
      const left = i === 0 || i === 3;
      out.push({ key: `t${i}`, tag: "text", text: CORNERS[i], attrs: {
        x: x + (left ? 1 : -1) * font * 0.6, y: y - font * 0.8,
        class: `mark-label ${left ? "start" : "end"}`, "font-size": font } });
    });
    return out;
  }

  // A box round each marker seen that is not an anchor (its centre and side in picture
  // pixels), those nobody carries yet in the warning colour.
  function markerBoxes(font) {
    const out = [];
    for (const m of (state && state.markers) || []) {
      const [x, y] = m.centre_px, half = m.side_px * 0.75;
      let cls = m.assigned ? "marker-box assigned" : "marker-box unassigned";
      if (editing && editing.marker === m.id) cls += " selected";
      out.push({ key: `b${m.id}`, tag: "rect", attrs: {
        x: x - half, y: y - half, width: 2 * half, height: 2 * half, class: cls, "data-marker": m.id } });
      const owner = carrier(m.id);
      out.push({ key: `t${m.id}`, tag: "text", text: owner ? `${m.id} ${owner.id}` : String(m.id),
        attrs: { x, y: y - half - font * 0.3, class: "mark-label", "font-size": font } });
    }
    return out;
  }

  // -- 1. camera -------------------------------------------------------------------------

  function renderCamera(s) {
    const key = JSON.stringify(s.sources || []);
    if (shown.sources !== key) {
      shown.sources = key;
      const select = $("sources");
      select.textContent = "";
      select.add(new Option("choose a camera", ""));
      for (const src of s.sources || []) select.add(new Option(src.label || src.spec, src.spec));
    }
    const src = s.source;
    if (src && document.activeElement !== $("sources")) $("sources").value = src.spec;
    if (src && !$("spec").dataset.touched && document.activeElement !== $("spec")) $("spec").value = src.spec;
    let text = "No camera chosen yet.";
    if (src) {
      text = `${src.spec}: ${src.status}`;
      if (src.width) text += `, ${src.width} x ${src.height}`;
      if (src.fps) text += ` at ${Number(src.fps).toFixed(src.fps % 1 ? 1 : 0)} fps`;
    }
    $("source-status").textContent = text;
  }

  $("sources").onchange = () => {
    if (!$("sources").value) return;
    $("spec").value = $("sources").value;
    $("spec").dataset.touched = "1";
  };
  $("use-source").onclick = () =>
    send($("step-camera"), "/api/setup/source", { spec: $("spec").value.trim() });

  // -- 2. calibrate ----------------------------------------------------------------------

  function renderCalibrate(s) {
    const c = s.calibration || {};
    $("calibration-toggle").textContent = c.on ? "Stop calibrating" : "Start calibrating";
    $("calibration-toggle").classList.toggle("active", !!c.on);
    $("views").textContent = String(c.views || 0);
    const last = c.last;
    $("last-offer").textContent = !last ? "-" : last.kept ? `${last.name}: kept`
      : `${last.name}: ${last.reason}${last.hint ? ` - ${last.hint}` : ""}`;
    $("last-offer").className = !last ? "" : last.kept ? "kept" : "refused";
    $("rms").textContent = c.rms_px === null || c.rms_px === undefined ? "-" : `${Number(c.rms_px).toPrecision(3)} px`;
    $("focal").textContent = c.fx === null || c.fx === undefined ? "-"
      : `fx ${Number(c.fx).toFixed(1)}, fy ${Number(c.fy).toFixed(1)} px`;
    const cov = c.coverage;
    $("coverage-share").textContent = cov ? `${Math.round(cov.share * 100)}%` : "-";
    const key = JSON.stringify(cov ? cov.grid : null);
    if (shown.coverage !== key) {
      shown.coverage = key;
      const grid = $("coverage");
      grid.textContent = "";
      for (const row of (cov && cov.grid) || []) {
        for (const covered of row) {
          const cell = document.createElement("span");
          cell.className = covered ? "covered" : "";
          grid.appendChild(cell);
        }
      }
      grid.style.setProperty("--cells", String(cov && cov.grid.length ? cov.grid[0].length : 5));
    }
    list($("calibration-warnings"), c.warnings || []);
    $("camera-file").textContent = c.camera_file ? `loaded ${c.camera_file}` : "";
  }

  $("calibration-toggle").onclick = () => send($("step-calibrate"), "/api/setup/calibration",
    { on: !(state && state.calibration && state.calibration.on) });
  $("load-camera").onclick = () =>
    send($("step-calibrate"), "/api/setup/camera", { path: $("camera-path").value.trim() });

  // -- 3. the table ----------------------------------------------------------------------

  // A field the server gives a value for until the user types in it.
  function offer(input, value) {
    if (input.dataset.touched || document.activeElement === input) return;
    const text = value === null || value === undefined ? "" : String(value);
    if (input.value !== text) input.value = text;
  }

  function renderTable(s) {
    const t = s.table || {};
    offer($("width-in"), t.width_in);
    offer($("depth-in"), t.depth_in);
    offer($("dictionary"), t.dictionary);
    offer($("anchor-size"), t.proposal && t.proposal.anchors.length ? t.proposal.anchors[0].size_mm : null);
    if (corners === null && t.corners_px && t.corners_px.length) corners = t.corners_px.map((p) => [...p]);
    const n = (corners || []).length;
    $("corner-prompt").classList.toggle("done", n >= 4);
    $("corner-prompt").textContent = n < 4
      ? `Click the ${CORNERS[n]} corner of the table on the picture (${n} of 4 clicked).`
      : "All four corners clicked. Clear them to click again; zoom in to click them closer.";
    $("picture-hint").textContent = step === "table" && n < 4 ? `next: the ${CORNERS[n]} corner` : "";
    const key = JSON.stringify(corners);
    if (shown.corners !== key) {
      shown.corners = key;
      list($("corner-list"), (corners || []).map(([x, y], i) => `${CORNERS[i]}: ${x.toFixed(1)}, ${y.toFixed(1)} px`));
    }
    renderAnchors(t.proposal);
    renderHealth(t.health, t.proposal);
  }

  function renderAnchors(p) {
    const anchors = p ? p.anchors : [];
    const key = JSON.stringify(anchors);
    if (shown.anchors === key) return;
    shown.anchors = key;
    const body = $("anchors").tBodies[0];
    const typed = tape();
    body.textContent = "";
    for (const a of anchors) {
      const row = body.insertRow();
      row.dataset.anchor = a.id;
      for (const v of [a.id, a.x_in.toFixed(2), a.y_in.toFixed(2), `${a.heading.toFixed(1)} deg`]) {
        row.insertCell().textContent = v;
      }
      const cell = row.insertCell();
      for (const axis of ["x_edge_in", "y_edge_in"]) {
        const input = document.createElement("input");
        Object.assign(input, { type: "number", min: "0", step: "any", name: `tape[${a.id}].${axis}` });
        input.className = "tape";
        input.dataset.anchor = a.id;
        input.dataset.axis = axis;
        input.title = axis === "x_edge_in" ? "from the nearer left or right edge, in"
          : "from the nearer near or far edge, in";
        if (typed[a.id]) input.value = String(typed[a.id][axis === "x_edge_in" ? 0 : 1]);
        cell.appendChild(input);
      }
      const out = document.createElement("output");
      out.className = "field-error";
      out.dataset.field = `tape[${a.id}]`;
      cell.appendChild(out);
    }
  }

  // The tape measures typed so far: {"<id>": [x_edge_in, y_edge_in]} (both given).
  function tape() {
    const out = {};
    for (const row of $("anchors").tBodies[0].rows) {
      const [x, y] = row.querySelectorAll("input.tape");
      if (x && y && x.value !== "" && y.value !== "") out[row.dataset.anchor] = [Number(x.value), Number(y.value)];
    }
    return out;
  }

  function renderHealth(h, p) {
    const el = $("table-health");
    const lines = [];
    let cls = "pose-unknown", head = "No anchors placed yet: click the table's four corners.";
    if (h) {
      cls = h.healthy ? (h.warnings && h.warnings.length ? "pose-warn" : "pose-ok") : "pose-bad";
      head = `Table pose: ${Number(h.reprojection_px).toFixed(2)} px ` +
        `(${Number(h.reprojection_in).toFixed(3)} in) from anchors ${(h.anchors_used || []).join(", ")}` +
        (h.healthy ? "" : " - not trusted");
      if (!h.healthy && h.problem) lines.push(h.problem);
      lines.push(...(h.warnings || []));
    } else if (p) {
      cls = p.healthy ? "pose-ok" : "pose-bad";
      head = p.healthy ? "Table pose: sound" : "Table pose: not solved";
    }
    if (p) {
      if (p.problem && !lines.includes(p.problem)) lines.push(p.problem);
      for (const w of p.warnings || []) if (!lines.includes(w)) lines.push(w);
    }
    const key = JSON.stringify([cls, head, lines]);
    if (shown.health === key) return;
    shown.health = key;
    el.className = `health ${cls}`;
    const div = document.createElement("div");
    div.textContent = head;
    const ul = document.createElement("ul");
    list(ul, lines);
    el.replaceChildren(div, ...(lines.length ? [ul] : []));
  }

  const number = (input) => (input.value.trim() === "" ? null : Number(input.value));

  function proposeAnchors() {
    const body = {
      width_in: number($("width-in")),
      depth_in: number($("depth-in")),
      dictionary: $("dictionary").value.trim(),
      corners_px: corners || [],
    };
    const size = number($("anchor-size"));
    if (size !== null) body.anchor_size_mm = size;
    const typed = tape();
    if (Object.keys(typed).length) body.tape = typed;
    return send($("step-table"), "/api/setup/table", body, (f) => (f === "size_mm" ? "anchor_size_mm" : f));
  }

  function clickCorner(ev) {
    corners = corners || [];
    if (corners.length >= 4) return;
    const px = clickedPixel(ev);
    if (!px) return;
    corners.push(px);
    render();
    if (corners.length === 4) proposeAnchors();
  }

  $("undo-corner").onclick = () => { if (corners && corners.length) corners.pop(); render(); };
  $("clear-corners").onclick = () => { corners = []; render(); };
  $("propose").onclick = proposeAnchors;
  for (const id of ["width-in", "depth-in", "dictionary", "anchor-size", "spec", "folder"]) {
    $(id).addEventListener("input", () => { $(id).dataset.touched = "1"; });
  }

  // -- 4. roster -------------------------------------------------------------------------

  // The chosen game's keywords and units (``presets``: one game's, or every game's by name).
  function preset(s) {
    const p = s.presets;
    if (!p) return null;
    if (Array.isArray(p.keywords)) return p;
    return p[s.game] || null;
  }

  function carrier(marker) {
    const m = (models || []).find((e) => e.marker === marker);
    if (m) return { kind: "model", id: m.id, entry: m };
    const t = (terrain || []).find((e) => e.marker === marker);
    return t ? { kind: "terrain", id: t.id, entry: t } : null;
  }

  function renderRoster(s) {
    if (models === null && Array.isArray(s.models)) models = s.models.map((m) => ({ ...m }));
    if (terrain === null && Array.isArray(s.terrain)) terrain = s.terrain.map((t) => ({ ...t }));
    const games = (s.games || []).map((g) => (typeof g === "string" ? { name: g, title: g }
      : { name: g.name || g.game, title: g.title || g.name || g.game }));
    const gkey = JSON.stringify(games);
    if (shown.games !== gkey) {
      shown.games = gkey;
      const select = $("game");
      select.textContent = "";
      select.add(new Option("choose the game", ""));
      for (const g of games) select.add(new Option(g.title, g.name));
    }
    if (document.activeElement !== $("game")) $("game").value = s.game || "";
    const seen = s.markers || [];
    const rows = seen.map((m) => {
      const who = carrier(m.id);
      return { marker: m.id, text: who ? `marker ${m.id}: ${who.kind === "terrain" ? "terrain " : ""}${who.id}`
        : `marker ${m.id}: not assigned`, assigned: !!m.assigned, seen: true };
    });
    for (const [kind, entries] of [["models", models || []], ["terrain", terrain || []]]) {
      entries.forEach((e, i) => {
        if (!seen.some((m) => m.id === e.marker)) {
          rows.push({ marker: e.marker, text: `marker ${e.marker}: ${e.id} (not in the picture)`,
            assigned: true, seen: false, field: `${kind}[${i}]` });
        }
      });
    }
    const key = JSON.stringify([rows, editing && editing.marker]);
    if (shown.markers !== key) {
      shown.markers = key;
      const ul = $("marker-list");
      ul.textContent = "";
      for (const r of rows) {
        const li = document.createElement("li");
        const b = document.createElement("button");
        b.type = "button";
        b.dataset.marker = r.marker;
        b.textContent = r.text;
        b.className = r.assigned ? "assigned" : "unassigned";
        if (!r.seen) b.classList.add("unseen");
        if (editing && editing.marker === r.marker) b.classList.add("selected");
        li.appendChild(b);
        const out = document.createElement("output");
        out.className = "field-error";
        const who = carrier(r.marker);
        if (who) out.dataset.field = `${who.kind === "model" ? "models" : "terrain"}[${indexOf(who)}]`;
        li.appendChild(out);
        ul.appendChild(li);
      }
    }
    const p = preset(s);
    $("movement-unit").textContent = p ? ` ${p.movement_unit}` : "";
    datalist($("sides"), [...new Set((models || []).map((m) => m.side))]);
    datalist($("units"), [...new Set((models || []).map((m) => m.unit).filter(Boolean))]);
  }

  function indexOf(who) {
    return (who.kind === "model" ? models : terrain).indexOf(who.entry);
  }

  function datalist(el, values) {
    const key = JSON.stringify(values);
    if (el.dataset.key === key) return;
    el.dataset.key = key;
    el.textContent = "";
    for (const v of values) el.appendChild(new Option(v, v));
  }

  $("game").onchange = () => $("game").value &&
    send($("step-roster"), "/api/setup/game", { game: $("game").value });

  // The form for the marker ``marker``: its model or piece, or a new model.
  function openEntry(marker) {
    const who = carrier(marker);
    const kind = who ? who.kind : "model";
    editing = { kind, index: who ? indexOf(who) : -1, marker };
    const form = $("entry-form");
    form.reset();
    clearErrors($("step-roster"));
    form.querySelector(`input[name="kind"][value="${kind}"]`).checked = true;
    const e = who ? who.entry : { marker };
    const set = (name, v) => {
      const input = form.elements[name];
      if (input) input.value = v === null || v === undefined ? "" : String(v);
    };
    set("entry.id", e.id);
    set("entry.marker", e.marker);
    set("entry.marker_size_mm", e.marker_size_mm);
    set("entry.marker_height_mm", e.marker_height_mm);
    set("entry.side", e.side);
    set("entry.unit", e.unit);
    const base = e.base || { shape: "round" };
    set("entry.base.shape", base.shape);
    set("entry.base.diameter_mm", base.diameter_mm);
    set("entry.base.length_mm", base.length_mm);
    set("entry.base.width_mm", base.width_mm);
    set("entry.movement", e.movement);
    set("entry.height", e.height);
    set("entry.polygon", (e.polygon || []).map(([x, y]) => `${x}, ${y}`).join("\n"));
    $("entry-title").textContent = who ? `Marker ${marker}: ${who.id}` : `Marker ${marker}`;
    $("remove-entry").hidden = !who;
    form.hidden = false;
    fitForm(e.keywords || [], e.status || []);
    shown.markers = null;
    render();
    form.elements["entry.id"].focus();
  }

  // The form's parts for a model or a piece, its base's size fields for the shape, and
  // the chosen game's keywords as boxes to tick (``ticked``: those ticked).
  function fitForm(ticked, statuses = []) {
    const form = $("entry-form");
    const kind = form.querySelector('input[name="kind"]:checked').value;
    form.classList.toggle("terrain", kind === "terrain");
    form.elements["entry.marker_height_mm"].placeholder = kind === "terrain" ? "0, on the table" : "4, on the base";
    const round = form.elements["entry.base.shape"].value === "round";
    for (const el of form.querySelectorAll(".round-only")) el.hidden = !round;
    for (const el of form.querySelectorAll(".long-only")) el.hidden = round;
    const p = state ? preset(state) : null;
    const words = p ? (kind === "terrain" ? p.terrain_keywords : p.keywords) : [];
    boxes($("keywords"), words, ticked);
    if (!p) $("keywords").textContent = "choose the game first";
    boxes($("statuses"), kind === "model" && p ? p.statuses : [], statuses);
  }

  // Boxes to tick for ``words`` and any of ``ticked`` not among them.
  function boxes(box, words, ticked) {
    box.textContent = "";
    for (const word of [...new Set([...(words || []), ...ticked])]) {
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.type = "checkbox";
      input.value = word;
      input.checked = ticked.includes(word);
      label.append(input, ` ${word}`);
      box.appendChild(label);
    }
    if (!box.children.length) box.textContent = "none for this game";
  }

  for (const radio of document.querySelectorAll('#entry-form input[name="kind"]')) {
    radio.onchange = () => fitForm([]);
  }
  $("entry-form").elements["entry.base.shape"].onchange = () => fitForm(ticked(), ticked("statuses"));

  const ticked = (id = "keywords") => [...$(id).querySelectorAll("input:checked")].map((i) => i.value);

  // The entry as roster.toml (or terrain.toml) has it; fields left empty are left out.
  function formEntry() {
    const form = $("entry-form"), el = form.elements;
    const text = (name) => el[name].value.trim();
    const num = (name) => (text(name) === "" ? undefined : Number(text(name)));
    const kind = form.querySelector('input[name="kind"]:checked').value;
    const e = { id: text("entry.id"), marker: num("entry.marker") };
    if (kind === "model") {
      e.side = text("entry.side");
      if (text("entry.unit")) e.unit = text("entry.unit");
      const shape = el["entry.base.shape"].value;
      e.base = shape === "round" ? { shape, diameter_mm: num("entry.base.diameter_mm") }
        : { shape, length_mm: num("entry.base.length_mm"), width_mm: num("entry.base.width_mm") };
      e.movement = num("entry.movement");
      if (ticked("statuses").length) e.status = ticked("statuses");
    } else {
      e.polygon = text("entry.polygon").split(/\n|;/).map((l) => l.trim()).filter(Boolean)
        .map((l) => l.split(/[\s,]+/).map(Number));
      e.height = num("entry.height");
    }
    e.keywords = ticked();
    e.marker_size_mm = num("entry.marker_size_mm");
    e.marker_height_mm = num("entry.marker_height_mm");
    for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k];
    if (e.base) for (const k of Object.keys(e.base)) if (e.base[k] === undefined) delete e.base[k];
    return { kind, entry: e };
  }

  // Posts both lists with the form's entry in them; kept when the server takes them.
  async function saveEntry(ev) {
    ev.preventDefault();
    const { kind, entry } = formEntry();
    const nextModels = [...(models || [])], nextTerrain = [...(terrain || [])];
    if (editing.index >= 0) (editing.kind === "model" ? nextModels : nextTerrain).splice(editing.index, 1);
    const into = kind === "model" ? nextModels : nextTerrain;
    const at = editing.index >= 0 && editing.kind === kind ? editing.index : into.length;
    into.splice(at, 0, entry);
    const key = kind === "model" ? `models[${at}]` : `terrain[${at}]`;
    const out = await send($("step-roster"), "/api/setup/models", { models: nextModels, terrain: nextTerrain },
      (f) => (f === key || f.startsWith(`${key}.`) ? "entry" + f.slice(key.length) : f));
    if (out === null) return;
    models = nextModels;
    terrain = nextTerrain;
    closeEntry();
  }

  async function removeEntry() {
    if (!editing || editing.index < 0) return;
    const nextModels = [...models], nextTerrain = [...terrain];
    (editing.kind === "model" ? nextModels : nextTerrain).splice(editing.index, 1);
    const out = await send($("step-roster"), "/api/setup/models", { models: nextModels, terrain: nextTerrain });
    if (out === null) return;
    models = nextModels;
    terrain = nextTerrain;
    closeEntry();
  }

  function closeEntry() {
    editing = null;
    $("entry-form").hidden = true;
    shown.markers = null;
    render();
  }

  $("entry-form").onsubmit = saveEntry;
  $("remove-entry").onclick = removeEntry;
  $("cancel-entry").onclick = () => { clearErrors($("step-roster")); closeEntry(); };
  $("marker-list").onclick = (ev) => {
    const b = ev.target.closest("button[data-marker]");
    if (b) openEntry(Number(b.dataset.marker));
  };

  // -- 5. print, 6. start ----------------------------------------------------------------

  function renderPrint(s) {
    const n = (s.models || []).length, k = (s.terrain || []).length;
    $("sheet-count").textContent = n || k ? `${n} model${n === 1 ? "" : "s"}` +
      (k ? ` and ${k} terrain piece${k === 1 ? "" : "s"}` : "") : "No models yet: say what each marker is first.";
    const key = JSON.stringify([s.models, s.terrain]);
    if (step === "print" && (n || k) && shown.sheet !== key) {
      shown.sheet = key;
      checkSheet();
    }
  }

  // Whether the sheet prints: the server's refusal (a marker too big for its base, say)
  // said on the step, with a way to the entry at fault.
  let fixing = null;
  async function checkSheet() {
    const section = $("step-print");
    clearErrors(section);
    fixing = null;
    $("fix-entry").hidden = true;
    $("markers-pdf").classList.remove("refused");
    let r;
    try { r = await fetch("/api/setup/markers.pdf", { cache: "no-store" }); } catch (err) { return; }
    if (r.ok) return;
    try { await answer(r); } catch (err) {
      const found = err.field && /^(models|terrain)\[(\d+)\]\.?(.*)$/.exec(err.field);
      const entry = found ? (found[1] === "models" ? models : terrain)[Number(found[2])] : null;
      $("markers-pdf").classList.add("refused");
      showError(section, null, entry ? `${entry.id}: ${err.message.slice(err.field.length + 2)}` : err.message);
      if (entry) {
        fixing = { marker: entry.marker, field: `entry.${found[3]}`.replace(/\.$/, ""), message: err.message };
        $("fix-entry").textContent = `Change ${entry.id}`;
        $("fix-entry").hidden = false;
      }
    }
  }

  $("fix-entry").onclick = () => {
    if (!fixing) return;
    const { marker, field, message } = fixing;
    show("roster");
    openEntry(marker);
    showError($("step-roster"), field, message.slice(message.indexOf(": ") + 2));
  };

  function renderStart(s) {
    offer($("folder"), s.folder);
    const w = s.written;
    const files = w ? Object.values(w.files).filter(Boolean) : [];
    const key = JSON.stringify([w, s.run]);
    if (shown.written === key) return;
    shown.written = key;
    $("written-folder").textContent = w ? `Written to ${w.folder}:` : "";
    list($("written"), files.map((f) => f.slice(f.lastIndexOf("/") + 1)));
    const run = $("run");
    run.textContent = "";
    delete run.dataset.ended;
    const ended = s.run ? /^ended \(exit status (-?\d+)\)(?:: ([^]*))?$/.exec(s.run.status) : null;
    if (ended) {
      // its table view went with it: no link to it; its last words (the server leaves out
      // the line that said where that table view was)
      const last = ended[2] ? `: ${ended[2]}` : "";
      run.textContent = `The game has ended (exit status ${ended[1]})${last}. Its table view ` +
        "is closed; write and start again to referee another.";
      run.dataset.ended = ended[1];
    } else if (s.run && s.run.url) {
      run.append(`The game is ${s.run.status === "running" ? "refereed" : s.run.status} at `);
      const a = document.createElement("a");
      a.href = s.run.url;
      a.textContent = s.run.url;
      a.target = "_blank";
      a.rel = "noopener";
      run.appendChild(a);
    } else if (s.run) run.textContent = `The game: ${s.run.status}`;
    $("run-later").textContent = w && s.source
      ? `To referee it again later: tablesight run --source ${s.source.spec} ${w.options.join(" ")}` : "";
  }

  // the PDFs on the paper chosen (both links follow either choice)
  for (const select of document.querySelectorAll("select.paper")) {
    select.onchange = () => {
      for (const other of document.querySelectorAll("select.paper")) other.value = select.value;
      for (const a of document.querySelectorAll("a.paper-link")) {
        a.search = select.value === "a4" ? "" : `?paper=${select.value}`;
      }
    };
  }

  // The button held while it works (starting a game takes seconds), so that a second click
  // is not taken for a second start.
  $("write").onclick = async () => {
    const button = $("write");
    const label = button.textContent;
    button.disabled = true;
    button.textContent = "Writing and starting...";
    try {
      await writeAndStart();
    } finally {
      button.disabled = false;
      button.textContent = label;
    }
  };

  // Written and started; files already in the folder are replaced only once the user says
  // so (the server keeps each old one beside its new one).
  function writeAndStart() {
    const body = { folder: $("folder").value.trim(), start: true };
    const replace = async (err) => {
      if (err.status !== 409 || err.field !== "replace") return false;
      if (!window.confirm(err.message.replace(/^replace: /, ""))) {
        showError($("step-start"), "folder", err.message, "not written: the files there are kept");
        return true;
      }
      await send($("step-start"), "/api/setup/write", { ...body, replace: true });
      return true;
    };
    return send($("step-start"), "/api/setup/write", body, (f) => f, replace);
  }

  // -- the page --------------------------------------------------------------------------

  function list(el, texts) {
    const key = JSON.stringify(texts);
    if (el.dataset.key === key) return;
    el.dataset.key = key;
    el.replaceChildren(...texts.map((t) => { const li = document.createElement("li"); li.textContent = t; return li; }));
  }

  function render() {
    if (!state) return;
    const s = state;
    const finished = done(s);
    for (const b of document.querySelectorAll("#steps button")) b.classList.toggle("done", !!finished[b.dataset.step]);
    renderCamera(s);
    renderCalibrate(s);
    renderTable(s);
    renderRoster(s);
    renderPrint(s);
    renderStart(s);
    draw();
  }

  let polling = null;
  async function poll() {
    clearTimeout(polling);
    try {
      const key = token();
      const headers = key ? { "X-TableSight-Token": key } : {};
      const r = await fetch("/api/setup/state", { cache: "no-store", headers });
      state = await answer(r);
      $("connection").textContent = "";
      render();
    } catch (err) {
      $("connection").textContent = "the set-up server is not answering";
    }
    polling = setTimeout(poll, POLL_MS);
  }

  $("steps").onclick = (ev) => {
    const b = ev.target.closest("button[data-step]");
    if (b) show(b.dataset.step);
  };
  $("zoom").onchange = () => {
    const z = $("zoom").value;
    $("frame").classList.toggle("fit", z === "fit");
    $("stage").style.setProperty("--zoom", z === "fit" ? "1" : z);
  };
  $("stage").addEventListener("click", (ev) => {
    if (step === "table") { clickCorner(ev); return; }
    const hit = ev.target.closest ? ev.target.closest("[data-marker]") : null;
    if (step === "roster" && hit) openEntry(Number(hit.getAttribute("data-marker")));
  });
  $("picture").addEventListener("load", draw);
  show(step);
  poll();
})();
