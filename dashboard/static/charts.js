"use strict";
// The charts: the last 15 minutes per minute, from api/charts, drawn as
// plain SVG, refreshed every 15 s and, at most every 5 s, when the page
// receives changes. Every chart marks when self-preservation started or ended and
// shades the minutes it held.
(function () {
  const { svg } = window.dom;
  const W = 320, H = 150, L = 36, R = 8, T = 16, B = 20;
  const STATUS_ORDER = ["UP", "STARTING", "OUT_OF_SERVICE", "DOWN", "UNKNOWN"];

  // nice rounds a maximum up to 1, 2 or 5 times a power of ten.
  function nice(v) {
    if (v <= 4) return 4;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function fmt(v) {
    return v >= 10000 ? Math.round(v / 1000) + "k" : String(v);
  }

  // draw renders one chart into figure fig: series are {name, cls,
  // values (numbers or null, one per minute), dashed, steps (a level held
  // through each minute rather than a point at it), total (the legend
  // shows the sum rather than the last value)}.
  function draw(fig, data, series, summary) {
    const n = data.minutes.length;
    const step = (W - L - R) / (n - 1);
    const x = (k) => L + k * step;
    let max = 0;
    for (const s of series) for (const v of s.values) if (v !== null && v > max) max = v;
    max = nice(max);
    const y = (v) => T + (1 - v / max) * (H - T - B);

    const root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": summary, class: "chart" });
    root.append(svg("title", {}, summary));
    // Minutes under self-preservation.
    data.minutes.forEach((m, k) => {
      if (m.self_preservation) {
        const x0 = Math.max(L, x(k) - step / 2), x1 = Math.min(W - R, x(k) + step / 2);
        root.append(svg("rect", { class: "sp-zone", x: x0, y: T, width: x1 - x0, height: H - T - B }));
      }
    });
    // Grid and labels.
    for (const v of [0, max / 2, max]) {
      root.append(svg("line", { class: "grid", x1: L, x2: W - R, y1: y(v), y2: y(v) }));
      root.append(svg("text", { class: "axis", x: L - 4, y: y(v) + 3, "text-anchor": "end" }, fmt(v)));
    }
    for (const [k, label] of [[0, "−15 min"], [5, "−10"], [10, "−5"], [n - 1, "now"]]) {
      root.append(svg("text", { class: "axis", x: x(k), y: H - 6, "text-anchor": k === 0 ? "start" : k === n - 1 ? "end" : "middle" }, label));
    }
    // Self-preservation starts and ends.
    for (const mk of data.markers) {
      // A minute's point is at its middle: its start is half a step before.
      const pos = (mk.at - data.minutes[0].start) / data.minute_ms - 0.5;
      if (pos < -0.5 || pos > n) continue;
      const mx = Math.max(L, Math.min(W - R, x(0) + pos * step));
      root.append(svg("line", { class: "marker marker-" + mk.kind, x1: mx, x2: mx, y1: T - 4, y2: H - B }));
      root.append(svg("text", { class: "marker-label", x: mx, y: T - 6, "text-anchor": mx > W - 60 ? "end" : "middle" },
        mk.kind === "started" ? "self-preservation on" : "off"));
    }
    // The series: a line through the known minutes, broken where a minute
    // is unknown, and a dot on each.
    for (const s of series) {
      let d = "";
      let pen = false;
      s.values.forEach((v, k) => {
        if (v === null) {
          pen = false;
          return;
        }
        if (s.steps) {
          // A level held through the minute: a step from its start to its end.
          const x0 = Math.max(L, x(k) - step / 2), x1 = Math.min(W - R, x(k) + step / 2);
          d += (pen ? "L" : "M") + x0.toFixed(1) + " " + y(v).toFixed(1) + "L" + x1.toFixed(1) + " " + y(v).toFixed(1);
        } else {
          d += (pen ? "L" : "M") + x(k).toFixed(1) + " " + y(v).toFixed(1);
        }
        pen = true;
      });
      const g = svg("g", { class: "series s-" + s.cls + (s.dashed ? " dashed" : "") });
      if (d) g.append(svg("path", { d: d }));
      s.values.forEach((v, k) => {
        if (v !== null && !s.steps) g.append(svg("circle", { cx: x(k), cy: y(v), r: 1.8 }));
      });
      root.append(g);
    }

    const legend = document.createElement("div");
    legend.className = "legend";
    for (const s of series) {
      const item = document.createElement("span");
      const sw = document.createElement("span");
      sw.className = "swatch s-" + s.cls + (s.dashed ? " dashed" : "");
      const known = s.values.filter((v) => v !== null);
      const value = s.total ? sum(known) : known.length ? known[known.length - 1] : "";
      item.append(sw, document.createTextNode(s.name + " " + value));
      legend.append(item);
    }
    const caption = fig.querySelector("figcaption");
    fig.replaceChildren(caption, root, legend);
  }

  function sum(values) {
    return values.reduce((a, v) => a + (v || 0), 0);
  }

  function render(data) {
    const m = data.minutes;
    // Minutes that ended before the registry started have no data.
    const before = (b) => b.start + data.minute_ms <= data.started;
    const counted = (f) => m.map((b) => (before(b) ? null : f(b)));
    const reg = counted((b) => b.registered), can = counted((b) => b.cancelled), ev = counted((b) => b.evicted);
    draw(document.getElementById("chart-changes"), data, [
      { name: "registered", cls: "registered", values: reg, total: true },
      { name: "cancelled", cls: "cancelled", values: can, total: true },
      { name: "evicted", cls: "evicted", values: ev, total: true },
    ], "In the last 15 minutes: " + sum(reg) + " registrations, " + sum(can) + " cancels, " + sum(ev) + " evictions.");

    const renews = counted((b) => b.renews), threshold = m.map((b) => b.threshold);
    const sp = data.markers.length ? " Self-preservation " + data.markers.map((k) => k.kind + " at " + new Date(k.at).toLocaleTimeString()).join(", ") + "." : "";
    draw(document.getElementById("chart-renews"), data, [
      { name: "renews", cls: "renews", values: renews },
      { name: "threshold", cls: "threshold", values: threshold, dashed: true, steps: true },
    ], "Renews per minute against the self-preservation threshold of " + data.self_preservation.threshold + "." + sp);

    const seen = new Set();
    for (const b of m) for (const st of Object.keys(b.instances || {})) seen.add(st);
    const statuses = STATUS_ORDER.filter((s) => seen.has(s)).concat(Array.from(seen).filter((s) => !STATUS_ORDER.includes(s)));
    if (!statuses.length) statuses.push("UP");
    const last = m.filter((b) => b.instances).pop();
    draw(document.getElementById("chart-status"), data,
      statuses.map((st) => ({ name: st, cls: "st-" + st, values: m.map((b) => (b.instances ? b.instances[st] || 0 : null)) })),
      "Instances by status: " + (last ? statuses.map((st) => (last.instances[st] || 0) + " " + st).join(", ") : "not sampled yet") + ".");
  }

  let last = 0;

  async function refresh() {
    last = Date.now();
    try {
      const resp = await fetch("api/charts", { credentials: "same-origin", cache: "no-store" });
      if (resp.ok) render(await resp.json());
    } catch (e) {
      // The page's status line reports an unreachable registry.
    }
  }

  refresh();
  setInterval(refresh, 15000);
  // The registry changed: refresh, at most every five seconds.
  let pending = 0;
  document.addEventListener("registry-changed", () => {
    if (pending) return;
    pending = setTimeout(() => {
      pending = 0;
      refresh();
    }, Math.max(0, last + 5000 - Date.now()));
  });
})();
