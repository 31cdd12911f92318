// The broadcast and overlay pages (for OBS): the overlay on the picture (or on nothing)
// and a ticker of the newest events.
"use strict";

(() => {
  const svg = document.getElementById("overlay");
  const ticker = document.getElementById("ticker");
  const opts = { zones: TS.option("zones"), links: TS.option("links"), labels: TS.option("labels"),
                 allReach: true, labelOffset: 22 };
  if (!TS.option("ticker")) ticker.hidden = true;
  TS.connect({
    state(state) {
      const cam = state.camera;
      if (!cam) return;
      svg.setAttribute("viewBox", `0 0 ${cam.image_size[0]} ${cam.image_size[1]}`);
      TS.draw(svg, state, TS.projector(cam), opts);
    },
    event(e) {
      if (["model_moved", "phase_ended", "model_hidden"].includes(e.kind)) return;
      const item = document.createElement("div");
      item.className = `tick ${e.kind}`;
      item.textContent = e.message;
      ticker.prepend(item);
      while (ticker.children.length > 3) ticker.lastChild.remove();
    },
    reset() { ticker.textContent = ""; },
  });
})();
