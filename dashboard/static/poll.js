"use strict";
// poll reads a JSON endpoint of the dashboard again and again: every
// o.every ms while the page is visible, at least every o.hidden ms while
// it is not, o.retry ms after a failed read, and at once when the page
// becomes visible again. handle(d) gets each answer and may return how
// long to wait instead of o.every; fail(e) gets each failure. url may be
// a function, read before each request. It returns a function that reads
// now, unless a read is under way.
window.poll = function poll(url, o, handle, fail) {
  let timer = 0, reading = false;

  async function read() {
    reading = true;
    let next = o.every;
    try {
      const resp = await fetch(typeof url === "function" ? url() : url, { credentials: "same-origin", cache: "no-store" });
      if (!resp.ok) throw new Error("HTTP " + resp.status);
      next = handle(await resp.json()) || o.every;
    } catch (e) {
      fail(e);
      next = o.retry;
    }
    reading = false;
    if (document.hidden) next = Math.max(next, o.hidden);
    timer = setTimeout(read, next);
  }

  function now() {
    if (reading) return;
    clearTimeout(timer);
    read();
  }

  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) now();
  });
  read();
  return now;
};
