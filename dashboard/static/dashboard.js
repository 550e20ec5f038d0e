"use strict";
// The dashboard polls its summary every two seconds and renders it; the
// actions go through the Eureka REST API, with the page's credentials.
(function () {
  const el = (id) => document.getElementById(id);
  let apiPrefix = "/eureka";
  let busy = false;

  function text(tag, value, attrs) {
    const e = document.createElement(tag);
    if (value !== undefined) e.textContent = value;
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }

  function facts(dl, rows) {
    dl.replaceChildren(...rows.map(([k, v]) => {
      const d = document.createElement("div");
      d.append(text("dt", k), text("dd", String(v)));
      return d;
    }));
  }

  function duration(ms) {
    const s = Math.round(ms / 1000);
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
    const h = Math.floor(s / 3600);
    return h < 48 ? h + " h " + Math.floor((s % 3600) / 60) + " min" : Math.floor(h / 24) + " days";
  }

  function cell(label, content) {
    const td = document.createElement("td");
    td.dataset.label = label;
    if (content instanceof Node) td.append(content); else td.textContent = content;
    return td;
  }

  function link(href, label) {
    return href ? text("a", label, { href: href, rel: "noopener noreferrer" }) : document.createTextNode("");
  }

  function button(label, danger, onClick) {
    const b = text("button", label, { type: "button" });
    if (danger) b.className = "danger";
    b.addEventListener("click", onClick);
    return b;
  }

  function render(s) {
    apiPrefix = s.api_prefix;
    el("updated").textContent = "Node " + s.node + " · updated " + new Date().toLocaleTimeString();
    facts(el("general"), [
      ["Node", s.node], ["Version", s.version], ["Uptime", duration(s.uptime_seconds * 1000)],
      ["Started", new Date(s.started).toLocaleString()], ["Peers", s.peers.length],
      ["Applications", s.applications.length],
      ["Instances", s.applications.reduce((n, a) => n + a.instances.length, 0)],
    ]);
    const sp = s.self_preservation;
    facts(el("sp"), [
      ["Self-preservation", sp.Enabled ? (sp.Active ? "ACTIVE: evictions suspended" : "armed") : "switched off"],
      ["Expected renewing clients", sp.ExpectedRenewingClients], ["Renew threshold (per min)", sp.Threshold],
      ["Renews last minute", sp.RenewsLastMinute],
    ]);
    el("sp-banner").hidden = !s.explanation;
    el("sp-banner").textContent = s.explanation || "";

    el("no-peers").hidden = s.peers.length > 0;
    el("peers").hidden = s.peers.length === 0;
    el("peers").tBodies[0].replaceChildren(...s.peers.map((p) => {
      const tr = document.createElement("tr");
      const health = text("span", p.down ? "DOWN" : "OK", { class: "status status-" + (p.down ? "DOWN" : "UP") });
      const last = p.last_success && !p.last_success.startsWith("0001") ? new Date(p.last_success).toLocaleTimeString() : "never";
      tr.append(cell("Peer", p.url), cell("Health", health), cell("Queue", String(p.queue_length)),
        cell("Batches", String(p.batches_sent)), cell("Failures", String(p.failures)), cell("Last success", last));
      return tr;
    }));

    if (busy) return; // keep the table still while an action is being confirmed
    const rows = [];
    for (const app of s.applications) {
      for (const i of app.instances) {
        const tr = document.createElement("tr");
        tr.dataset.instance = i.id;
        const links = document.createElement("span");
        links.append(link(i.status_page_url, "status"), document.createTextNode(" "), link(i.health_check_url, "health"));
        const actions = document.createElement("span");
        if (i.overridden_status === "OUT_OF_SERVICE") {
          actions.append(button("Put back in service", false, () => act(app.name, i.id, "putback")));
        } else {
          actions.append(button("Take out of service", false, () => act(app.name, i.id, "out")));
        }
        actions.append(button("Deregister", true, () => act(app.name, i.id, "deregister")));
        tr.append(cell("Application", app.name), cell("Instance", i.id + " (" + i.address + ")"),
          cell("Status", text("span", i.status, { class: "status status-" + i.status })),
          cell("Override", i.overridden_status === "UNKNOWN" ? "none" : i.overridden_status),
          cell("Zone", i.zone || ""), cell("Last heartbeat", duration(i.last_heartbeat_age_ms) + " ago"),
          cell("Links", links), cell("Actions", actions));
        rows.push(tr);
      }
    }
    el("instances").tBodies[0].replaceChildren(...rows);
    el("instances").hidden = rows.length === 0;
    el("no-apps").hidden = rows.length > 0;
  }

  const actions = {
    out: { method: "PUT", path: "/status?value=OUT_OF_SERVICE", verb: "Take out of service",
      text: "stops receiving traffic until it is put back." },
    putback: { method: "DELETE", path: "/status", verb: "Put back in service",
      text: "loses its override; its next heartbeat makes it register again with its own status." },
    deregister: { method: "DELETE", path: "", verb: "Deregister",
      text: "is removed from the registry; a running client registers again at its next heartbeat." },
  };

  function confirmDialog(message) {
    return new Promise((resolve) => {
      const d = el("confirm");
      el("confirm-text").textContent = message;
      d.returnValue = "";
      d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true });
      d.showModal();
      el("confirm-cancel").focus();
    });
  }

  async function act(app, id, kind) {
    const a = actions[kind];
    busy = true;
    const ok = await confirmDialog(a.verb + ": instance " + id + " of " + app + " " + a.text);
    busy = false;
    if (!ok) return;
    const url = apiPrefix + "/apps/" + encodeURIComponent(app) + "/" + encodeURIComponent(id) + a.path;
    const result = el("result");
    try {
      const resp = await fetch(url, { method: a.method, credentials: "same-origin" });
      result.className = resp.ok ? "" : "error";
      result.textContent = resp.ok ? a.verb + ": " + id + " done." :
        a.verb + ": " + id + " failed: HTTP " + resp.status + (resp.status === 401 ? " (credentials required)" : "");
    } catch (e) {
      result.className = "error";
      result.textContent = a.verb + ": " + id + " failed: " + e.message;
    }
    refresh();
  }

  async function refresh() {
    try {
      const resp = await fetch("api/summary", { credentials: "same-origin", cache: "no-store" });
      if (!resp.ok) throw new Error("HTTP " + resp.status);
      render(await resp.json());
    } catch (e) {
      el("updated").textContent = "Cannot reach the registry (" + e.message + "); retrying…";
    }
  }

  refresh();
  setInterval(refresh, 2000);
})();
