"use strict";
// The Remote regions block: the other regions' registries this node
// serves (api/regions), one row per region with its state, the apps and
// instances held of it and the age of its last successful read, read
// every 5 s while the page is visible. Their instances are counted here
// only, never in the page's local totals. Without remote regions the
// block stays hidden. Names and errors come from configuration and remote
// servers: all text.
(function () {
  const EVERY = 5000;          // ms between reads while the page is visible
  const HIDDEN_EVERY = 30000;  // ... while it is not
  const NONE_EVERY = 60000;    // ... while the node has no remote region
  const RETRY = 5000;          // ... after a failed read
  // Each state's colour, from the instance statuses' classes.
  const LOOK = { ready: "UP", waiting: "STARTING", stale: "STARTING", unreachable: "DOWN", dropped: "DOWN" };

  const { text, cell, duration } = window.dom;
  const el = (id) => document.getElementById(id);
  const section = el("regions-section");
  const body = el("regions").tBodies[0];

  function render(d) {
    section.hidden = d.regions.length === 0;
    el("regions-note").textContent = d.region ? "this node: " + d.region : "";
    body.replaceChildren(...d.regions.map((r) => {
      const tr = text("tr", undefined, { "data-region": r.name });
      const state = text("span", r.state, { class: "status status-" + (LOOK[r.state] || "UNKNOWN") });
      const last = r.last_sync_age_ms === undefined ? "never" : duration(r.last_sync_age_ms) + " ago";
      const lastCell = cell("Last sync", last);
      if (r.last_sync) lastCell.title = new Date(r.last_sync).toLocaleString();
      tr.append(cell("Region", r.name), cell("State", state), cell("Apps", String(r.apps)),
        cell("Instances", String(r.instances)), lastCell,
        cell("Syncs / failures", r.syncs + " / " + r.failures), cell("Last error", r.last_error || ""));
      return tr;
    }));
  }

  poll("api/regions", { every: EVERY, hidden: HIDDEN_EVERY, retry: RETRY }, (d) => {
    render(d);
    return d.regions.length === 0 ? NONE_EVERY : 0;
  }, (e) => {
    if (!section.hidden) el("regions-note").textContent = "not updating (" + e.message + ")";
  });
})();
