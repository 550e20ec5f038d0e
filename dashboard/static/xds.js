"use strict";
// The xDS clients block: the Envoys and gRPC clients reading the registry
// from this node's xDS server now (api/xds), one row each with its node
// id, the resource types it asked for, its stream's variant and how long
// it has been connected, read every 5 s while the page is visible.
// Without an xDS server the block stays hidden. Node ids are the
// clients' own: all text.
(function () {
  const EVERY = 5000;          // ms between reads while the page is visible
  const HIDDEN_EVERY = 30000;  // ... while it is not
  const OFF_EVERY = 60000;     // ... while the node serves no xDS
  const RETRY = 5000;          // ... after a failed read

  const { text, cell, duration } = window.dom;
  const el = (id) => document.getElementById(id);
  const section = el("xds-section");
  const table = el("xds");
  const body = table.tBodies[0];

  function render(d) {
    section.hidden = !d.enabled;
    section.dataset.enabled = String(d.enabled); // read at least once
    table.hidden = d.clients.length === 0;
    el("no-xds").hidden = d.clients.length > 0;
    el("xds-note").textContent = d.clients.length ? String(d.clients.length) : "";
    const now = new Date(d.now).getTime();
    body.replaceChildren(...d.clients.map((c) => {
      const tr = text("tr", undefined, { "data-node": c.node });
      const since = cell("Connected", duration(Math.max(0, now - new Date(c.since).getTime())) + " ago");
      since.title = new Date(c.since).toLocaleString();
      tr.append(cell("Node", c.node || "(not yet known)"), cell("Types", c.types.join(", ")),
        cell("Stream", c.variant), since);
      return tr;
    }));
  }

  poll("api/xds", { every: EVERY, hidden: HIDDEN_EVERY, retry: RETRY }, (d) => {
    render(d);
    return d.enabled ? 0 : OFF_EVERY;
  }, (e) => {
    if (!section.hidden) el("xds-note").textContent = "not updating (" + e.message + ")";
  });
})();
