// The review page: one golden at a time, a filtered list, and one request per decision.
// Text from documents and models goes into the page with textContent / append(string) only,
// never innerHTML, so it is always read as text. Every request carries the session token.
"use strict";

(function () {
  const DATA = JSON.parse(document.getElementById("review-data").textContent);
  const TOKEN = new URLSearchParams(location.search).get("token") || "";
  const table = DATA.table;
  const goldens = DATA.goldens; // per golden: key, input, expected, status, reason, ...
  const column = Object.fromEntries(table.columns.map((c, i) => [c.key, i]));
  const PAGE = 100;
  const $ = (id) => document.getElementById(id);
  const state = { counts: DATA.counts, shown: [], at: 0, listStart: 0, editing: null, busy: false };

  function element(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
    node.append(...children);
    return node;
  }

  const cell = (index, key) => table.rows[index][column[key]];
  const blank = (value) => (value === null || value === undefined || value === "" ? "\u2014" : String(value));

  // ---- filters and the list -------------------------------------------------------------------
  function fillOptions(select, values) {
    for (const value of [...new Set(values)].filter((v) => v).sort()) {
      select.append(element("option", { value }, value));
    }
  }

  function matches(index) {
    const g = goldens[index];
    const status = $("filter-status").value, file = $("filter-file").value;
    const evolution = $("filter-evolution").value, difficulty = $("filter-difficulty").value;
    return (status === "all" || g.status === status)
      && (!file || g.files.includes(file))
      && (!evolution || g.evolutions.includes(evolution))
      && (!difficulty || cell(index, "difficulty") === difficulty);
  }

  // re-filter, keeping `keep` (a golden's index) in view when it still matches, else the next one
  function refilter(keep) {
    state.shown = goldens.map((_, i) => i).filter(matches);
    let at = state.shown.findIndex((i) => i >= keep);
    state.at = at < 0 ? Math.max(0, state.shown.length - 1) : at;
    state.listStart = Math.floor(state.at / PAGE) * PAGE;
    render();
  }

  function renderList() {
    const list = $("list");
    const items = state.shown.slice(state.listStart, state.listStart + PAGE).map((index) => {
      const g = goldens[index];
      const li = element("li", { "data-index": String(index), "data-status": g.status });
      if (index === current()) li.classList.add("current");
      const button = element("button", { type: "button", title: g.status },
        element("span", { class: "n" }, `#${index}`),
        element("span", { class: `dot ${g.status}` }),
        element("span", { class: "snippet" }, g.input));
      button.addEventListener("click", () => { state.at = state.shown.indexOf(index); render(); });
      li.append(button);
      return li;
    });
    list.replaceChildren(...items);
    const end = Math.min(state.listStart + PAGE, state.shown.length);
    $("list-info").textContent = state.shown.length
      ? `${state.listStart + 1}\u2013${end} of ${state.shown.length} shown (${goldens.length} in the dataset)`
      : `no golden matches the filters (${goldens.length} in the dataset)`;
  }

  function renderProgress() {
    const { accepted, rejected, pending } = state.counts;
    const reviewed = accepted + rejected, total = reviewed + pending;
    $("progress").max = Math.max(total, 1);
    $("progress").value = reviewed;
    $("progress-text").textContent =
      `${reviewed} of ${total} reviewed: ${accepted} accepted, ${rejected} rejected, ${pending} pending`;
  }

  // ---- one golden -------------------------------------------------------------------------------
  const current = () => state.shown[state.at];

  function context(index) {
    const [keys, marks] = table.contexts[index];
    if (!keys.length) return [element("p", { class: "hint" }, "this golden has no context")];
    return keys.map((key, position) => {
      const text = table.chunks[key];
      const pre = element("pre", { "data-chunk": key });
      let done = 0;
      for (const [chunk, start, end] of marks) {
        if (chunk !== position) continue;
        pre.append(text.slice(done, start), element("mark", {}, text.slice(start, end)));
        done = end;
      }
      pre.append(text.slice(done));
      return element("figure", {},
        element("figcaption", {}, `chunk ${position + 1} of ${keys.length}: ${key}`), pre);
    });
  }

  function facts(index) {
    const g = goldens[index];
    const grounding = cell(index, "grounding");
    const pairs = [
      ["file", g.files.join(", ")],
      ["page", cell(index, "page")],
      ["evolutions", g.evolutions.join(", ")],
      ["styling", g.styling.join("; ")],
      ["difficulty", cell(index, "difficulty")],
      ["grounding", grounding === null ? null : grounding.toFixed(2)],
      ["reason", g.reason],
      ["reviewed", g.reviewer ? `${g.reviewer}, ${g.time}` : null],
    ];
    const items = pairs.map(([label, value]) =>
      element("div", { "data-fact": label }, element("dt", {}, label), element("dd", {}, blank(value))));
    for (const [field, label] of [["input", "original input"], ["expected_output", "original expected output"]]) {
      if (field in g.original) {
        items.push(element("div", { class: "original", "data-fact": label },
          element("dt", {}, label), element("dd", {}, blank(g.original[field]))));
      }
    }
    return items;
  }

  function renderGolden() {
    const index = current();
    const none = index === undefined;
    for (const id of ["accept", "reject", "undo", "edit-input", "edit-expected"]) $(id).disabled = none;
    if (none) {
      $("status").textContent = "nothing to show";
      for (const id of ["input", "expected", "facts", "context", "position"]) $(id).replaceChildren();
      return;
    }
    const g = goldens[index];
    $("golden").dataset.index = String(index);
    $("status").textContent = g.status;
    $("status").className = `badge ${g.status}`;
    $("position").textContent = `#${index} (${state.at + 1} of ${state.shown.length})`;
    $("input").textContent = g.input;
    $("input").classList.toggle("edited", "input" in g.original);
    $("expected").textContent = blank(g.expected);
    $("expected").classList.toggle("edited", "expected_output" in g.original);
    $("facts").replaceChildren(...facts(index));
    $("context").replaceChildren(...context(index));
  }

  function render() {
    renderProgress();
    renderList();
    if (!state.editing) renderGolden();
  }

  function move(step) {
    if (!state.shown.length) return;
    closeEditors();
    state.at = Math.min(Math.max(state.at + step, 0), state.shown.length - 1);
    if (state.at < state.listStart || state.at >= state.listStart + PAGE) {
      state.listStart = Math.floor(state.at / PAGE) * PAGE;
    }
    render();
  }

  function nextPending() {
    const after = state.shown.slice(state.at + 1).concat(state.shown.slice(0, state.at + 1));
    const found = after.find((i) => goldens[i].status === "pending");
    if (found !== undefined) { state.at = state.shown.indexOf(found); state.listStart = Math.floor(state.at / PAGE) * PAGE; render(); }
  }

  // ---- saving -----------------------------------------------------------------------------------
  function say(text, failed) {
    $("save-state").textContent = text;
    $("save-state").classList.toggle("error", Boolean(failed));
  }

  async function send(path, body) {
    if (state.busy) return null;
    state.busy = true;
    say("saving\u2026");
    try {
      const response = await fetch(path, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Synth-Token": TOKEN },
        body: JSON.stringify(body),
      });
      const answer = await response.json();
      if (!response.ok) { say(`not saved: ${answer.error}`, true); return null; }
      const index = goldens.findIndex((g) => g.key === answer.golden.key);
      goldens[index] = answer.golden;
      state.counts = answer.counts;
      say(`saved: #${index} ${answer.golden.status}`);
      return index;
    } catch (error) {
      say(`not saved: the review server did not answer (${error.message}); is synth review running?`, true);
      return null;
    } finally {
      state.busy = false;
    }
  }

  async function decide(status, reason) {
    const index = current();
    if (index === undefined) return;
    hideReject();
    const saved = await send("/api/decide", { key: goldens[index].key, status, reason: reason || null });
    if (saved === null) return;
    // on to the next golden: the one after this in the list as it was shown
    const next = state.shown[state.at + 1];
    refilter(status === "pending" || next === undefined ? saved : next);
  }

  async function saveEdit(field) {
    const index = current();
    const text = $(`${field}-box`).value;
    const body = { key: goldens[index].key };
    body[field === "input" ? "input" : "expected_output"] = text;
    const saved = await send("/api/edit", body);
    if (saved === null) return;
    closeEditors();
    refilter(saved);
  }

  // ---- the reject form and the editors ------------------------------------------------------------
  function showReject() {
    if (current() === undefined) return;
    closeEditors();
    $("reject-form").hidden = false;
    $("reason-text").value = "";
  }
  function hideReject() { $("reject-form").hidden = true; }

  function openEditor(field) {
    const index = current();
    if (index === undefined) return;
    hideReject();
    closeEditors();
    state.editing = field;
    $(`${field}-box`).value = field === "input" ? goldens[index].input : goldens[index].expected || "";
    $(`${field}-editor`).hidden = false;
    $(field).hidden = true;
    $(`${field}-box`).focus();
  }

  function closeEditors() {
    for (const field of ["input", "expected"]) { $(`${field}-editor`).hidden = true; $(field).hidden = false; }
    state.editing = null;
  }

  // ---- wiring -------------------------------------------------------------------------------------
  fillOptions($("filter-file"), goldens.flatMap((g) => g.files));
  fillOptions($("filter-evolution"), goldens.flatMap((g) => g.evolutions));
  fillOptions($("filter-difficulty"), goldens.map((_, i) => cell(i, "difficulty")));
  for (const id of ["filter-status", "filter-file", "filter-evolution", "filter-difficulty"]) {
    $(id).addEventListener("change", (event) => {
      closeEditors();
      refilter(current() ?? 0);
      event.target.blur(); // the keyboard shortcuts work again at once
    });
  }
  $("accept").addEventListener("click", () => decide("accepted"));
  $("reject").addEventListener("click", showReject);
  $("undo").addEventListener("click", () => decide("pending"));
  $("prev").addEventListener("click", () => move(-1));
  $("next").addEventListener("click", () => move(1));
  $("edit-input").addEventListener("click", () => openEditor("input"));
  $("edit-expected").addEventListener("click", () => openEditor("expected"));
  $("reject-cancel").addEventListener("click", hideReject);
  for (const button of document.querySelectorAll("button.reason")) {
    button.addEventListener("click", () => decide("rejected", button.dataset.reason));
  }
  $("reject-form").addEventListener("submit", (event) => {
    event.preventDefault();
    decide("rejected", $("reason-text").value.trim() || null);
  });
  for (const button of document.querySelectorAll("[data-save]")) {
    button.addEventListener("click", () => saveEdit(button.dataset.save));
  }
  for (const button of document.querySelectorAll("[data-cancel]")) {
    button.addEventListener("click", () => { closeEditors(); renderGolden(); });
  }
  for (const button of document.querySelectorAll(".pager button")) {
    button.addEventListener("click", () => {
      const step = button.dataset.page === "next" ? PAGE : -PAGE;
      const start = state.listStart + step;
      if (start >= 0 && start < state.shown.length) { state.listStart = start; renderList(); }
    });
  }

  const KEYS = {
    a: () => decide("accepted"), r: showReject, u: () => decide("pending"),
    e: () => openEditor("expected"), i: () => openEditor("input"),
    j: () => move(1), ArrowRight: () => move(1), k: () => move(-1), ArrowLeft: () => move(-1),
    n: nextPending, "?": () => { $("help").hidden = !$("help").hidden; },
  };

  document.addEventListener("keydown", (event) => {
    const typing = event.target.matches("input, textarea, select");
    if (state.editing && event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      saveEdit(state.editing);
      return;
    }
    if (event.key === "Escape") {
      hideReject();
      if (state.editing) { closeEditors(); renderGolden(); }
      return;
    }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (!$("reject-form").hidden && /^[1-9]$/.test(event.key)) {
      const reason = DATA.reasons[Number(event.key) - 1];
      if (reason) { event.preventDefault(); decide("rejected", reason); }
      return;
    }
    const action = KEYS[event.key];
    if (action) { event.preventDefault(); action(); }
  });

  // a second tab's decisions: catch up when this tab comes back into view
  document.addEventListener("visibilitychange", async () => {
    if (document.visibilityState !== "visible" || state.editing) return;
    const response = await fetch("/api/goldens", { headers: { "X-Synth-Token": TOKEN } });
    if (!response.ok) return;
    const fresh = await response.json();
    fresh.goldens.forEach((g, i) => { goldens[i] = g; });
    state.counts = fresh.counts;
    render();
  });

  refilter(0);
  performance.mark("synth:review-ready");
})();
