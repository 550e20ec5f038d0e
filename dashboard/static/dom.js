"use strict";
// dom holds what the page's scripts build their elements with: text(tag,
// value, attrs) makes an HTML element holding value as text, svg(tag,
// attrs, value) an SVG one, cell(label, content) a table cell labelled for
// the narrow layout, holding a node or text, place(parent, nodes) makes
// nodes parent's children, in order, moving only those out of place, and
// duration(ms) writes a span of time in words ("3 min 5 s", "2 days"), and
// outMarks(o) the marks of an instance a gateway keeps out of rotation
// (api/summary's and api/traffic's ejected and failing_health_check):
// what, since when, why and until when, as text.
window.dom = (function () {
  const NS = "http://www.w3.org/2000/svg";

  function text(tag, value, attrs) {
    const e = document.createElement(tag);
    if (value !== undefined) e.textContent = value;
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }

  function svg(tag, attrs, value) {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (value !== undefined) e.textContent = value;
    return e;
  }

  function cell(label, content) {
    const td = document.createElement("td");
    td.dataset.label = label;
    if (content instanceof Node) td.append(content); else td.textContent = content;
    return td;
  }

  function place(parent, nodes) {
    let cursor = parent.firstChild;
    for (const n of nodes) {
      if (n === cursor) cursor = cursor.nextSibling; else parent.insertBefore(n, cursor);
    }
    while (cursor) {
      const next = cursor.nextSibling;
      cursor.remove();
      cursor = next;
    }
  }

  function duration(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
    const h = Math.floor(s / 3600);
    return h < 48 ? h + " h " + Math.floor((s % 3600) / 60) + " min" : Math.floor(h / 24) + " days";
  }

  // clock writes a time (ms since the epoch) as the browser's local time.
  function clock(ms) {
    return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  }

  function outMarks(o) {
    const marks = [];
    if (!o) return marks;
    if (o.ejected) {
      const e = o.ejected;
      const why = "since " + clock(e.since) + " · " + e.reason + " · tried again at " + clock(e.until);
      marks.push(text("span", "ejected", { class: "mark mark-out", "data-mark": "ejected", title: "The gateway skips it " + why }),
        text("span", why, { class: "mark-why muted" }));
    }
    if (o.failing_health_check) {
      const f = o.failing_health_check;
      const why = "since " + clock(f.since) + " · " + f.reason;
      marks.push(text("span", "failing health check", { class: "mark mark-out", "data-mark": "failing-health-check", title: "Out of rotation " + why }),
        text("span", why, { class: "mark-why muted" }));
    }
    return marks;
  }

  return { text, svg, cell, place, duration, outMarks };
})();
