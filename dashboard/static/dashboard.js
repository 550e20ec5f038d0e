"use strict";
// The dashboard loads the registry once (api/summary), then asks for what
// changed since the version it holds (api/changes, which waits up to ten
// seconds for a change), applies the changes to its model and updates the
// rows on screen in place. Only one page of rows is in the DOM. The search
// filters the applications and the recent changes as you type and lives in
// the URL's hash, so a link shares it. The traffic rules in force
// (api/rules) show in each app's section with the instances of each
// subset, read again when those apps change and every 15 s. The actions
// go through the Eureka REST API, with the page's credentials.
(function () {
  const { text, cell, place, duration } = window.dom;
  const el = (id) => document.getElementById(id);
  const narrow = window.matchMedia("(max-width: 720px)");
  const pageSize = () => (narrow.matches ? 20 : 50); // rows (app headers and instances) per page
  const COLLAPSE_AT = 10;   // an app with more rows than this starts collapsed
  const FEED_KEEP = 100;    // changes kept for the feed
  const FEED_SHOW = 40;     // changes shown
  const WAIT = 10;          // seconds api/changes may wait for a change
  const RULES_EVERY = 15000; // ms between reads of api/rules, for rules that change
  const FIELDS = { app: 0, id: 1, host: 2, status: 3, zone: 4 };

  let apiPrefix = "/eureka";
  let busy = false;         // an action is being confirmed: keep the table still

  // The model: apps by name, each with its instances sorted by id.
  const apps = new Map();
  let appNames = null;      // sorted names, null when an app came or went
  let total = 0;
  let started = "";
  let version = 0;
  let skew = 0;             // server clock minus ours, in ms
  let head = null;
  let feed = [];
  let feedDirty = true;
  // The traffic rules (api/rules), by app.
  let rulesByApp = new Map();
  let rulesConfigured = true; // until api/rules says the dashboard has no rules to show

  // The view.
  let tokens = [];
  let page = 0;
  const expanded = new Map(); // app -> the operator's choice
  const rows = new Map();     // row key -> tr on screen
  let shownApps = [];         // apps with instance rows on screen
  let scheduled = false;

  function facts(dl, list) {
    dl.replaceChildren(...list.map(([k, v, key]) => {
      const d = document.createElement("div");
      d.append(text("dt", k), text("dd", String(v), key ? { "data-fact": key } : {}));
      return d;
    }));
  }

  function link(href, label) {
    return href ? text("a", label, { href: href, rel: "noopener noreferrer" }) : document.createTextNode("");
  }

  function button(label, act, danger) {
    const b = text("button", label, { type: "button", "data-act": act });
    if (danger) b.className = "danger";
    return b;
  }

  // ---- model ----

  function indexed(app, i) {
    i.app = app;
    i.f = [app.toLowerCase(), i.id.toLowerCase(), i.address.toLowerCase(), i.status.toLowerCase(), (i.zone || "").toLowerCase()];
    return i;
  }

  function newApp(name) {
    const a = { name: name, list: [], byId: new Map(), counts: {} };
    apps.set(name, a);
    appNames = null;
    return a;
  }

  function position(list, id) {
    let lo = 0, hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid].id < id) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  function count(a, status, n) {
    a.counts[status] = (a.counts[status] || 0) + n;
    if (!a.counts[status]) delete a.counts[status];
  }

  function upsert(appName, inst) {
    const a = apps.get(appName) || newApp(appName);
    const i = indexed(appName, inst);
    const old = a.byId.get(i.id);
    const at = position(a.list, i.id);
    if (old) {
      a.list[at] = i;
      count(a, old.status, -1);
    } else {
      a.list.splice(at, 0, i);
      total++;
    }
    a.byId.set(i.id, i);
    count(a, i.status, 1);
  }

  function remove(appName, id) {
    const a = apps.get(appName);
    const old = a && a.byId.get(id);
    if (!old) return;
    a.list.splice(position(a.list, id), 1);
    a.byId.delete(id);
    count(a, old.status, -1);
    total--;
    if (!a.list.length) {
      apps.delete(appName);
      appNames = null;
    }
  }

  // ---- out of rotation ----

  // outOf holds the local instances a gateway keeps out of rotation, by
  // app and id: from api/summary, then from each api/traffic read
  // (traffic.js's "eurekagate:out" event), which is every second.
  let outOf = new Map(), outSig = "[]";
  const outKey = (app, id) => app + "\n" + id;

  function setOut(list) {
    const sig = JSON.stringify(list);
    if (sig === outSig) return;
    outSig = sig;
    outOf = new Map();
    for (const o of list) if (!o.region) outOf.set(outKey(o.app, o.id), o);
    schedule();
  }
  window.addEventListener("eurekagate:out", (e) => setOut(e.detail || []));

  // may is what the signed-in account may write (api/summary's "may"), or
  // null when it may write everything: the actions it may not take are
  // disabled, with a title saying why.
  let may = null;

  function mayAct(app) {
    if (!may || may.operator) return true;
    const name = app.toUpperCase();
    return may.apps.some((p) => new RegExp("^" + p.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*") + "$").test(name));
  }

  function load(s) {
    may = s.may || null;
    const out = [];
    for (const app of s.applications) {
      for (const i of app.instances) if (i.ejected || i.failing_health_check) out.push({ app: app.name, id: i.id, ejected: i.ejected, failing_health_check: i.failing_health_check });
    }
    setOut(out);
    apps.clear();
    appNames = null;
    total = 0;
    for (const app of s.applications) {
      const a = newApp(app.name);
      a.list = app.instances.map((i) => indexed(app.name, i));
      a.list.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
      for (const i of a.list) {
        a.byId.set(i.id, i);
        count(a, i.status, 1);
      }
      total += a.list.length;
    }
    feed = s.recent.slice(-FEED_KEEP);
    feedDirty = true;
    rulesConfigured = true;
    rulesSoon(0);
    started = s.started;
    version = s.registry_version;
    rows.clear();
    el("instances").tBodies[0].replaceChildren();
    setHead(s);
  }

  function apply(d) {
    for (const u of d.updates) {
      if (u.removed) remove(u.app, u.id); else upsert(u.app, u.instance);
    }
    const lastFeed = feed.length ? feed[feed.length - 1].version : 0;
    const fresh = d.changes.filter((c) => c.version > lastFeed);
    if (fresh.length) {
      feed = feed.concat(fresh).slice(-FEED_KEEP);
      feedDirty = true;
    }
    for (const [app, beats] of Object.entries(d.heartbeats)) {
      const a = apps.get(app);
      if (!a) continue;
      for (const [id, t] of Object.entries(beats)) {
        const i = a.byId.get(id);
        if (i) i.last_heartbeat = t;
      }
    }
    if (d.updates.length) document.dispatchEvent(new Event("registry-changed")); // the charts refresh
    if (d.updates.some((u) => rulesByApp.has(u.app))) rulesSoon(500); // their subsets changed
    version = d.registry_version;
    setHead(d);
  }

  function sortedNames() {
    if (!appNames) appNames = Array.from(apps.keys()).sort();
    return appNames;
  }

  // ---- search ----

  function parse(q) {
    return q.toLowerCase().split(/\s+/).filter(Boolean).map((w) => {
      const m = /^(app|id|host|status|zone):(.*)$/.exec(w);
      return m ? { field: FIELDS[m[1]], text: m[2] } : { field: -1, text: w };
    });
  }

  function matches(f, t) {
    if (t.field >= 0) return f[t.field].includes(t.text);
    for (let k = 0; k < f.length; k++) if (f[k].includes(t.text)) return true;
    return false;
  }

  function instanceMatches(i) {
    for (const t of tokens) if (!matches(i.f, t)) return false;
    return true;
  }

  function appNameMatches(name) {
    const n = name.toLowerCase();
    return tokens.every((t) => (t.field < 0 || t.field === FIELDS.app) && n.includes(t.text));
  }

  function eventMatches(c) {
    if (!tokens.length) return true;
    const f = [c.app.toLowerCase(), c.id.toLowerCase(), "", (c.status + " " + c.kind).toLowerCase(), ""];
    return tokens.every((t) => matches(f, t));
  }

  // lines lists what the table would show, app header then its rows.
  function lines() {
    const out = [];
    let apps_ = 0, instances = 0;
    for (const name of sortedNames()) {
      const a = apps.get(name);
      const list = !tokens.length || appNameMatches(name) ? a.list : a.list.filter(instanceMatches);
      if (!list.length) continue;
      apps_++;
      instances += list.length;
      const open = expanded.has(name) ? expanded.get(name) : list.length <= COLLAPSE_AT;
      const r = rulesByApp.get(name);
      out.push({ key: "a\u0000" + name, app: a, shown: list.length, open: open, hasRules: !!r });
      if (open && r) out.push({ key: "r\u0000" + name, app: a, r: r });
      if (open) for (const i of list) out.push({ key: "i\u0000" + name + "\u0000" + i.id, app: a, i: i });
    }
    return { lines: out, apps: apps_, instances: instances };
  }

  // ---- rendering ----

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(render);
  }

  function setHead(s) {
    head = s;
    apiPrefix = s.api_prefix;
    skew = Date.parse(s.now) - Date.now();
    schedule();
  }

  function render() {
    scheduled = false;
    renderHead();
    if (!busy) renderTable();
    if (feedDirty) renderFeed();
  }

  function renderHead() {
    const s = head;
    if (!s) return;
    el("updated").textContent = "Node " + s.node + " · updated " + new Date().toLocaleTimeString();
    facts(el("general"), [
      ["Node", s.node], ["Version", s.version], ["Uptime", duration(s.uptime_seconds * 1000)],
      ["Started", new Date(s.started).toLocaleString()], ["Peers", s.peers.length],
      ["Applications", apps.size, "applications"], ["Instances", total, "instances"],
    ]);
    const sp = s.self_preservation;
    facts(el("sp"), [
      ["Self-preservation", sp.enabled ? (sp.active ? "ACTIVE: evictions suspended" : "armed") : "switched off"],
      ["Expected renewing clients", sp.expected_renewing_clients], ["Renew threshold (per min)", sp.threshold],
      ["Renews last minute", sp.renews_last_minute],
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
  }

  const STATUS_ORDER = ["UP", "STARTING", "OUT_OF_SERVICE", "DOWN", "UNKNOWN"];

  function fillAppRow(tr, line) {
    const a = line.app;
    let out = 0;
    for (const k of outOf.keys()) if (k.startsWith(a.name + "\n") && a.byId.has(k.slice(a.name.length + 1))) out++;
    const sig = line.open + "|" + line.shown + "|" + a.list.length + "|" + line.hasRules + "|" + JSON.stringify(a.counts) + "|" + out;
    if (tr._sig === sig) return;
    tr._sig = sig;
    if (!tr._toggle) {
      // Built once: the toggle keeps its focus across updates.
      const th = text("th", undefined, { scope: "rowgroup", colspan: "8" });
      tr._toggle = text("button", undefined, { type: "button", class: "toggle", "data-act": "toggle" });
      tr._counts = text("span", undefined, { class: "counts" });
      th.append(tr._toggle, tr._counts);
      tr.append(th);
    }
    tr._toggle.textContent = (line.open ? "▾ " : "▸ ") + a.name;
    tr._toggle.setAttribute("aria-expanded", String(line.open));
    const n = line.shown === a.list.length ? a.list.length + (a.list.length === 1 ? " instance" : " instances")
      : line.shown + " of " + a.list.length + " instances match";
    const parts = [document.createTextNode(n)];
    const statuses = Object.keys(a.counts).sort((x, y) => STATUS_ORDER.indexOf(x) - STATUS_ORDER.indexOf(y));
    for (const st of statuses) {
      parts.push(document.createTextNode(" · "), text("span", a.counts[st] + " " + st, { class: "status status-" + st }));
    }
    if (out) parts.push(document.createTextNode(" · "), text("span", out + " out of rotation", { class: "mark mark-out", "data-mark": "app-out" }));
    if (line.hasRules) parts.push(document.createTextNode(" · "), text("span", "traffic rules", { class: "has-rules" }));
    tr._counts.replaceChildren(...parts);
  }

  const FALLBACK = {
    default: "the default subset (any instance when there is none)",
    any: "any instance of the app",
    none: "none: the request is answered 503",
  };

  const plural = (n, word) => n + " " + word + (n === 1 ? "" : "s");

  // statusCounts renders counts by status: "3 UP · 1 DOWN".
  function statusCounts(counts) {
    const parts = [];
    const statuses = Object.keys(counts).sort((x, y) => STATUS_ORDER.indexOf(x) - STATUS_ORDER.indexOf(y));
    for (const st of statuses) {
      parts.push(document.createTextNode(" · "), text("span", counts[st] + " " + st, { class: "status status-" + st }));
    }
    return parts;
  }

  // fillRulesRow shows an app's traffic rules, conditions to targets, and
  // the instances of each subset. Everything is text: ids and metadata
  // come from the registry's clients.
  function fillRulesRow(tr, line) {
    const r = line.r;
    if (tr._sig === r.sig) return;
    tr._sig = r.sig;
    const doc = r.rules;
    const box = text("div", undefined, { class: "rules" });
    const title = text("h3", "Traffic rules");
    if (r.source) title.append(" ", text("span", "from " + r.source, { class: "muted" }));
    box.append(title);

    const ol = text("ol", undefined, { class: "rule-list", "aria-label": "Rules of " + r.app + ", the first that holds takes the request" });
    for (const rule of doc.rules || []) {
      const li = document.createElement("li");
      const when = rule.match && rule.match.length ? "if " + rule.match.join(" and ") : "every request";
      li.append(text("span", when, { class: "when" }), document.createTextNode(" → "));
      const sum = rule.to.reduce((n, t) => n + t.weight, 0);
      rule.to.forEach((t, k) => {
        if (k) li.append(document.createTextNode(", "));
        li.append(text("code", t.subset, { class: "subset" }));
        if (rule.to.length > 1) {
          const share = sum ? Math.round((t.weight * 1000) / sum) / 10 : 0;
          li.append(text("span", " " + share + "% (weight " + t.weight + ")", { class: "weight" }));
        }
      });
      if (rule.sticky) li.append(text("span", " · sticky by " + rule.sticky, { class: "sticky muted" }));
      ol.append(li);
    }
    const otherwise = text("li", undefined, { class: "otherwise" });
    otherwise.append(text("span", doc.rules && doc.rules.length ? "otherwise" : "every request", { class: "when" }),
      document.createTextNode(" → "),
      doc.default ? text("code", doc.default, { class: "subset" }) : document.createTextNode("any instance"),
      text("span", " (default)", { class: "muted" }));
    ol.append(otherwise);
    box.append(ol, text("p", "Fallback, when a subset has no instance that can take a request: " + (FALLBACK[doc.fallback] || doc.fallback), { class: "fallback muted" }));

    const ul = text("ul", undefined, { class: "subsets", "aria-label": "Subsets of " + r.app });
    for (const sub of r.subsets) {
      const li = text("li", undefined, { "data-subset": sub.label });
      li.append(text("code", sub.label, { class: "subset" }));
      if (sub.default) li.append(text("span", " default", { class: "muted" }));
      li.append(document.createTextNode(": " + plural(sub.count, "instance")), ...statusCounts(sub.counts));
      if (sub.instances.length) {
        const members = text("span", undefined, { class: "members" });
        for (const i of sub.instances) {
          const m = text("span", undefined, { class: "member", "data-instance": i.id });
          m.append(text("span", i.id, { class: "id" }), document.createTextNode(" "), text("span", i.status, { class: "status status-" + i.status }));
          members.append(m);
        }
        if (sub.count > sub.instances.length) members.append(text("span", "and " + (sub.count - sub.instances.length) + " more", { class: "muted" }));
        li.append(members);
      }
      ul.append(li);
    }
    if (r.unmatched) ul.append(text("li", plural(r.unmatched, "instance") + " in no subset", { class: "unmatched muted" }));
    box.append(ul);
    const td = text("td", undefined, { colspan: "8" });
    td.append(box);
    tr.replaceChildren(td);
  }

  function heartbeat(i) {
    return duration(Date.now() + skew - i.last_heartbeat) + " ago";
  }

  // status is an instance's status with the marks of a gateway that keeps
  // it out of rotation.
  function status(i, out) {
    const box = document.createElement("span");
    box.append(text("span", i.status, { class: "status status-" + i.status }));
    for (const m of window.dom.outMarks(out)) box.append(document.createTextNode(" "), m);
    return box;
  }

  function fillInstanceRow(tr, line) {
    const i = line.i;
    tr._inst = i;
    const out = outOf.get(outKey(i.app, i.id));
    const sig = [i.address, i.status, i.overridden_status, i.zone, i.status_page_url, i.health_check_url, JSON.stringify(out || null)].join("|");
    if (tr._sig === sig) {
      tr._hb.textContent = heartbeat(i);
      return;
    }
    tr._sig = sig;
    const links = document.createElement("span");
    links.append(link(i.status_page_url, "status"), document.createTextNode(" "), link(i.health_check_url, "health"));
    const actions = document.createElement("span");
    if (i.overridden_status === "OUT_OF_SERVICE") actions.append(button("Put back in service", "putback"));
    else actions.append(button("Take out of service", "out"));
    actions.append(button("Deregister", "deregister", true));
    if (!mayAct(i.app)) {
      for (const b of actions.children) {
        b.disabled = true;
        b.title = "Your account may not change this application's instances";
      }
    }
    tr._hb = cell("Last heartbeat", heartbeat(i));
    // Keep the keyboard focus on the row's action buttons across an update.
    const focused = tr.contains(document.activeElement) ? Array.from(tr.querySelectorAll("button")).indexOf(document.activeElement) : -1;
    tr.replaceChildren(cell("Application", i.app), cell("Instance", i.id + " (" + i.address + ")"),
      cell("Status", status(i, out)),
      cell("Override", i.overridden_status === "UNKNOWN" ? "none" : i.overridden_status),
      cell("Zone", i.zone || ""), tr._hb, cell("Links", links), cell("Actions", actions));
    if (focused >= 0) actions.children[Math.min(focused, actions.children.length - 1)].focus();
  }

  function renderTable() {
    const view = lines();
    const size = pageSize();
    const pages = Math.max(1, Math.ceil(view.lines.length / size));
    page = Math.min(page, pages - 1);
    const want = view.lines.slice(page * size, page * size + size);
    const tbody = el("instances").tBodies[0];
    const keep = new Set();
    const onScreen = new Set();
    const trs = [];
    for (const line of want) {
      keep.add(line.key);
      let tr = rows.get(line.key);
      if (!tr) {
        tr = document.createElement("tr");
        if (line.i) {
          tr.dataset.instance = line.i.id;
        } else {
          tr.className = line.r ? "rules-row" : "app-row";
        }
        tr.dataset.app = line.app.name;
        rows.set(line.key, tr);
      }
      if (line.i) {
        fillInstanceRow(tr, line);
        onScreen.add(line.app.name);
      } else if (line.r) {
        fillRulesRow(tr, line);
      } else {
        fillAppRow(tr, line);
      }
      trs.push(tr);
    }
    place(tbody, trs);
    for (const k of rows.keys()) if (!keep.has(k)) rows.delete(k);

    const empty = view.lines.length === 0;
    el("instances").hidden = empty;
    el("no-apps").hidden = !empty;
    el("no-apps").textContent = total === 0 ? "No instance is registered." : "Nothing matches the search.";
    el("match-count").textContent = tokens.length
      ? view.apps + " of " + apps.size + " apps, " + view.instances + " of " + total + " instances match"
      : apps.size + " apps, " + total + " instances";
    el("pager").hidden = pages <= 1;
    el("page-info").textContent = "Page " + (page + 1) + " of " + pages;
    el("prev").disabled = page === 0;
    el("next").disabled = page >= pages - 1;

    const shown = Array.from(onScreen).sort();
    if (shown.join(",") !== shownApps.join(",")) {
      shownApps = shown;
      repoll();
    }
  }

  const KIND = {
    registered: "registered", cancelled: "cancelled", evicted: "evicted", status_set: "status set",
    override_deleted: "override removed", override_adopted: "override from peer", renewed: "status by heartbeat",
    metadata_updated: "metadata",
  };

  function renderFeed() {
    feedDirty = false;
    const ol = el("feed");
    const items = [];
    for (let k = feed.length - 1; k >= 0 && items.length < FEED_SHOW; k--) {
      const c = feed[k];
      if (!eventMatches(c)) continue;
      const li = document.createElement("li");
      li.className = "kind-" + c.kind;
      const target = text("span", undefined, { class: "target" });
      target.append(text("span", c.app, { class: "app" }), document.createTextNode(" "), text("span", c.id, { class: "id" }));
      li.append(text("time", new Date(c.at).toLocaleTimeString(), { datetime: new Date(c.at).toISOString() }),
        text("span", KIND[c.kind] || c.kind, { class: "kind" }), target,
        text("span", c.status, { class: "status status-" + c.status }));
      items.push(li);
    }
    ol.replaceChildren(...items);
    el("no-feed").hidden = items.length > 0;
    el("no-feed").textContent = feed.length ? "No recent change matches the search." : "No change yet.";
    el("feed").hidden = items.length === 0;
    el("feed-note").textContent = tokens.length ? "(matching the search)" : "";
  }

  // The heartbeat ages on screen count up between refreshes.
  setInterval(() => {
    for (const tr of rows.values()) if (tr._inst && tr._hb) tr._hb.textContent = heartbeat(tr._inst);
  }, 1000);

  // ---- search box and pages, kept in the hash ----

  function readHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    const q = h.get("q") || "";
    el("search").value = q;
    tokens = parse(q);
    page = Math.max(0, (parseInt(h.get("page"), 10) || 1) - 1);
    feedDirty = true;
  }

  function writeHash() {
    const h = new URLSearchParams();
    const q = el("search").value.trim();
    if (q) h.set("q", q);
    if (page > 0) h.set("page", String(page + 1));
    const s = h.toString();
    history.replaceState(null, "", s ? "#" + s : location.pathname + location.search);
  }

  el("search").addEventListener("input", () => {
    tokens = parse(el("search").value);
    page = 0;
    feedDirty = true;
    writeHash();
    schedule();
  });
  el("search").addEventListener("keydown", (e) => {
    if (e.key === "Escape" && el("search").value) {
      el("search").value = "";
      el("search").dispatchEvent(new Event("input"));
    }
  });
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.key === "/" && !(t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement) && !el("confirm").open) {
      e.preventDefault();
      el("search").focus();
    }
  });
  narrow.addEventListener("change", schedule);
  window.addEventListener("hashchange", () => {
    readHash();
    schedule();
  });
  el("prev").addEventListener("click", () => {
    page = Math.max(0, page - 1);
    writeHash();
    schedule();
  });
  el("next").addEventListener("click", () => {
    page++;
    writeHash();
    schedule();
  });

  // ---- actions ----

  const actions = {
    out: { method: "PUT", path: "/status?value=OUT_OF_SERVICE", verb: "Take out of service",
      text: "stops receiving traffic until it is put back." },
    putback: { method: "DELETE", path: "/status", verb: "Put back in service",
      text: "loses its override; its next heartbeat makes it register again with its own status." },
    deregister: { method: "DELETE", path: "", verb: "Deregister",
      text: "is removed from the registry; a running client registers again at its next heartbeat." },
  };

  el("instances").tBodies[0].addEventListener("click", (e) => {
    const b = e.target.closest("button[data-act]");
    if (!b) return;
    const tr = b.closest("tr");
    const app = tr.dataset.app;
    if (b.dataset.act === "toggle") {
      expanded.set(app, b.getAttribute("aria-expanded") !== "true");
      schedule();
      return;
    }
    act(app, tr.dataset.instance, b.dataset.act);
  });

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
    schedule();
    if (!ok) return;
    const url = apiPrefix + "/apps/" + encodeURIComponent(app) + "/" + encodeURIComponent(id) + a.path;
    const result = el("result");
    try {
      // The registry refuses a browser's write without this header
      // (httpapi.HeaderCSRF): another site's page cannot send it.
      const resp = await fetch(url, { method: a.method, credentials: "same-origin", headers: { "Eurekagate-CSRF": "1" } });
      result.className = resp.ok ? "" : "error";
      result.textContent = resp.ok ? a.verb + ": " + id + " done." :
        a.verb + ": " + id + " failed: HTTP " + resp.status + (resp.status === 401 ? " (credentials required)" : "");
    } catch (e) {
      result.className = "error";
      result.textContent = a.verb + ": " + id + " failed: " + e.message;
    }
    // The change arrives through the long poll.
  }

  // ---- data ----

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  let polling = null;       // the AbortController of the request in flight
  let repollTimer = 0;

  // repoll restarts the wait when the apps on screen change, so their
  // heartbeats come at once.
  function repoll() {
    clearTimeout(repollTimer);
    repollTimer = setTimeout(() => {
      if (polling) polling.abort();
    }, 300);
  }

  async function getJSON(url, signal) {
    const resp = await fetch(url, { credentials: "same-origin", cache: "no-store", signal: signal });
    if (!resp.ok) throw new Error("HTTP " + resp.status);
    return resp.json();
  }

  // ---- traffic rules ----

  let rulesTimer = 0, rulesDue = 0, rulesSeq = 0;

  // rulesSoon reads api/rules in ms, or sooner if a read is due before.
  function rulesSoon(ms) {
    if (!rulesConfigured) return;
    const due = Date.now() + ms;
    if (rulesTimer && rulesDue <= due) return;
    clearTimeout(rulesTimer);
    rulesDue = due;
    rulesTimer = setTimeout(readRules, ms);
  }

  async function readRules() {
    rulesTimer = 0;
    const seq = ++rulesSeq;
    try {
      const d = await getJSON("api/rules");
      if (seq === rulesSeq) setRules(d);
    } catch (e) {
      // The next read tries again.
    }
    rulesSoon(RULES_EVERY);
  }

  function setRules(d) {
    rulesConfigured = d.configured;
    const next = new Map();
    for (const a of d.apps) {
      a.source = d.source || "";
      a.sig = JSON.stringify(a);
      next.set(a.app, a);
    }
    rulesByApp = next;
    schedule();
  }

  async function run() {
    let loaded = false;
    for (;;) {
      const ctl = new AbortController();
      polling = ctl;
      try {
        if (!loaded) {
          load(await getJSON("api/summary", ctl.signal));
          loaded = true;
        } else {
          let url = "api/changes?since=" + version + "&wait=" + WAIT;
          if (shownApps.length) url += "&apps=" + encodeURIComponent(shownApps.join(","));
          const d = await getJSON(url, ctl.signal);
          if (d.reset || d.started !== started) {
            loaded = false;
            continue;
          }
          apply(d);
        }
        await sleep(250); // let a burst of changes gather
      } catch (e) {
        if (ctl.signal.aborted) continue;
        el("updated").textContent = "Cannot reach the registry (" + e.message + "); retrying…";
        await sleep(2000);
      }
    }
  }

  readHash();
  run();
})();
