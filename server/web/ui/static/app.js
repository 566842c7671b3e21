// wend web UI: refresh the page's live part. The server renders it (escaped by html/template);
// this fetches the same fragment every interval and swaps it in when its version changed.
// No data is turned into HTML here, and nodes from DOMParser never run scripts.
(function () {
  "use strict";
  var every = 1500;
  var typing = false; // a form of the actions has been typed in: a reload would lose it
  function tick() {
    var live = document.querySelector("[data-live]");
    if (!live) return;
    if (live.dataset.open === "false") return; // a closed run no longer changes
    // The page says what it shows: an unchanged run answers 304 (not ok: nothing to do), and
    // a drawing it has already is left out of the answer (data-kept) for the page to keep.
    var headers = { Accept: "text/html" };
    if (live.dataset.version) headers["If-None-Match"] = '"' + live.dataset.version + '"';
    var graph = live.querySelector("#graph[data-key]");
    if (graph) headers["X-Wend-Graph"] = graph.dataset.key;
    fetch(live.dataset.live, { credentials: "same-origin", cache: "no-store", headers: headers })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null) return;
        var next = new DOMParser().parseFromString(html, "text/html").getElementById(live.id);
        if (next && live.id === "run-live" && next.dataset.open !== live.dataset.open) {
          location.reload(); // the run closed: its actions (outside the live part) change too
          return;
        }
        var actions = document.getElementById("actions");
        if (next && actions && !typing && next.dataset.signals !== undefined && next.dataset.signals !== actions.dataset.signals) {
          location.reload(); // the run waits for other signals now: their forms are outside the live part
          return;
        }
        if (next && next.dataset.version !== live.dataset.version) {
          var fresh = document.importNode(next, true);
          var kept = fresh.querySelector("#graph[data-kept]");
          if (kept) {
            var mine = live.querySelector("#graph");
            if (!mine || mine.dataset.key !== kept.dataset.key) {
              location.reload(); // the drawing it left out is not the one shown
              return;
            }
            kept.replaceWith(mine);
          }
          keepTicks(live, fresh);
          live.replaceWith(fresh);
        }
      })
      .catch(function () { /* the server restarts or the network hiccups: try again */ })
      .finally(function () { setTimeout(tick, every); });
  }
  // keepTicks carries the runs ticked in the list (for a batch) over a refresh.
  function keepTicks(from, to) {
    var ticked = {};
    from.querySelectorAll("input.pick:checked").forEach(function (b) { ticked[b.value] = true; });
    to.querySelectorAll("input.pick").forEach(function (b) { b.checked = !!ticked[b.value]; });
    var all = to.querySelector("#pick-all"), was = from.querySelector("#pick-all");
    if (all && was) all.checked = was.checked;
  }
  // #pick-all ticks or unticks every run shown.
  document.addEventListener("change", function (ev) {
    if (ev.target.id !== "pick-all") return;
    document.querySelectorAll("input.pick").forEach(function (b) { b.checked = ev.target.checked; });
  });
  // A form built from a schema checks its JSON boxes before it is sent, as the browser checks
  // its other fields (required, min, max, pattern); the server checks everything again.
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!form.classList || !form.classList.contains("schema-form")) return;
    var ok = true;
    form.querySelectorAll("textarea.json-field").forEach(function (box) {
      var msg = "";
      if (box.value.trim() !== "") {
        try { JSON.parse(box.value); } catch (e) { msg = "not JSON: " + e.message; }
      }
      box.setCustomValidity(msg);
      if (msg && ok) { box.reportValidity(); ok = false; }
    });
    if (!ok) ev.preventDefault();
  });
  document.addEventListener("input", function (ev) {
    if (ev.target.closest && ev.target.closest("#actions")) typing = true;
    if (ev.target.classList && ev.target.classList.contains("json-field")) ev.target.setCustomValidity("");
  });
  setTimeout(tick, every);
})();
