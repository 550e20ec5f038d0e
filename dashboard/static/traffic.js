"use strict";
// The Traffic panel: the requests the gateways route, per app, live, from
// api/traffic, read every second while the page is visible. Each app has a
// card: requests per second, share of 5xx answers and latency (median and
// 99th percentile) over the last minute and 15 minutes, small charts of
// both, and the split over its instances in the last minute, those a
// gateway keeps out of rotation (ejected, failing their health check)
// first and marked, with since when, why and until when. The apps with
// errors come first (the server sorts them) with a red badge; the first
// few are shown, the rest on demand. The requests for names nobody
// registered are one line under the cards ("unrouted"), never a card.
// Each read hands the instances out of rotation to the Applications list
// (the "eurekagate:out" event). Without a gateway's traffic the section
// stays hidden. Names come from clients: all text.
(function () {
  const { text, svg, place, outMarks } = window.dom;
  const SHOW = 12;           // cards shown until "Show all"
  const INSTANCES = 8;       // instances listed per card
  const EVERY = 1000;        // ms between reads while the page is visible
  const HIDDEN_EVERY = 10000; // ... while it is not
  const OFF_EVERY = 15000;   // ... while traffic is disabled
  const RETRY = 2000;        // ... after a failed read
  const W = 150, H = 64, L = 24, R = 4, T = 6, B = 13;

  const el = (id) => document.getElementById(id);
  const section = el("traffic-section");
  const grid = el("traffic");
  const more = el("traffic-more");
  const cards = new Map(); // app -> its card
  // The cards on screen (or near it): the others are redrawn when they
  // come into view, so that 100 apps cost what a screenful does.
  const onScreen = new Set();
  const io = "IntersectionObserver" in window ? new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) {
        onScreen.delete(e.target);
        continue;
      }
      onScreen.add(e.target);
      if (e.target._data && e.target._drawn !== e.target._data) draw(e.target);
    }
  }, { rootMargin: "200px" }) : null;
  let showAll = false;
  let last = null;

  // ---- numbers ----

  function rate(v) {
    if (!v) return "0";
    if (v >= 10000) return (v / 1000).toFixed(v >= 100000 ? 0 : 1) + "k";
    if (v >= 100) return String(Math.round(v));
    if (v >= 10) return v.toFixed(0);
    return v.toFixed(1);
  }

  function share(v) {
    if (!v) return "0%";
    if (v < 0.001) return "<0.1%";
    return (v * 100).toFixed(v >= 0.1 ? 0 : 1) + "%";
  }

  function ms(v) {
    if (v === null || v === undefined) return "–";
    if (v >= 10000) return ">10 s";
    if (v >= 1000) return (v / 1000).toFixed(1) + " s";
    if (v >= 10) return Math.round(v) + " ms";
    return v.toFixed(1) + " ms";
  }

  // nice rounds a maximum up to 1, 2 or 5 times a power of ten.
  function nice(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 5, 10]) if (m * p >= v * (1 - 1e-9)) return m * p;
    return 10 * p;
  }

  // ---- a card ----

  // chart draws requests and 5xx answers per second, a line each, broken
  // where a period has no data.
  function chart(series, from, summary) {
    const n = series.requests.length;
    const step = (W - L - R) / Math.max(1, n - 1);
    const x = (k) => L + k * step;
    let max = 0;
    for (const v of series.requests) if (v !== null && v > max) max = v;
    max = nice(max);
    const y = (v) => T + (1 - v / max) * (H - T - B);
    const root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": summary, class: "chart t-chart" });
    root.append(svg("title", {}, summary));
    for (const v of [0, max]) {
      root.append(svg("line", { class: "grid", x1: L, x2: W - R, y1: y(v), y2: y(v) }));
      root.append(svg("text", { class: "axis", x: L - 3, y: y(v) + 3, "text-anchor": "end" }, rate(v)));
    }
    root.append(svg("text", { class: "axis", x: L, y: H - 2, "text-anchor": "start" }, from));
    root.append(svg("text", { class: "axis", x: W - R, y: H - 2, "text-anchor": "end" }, "now"));
    for (const [cls, values] of [["requests", series.requests], ["errors", series.errors]]) {
      let d = "", pen = false;
      values.forEach((v, k) => {
        if (v === null) {
          pen = false;
          return;
        }
        d += (pen ? "L" : "M") + x(k).toFixed(1) + " " + y(Math.min(v, max)).toFixed(1);
        pen = true;
      });
      const g = svg("g", { class: "series s-" + cls });
      if (d) g.append(svg("path", { d: d }));
      // A point alone (the first period sampled) is a dot.
      values.forEach((v, k) => {
        if (v !== null && (k === 0 || values[k - 1] === null) && (k === n - 1 || values[k + 1] === null)) {
          g.append(svg("circle", { cx: x(k), cy: y(Math.min(v, max)), r: 1.6 }));
        }
      });
      root.append(g);
    }
    return root;
  }

  function stats(a) {
    const box = text("div", undefined, { class: "t-stats", role: "table", "aria-label": "Traffic of " + a.app });
    const row = (cells, head) => {
      const r = text("div", undefined, { role: "row" });
      cells.forEach((c, k) => r.append(text("span", c[0], Object.assign({ role: head ? "columnheader" : k ? "cell" : "rowheader" }, c[1] || {}))));
      box.append(r);
    };
    row([[""], ["req/s"], ["5xx"], ["p50"], ["p99"]], true);
    for (const [label, key, w] of [["1 min", "1m", a.last_minute], ["15 min", "15m", a.last_15_minutes]]) {
      row([[label], [rate(w.rate), { "data-stat": "rate-" + key }],
        [share(w.error_share), { "data-stat": "errors-" + key, class: w.errors ? "bad" : "" }],
        [ms(w.p50_ms), { "data-stat": "p50-" + key }], [ms(w.p99_ms), { "data-stat": "p99-" + key }]]);
    }
    return box;
  }

  function instances(a) {
    const ul = text("ul", undefined, { class: "t-instances", "aria-label": "Requests of " + a.app + " per instance, last minute" });
    for (const i of a.instances.slice(0, INSTANCES)) {
      const out = i.ejected || i.failing_health_check;
      const li = text("li", undefined, { "data-instance": i.id, class: out ? "bad out" : i.errors ? "bad" : "" });
      const bar = text("span", undefined, { class: "t-bar", "aria-hidden": "true" });
      const fill = text("span");
      fill.style.width = Math.max(1, Math.round(i.share * 100)) + "%";
      bar.append(fill);
      // Another region's instance is named with its region: ids repeat across regions.
      const name = i.region ? i.id + " (" + i.region + ")" : i.id;
      li.append(text("span", name, { class: "t-id", title: name }), bar,
        text("span", rate(i.rate) + "/s · " + share(i.share), { class: "t-num" }));
      if (i.errors) li.append(text("span", share(i.error_share) + " 5xx", { class: "t-err" }));
      if (out) {
        const marks = text("span", undefined, { class: "t-marks" });
        marks.append(...outMarks(i));
        li.append(marks);
      }
      ul.append(li);
    }
    const rest = a.instance_count - Math.min(a.instances.length, INSTANCES);
    if (rest > 0) ul.append(text("li", "and " + rest + " more", { class: "muted" }));
    if (!a.instance_count) ul.append(text("li", "no instance answered in the last minute", { class: "muted" }));
    return ul;
  }

  function fill(card, a) {
    const m = a.last_minute, q = a.last_15_minutes;
    card.classList.toggle("has-errors", m.errors > 0);
    const h = text("h3", undefined);
    h.append(text("span", a.app, { class: "t-name" }));
    if (m.errors) h.append(text("span", "5xx " + share(m.error_share), { class: "badge badge-error", title: m.errors + " 5xx answers in the last minute" }));
    else if (q.errors) h.append(text("span", "5xx earlier", { class: "badge badge-warn", title: q.errors + " 5xx answers in the last 15 minutes" }));
    if (a.breaker === "open" || a.breaker === "half_open") {
      // The app's circuit breaker refuses its requests (half-open: all but a few probes).
      h.append(text("span", a.breaker === "open" ? "circuit open" : "circuit half-open",
        { class: "badge " + (a.breaker === "open" ? "badge-error" : "badge-warn"), title: (a.breaker_rejected || 0) + " requests refused by the circuit breaker" }));
    }
    for (const s of a.open_subsets || []) {
      // A subset's own circuit breaker (per_subset): the badge names the subset.
      h.append(text("span", (s.breaker === "open" ? "circuit open: " : "circuit half-open: ") + s.subset,
        { class: "badge " + (s.breaker === "open" ? "badge-error" : "badge-warn"), title: (s.rejected || 0) + " requests to subset " + s.subset + " refused by its circuit breaker" }));
    }
    if (a.in_flight) h.append(text("span", a.in_flight + " in flight", { class: "t-inflight muted" }));
    if (!a.per_second) {
      // Asked for the first apps' details only: these come with the next read.
      card.replaceChildren(h, stats(a));
      return;
    }
    const charts = text("div", undefined, { class: "t-charts" });
    const f1 = text("figure"), f2 = text("figure");
    f1.append(text("figcaption", "Last minute, per second"),
      chart(a.per_second, "−60 s", a.app + ", last minute: " + rate(m.rate) + " requests a second, " + share(m.error_share) + " 5xx."));
    f2.append(text("figcaption", "15 minutes, per 10 s"),
      chart(a.per_10_seconds, "−15 min", a.app + ", last 15 minutes: " + rate(q.rate) + " requests a second, " + share(q.error_share) + " 5xx."));
    charts.append(f1, f2);
    card.replaceChildren(h, stats(a), charts, instances(a));
  }

  function draw(card) {
    card._drawn = card._data;
    fill(card, card._data);
  }

  // ---- the panel ----

  function render(d) {
    last = d;
    section.hidden = false;
    const apps = d.apps;
    const shown = showAll ? apps : apps.slice(0, SHOW);
    const keep = new Set();
    const shownCards = [];
    for (const a of shown) {
      keep.add(a.app);
      let card = cards.get(a.app);
      if (!card) {
        card = text("article", undefined, { class: "t-app" });
        card.dataset.app = a.app;
        cards.set(a.app, card);
        if (io) io.observe(card);
      }
      card._data = a;
      if (!io || !card._drawn || onScreen.has(card) || (a.per_second && !card._drawn.per_second)) draw(card);
      shownCards.push(card);
    }
    place(grid, shownCards);
    for (const [k, card] of cards) {
      if (keep.has(k)) continue;
      cards.delete(k);
      onScreen.delete(card);
      if (io) io.unobserve(card);
    }

    const failing = apps.filter((a) => a.last_minute.errors > 0).length;
    const total = apps.reduce((s, a) => s + a.last_minute.rate, 0);
    const note = apps.length + (apps.length === 1 ? " app" : " apps") + " · " + rate(total) + " req/s in all";
    el("traffic-note").textContent = note + (failing ? " · " : "");
    const bad = el("traffic-failing");
    bad.textContent = failing ? failing + " with 5xx answers" : "";
    bad.hidden = !failing;
    el("no-traffic").hidden = apps.length > 0;
    const u = d.unrouted.last_minute, u15 = d.unrouted.last_15_minutes;
    const unrouted = el("traffic-unrouted");
    unrouted.hidden = !u15.requests;
    const names = d.unrouted.names.map((n) => n.name + " (" + n.requests + ")").join(", ");
    unrouted.textContent = "Unrouted (names nobody registered): " + rate(u.rate) + " req/s in the last minute, " +
      u15.requests + " requests in 15 minutes" + (names ? "; asked most: " + names : "");
    window.dispatchEvent(new CustomEvent("eurekagate:out", { detail: d.out_of_rotation }));
    more.hidden = apps.length <= SHOW;
    more.textContent = showAll ? "Show the first " + SHOW : "Show all " + apps.length + " apps";
    more.setAttribute("aria-expanded", String(showAll));
  }

  function off() {
    last = null;
    section.hidden = true;
    grid.replaceChildren();
    if (io) io.disconnect();
    cards.clear();
    onScreen.clear();
  }

  more.addEventListener("click", () => {
    showAll = !showAll;
    if (last) render(last);
    readNow(); // with the details of every app
  });

  // The series and instances of the apps shown only.
  const readNow = poll(() => showAll ? "api/traffic" : "api/traffic?top=" + SHOW,
    { every: EVERY, hidden: HIDDEN_EVERY, retry: RETRY }, (d) => {
      if (d.enabled) {
        render(d);
        return 0;
      }
      off();
      return OFF_EVERY;
    }, (e) => {
      if (last) el("traffic-note").textContent = "not updating (" + e.message + ")";
    });
})();
