// The machinery every synth report shares: the embedded data, the plots, the paged table.
// Text from documents and models is put in the page with textContent / append(string) only,
// never innerHTML, so it is always read as text.
"use strict";

const REPORT = JSON.parse(document.getElementById("report-data").textContent);

// plotly.js is held as text in the page (see base.html.j2): run it once the page has loaded,
// then draw the plots, so that the rest of the report is readable while it parses
function drawFigures(figures) {
  // after the next frame, so the table is painted before the parse holds the page
  const draw = () => requestAnimationFrame(() => setTimeout(() => {
    const script = document.createElement("script");
    script.textContent = document.getElementById("plotly-js").textContent;
    document.head.append(script);
    drawNow(figures);
    performance.mark("synth:plots-drawn");
  }));
  if (document.readyState === "complete") draw(); else window.addEventListener("load", draw);
}

function drawNow(figures) {
  for (const el of document.querySelectorAll("[data-figure]")) {
    const figure = figures[el.dataset.figure];
    if (!figure) continue;
    el.style.height = figure.layout.height + "px"; // responsive plots fill their box: size the box
    Plotly.newPlot(el, figure.data, figure.layout, { displaylogo: false, responsive: true });
  }
}

function element(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
  node.append(...children);
  return node;
}

function shown(value, type) {
  if (value === null || value === undefined || value === "") return "\u2014";
  return type === "number" && !Number.isInteger(value) ? value.toFixed(2) : String(value);
}

// rows are arrays in the order of columns; row[0] is the row's identity (its index).
// spec: {columns, rows, pageSize, search: [column keys], filters: [column keys], detail(row) -> Node}
// (without detail, rows have no button to open)
function pagedTable(root, spec) {
  const columns = spec.columns;
  const at = Object.fromEntries(columns.map((c, i) => [c.key, i]));
  const pageSize = spec.pageSize || 50;
  const state = { sort: null, descending: false, query: "", chosen: {}, page: 0, open: new Set() };
  let haystacks = null; // lower-cased searchable text per row, made on the first search

  const search = element("input", { type: "search", placeholder: "filter: " + spec.search.join(", "), "aria-label": "filter rows" });
  const selects = (spec.filters || []).map((key) => {
    const values = [...new Set(spec.rows.map((row) => shown(row[at[key]], "text")))].sort();
    const select = element("select", { "data-filter": key, "aria-label": key },
      element("option", { value: "" }, "every " + key), ...values.map((v) => element("option", { value: v }, v)));
    select.addEventListener("change", () => { state.chosen[key] = select.value; state.page = 0; draw(); });
    return select;
  });
  const previous = element("button", { type: "button", "data-page": "previous" }, "\u2190 previous");
  const next = element("button", { type: "button", "data-page": "next" }, "next \u2192");
  const info = element("span", { class: "info" });
  const toggle = () => (spec.detail ? [element("th", { class: "toggle" })] : []);
  const head = element("tr", {}, ...toggle(),
    ...columns.map((c) => element("th", { "data-key": c.key, class: c.type === "number" ? "n" : "" }, c.label)));
  const body = element("tbody");
  root.append(element("div", { class: "controls" }, search, ...selects, previous, next, info),
    element("table", { class: "paged" }, element("thead", {}, head), body));

  search.addEventListener("input", () => { state.query = search.value.trim().toLowerCase(); state.page = 0; draw(); });
  previous.addEventListener("click", () => { state.page -= 1; draw(); });
  next.addEventListener("click", () => { state.page += 1; draw(); });
  head.addEventListener("click", (event) => {
    const key = event.target.closest("th")?.dataset.key;
    if (!key) return;
    state.descending = state.sort === key ? !state.descending : false;
    state.sort = key;
    state.page = 0;
    draw();
  });
  body.addEventListener("click", (event) => {
    const button = event.target.closest("button.open");
    if (!button) return;
    const id = Number(button.dataset.row);
    if (state.open.has(id)) state.open.delete(id); else state.open.add(id);
    draw();
  });

  function visible() {
    let rows = spec.rows;
    if (state.query) {
      haystacks = haystacks || spec.rows.map((row) => spec.search.map((k) => row[at[k]] || "").join("\n").toLowerCase());
      rows = rows.filter((row, i) => haystacks[i].includes(state.query));
    }
    for (const [key, value] of Object.entries(state.chosen)) {
      if (value) rows = rows.filter((row) => shown(row[at[key]], "text") === value);
    }
    if (state.sort !== null) {
      const i = at[state.sort];
      const sign = state.descending ? -1 : 1;
      // empty values last whichever the direction; ties keep the dataset's order
      rows = [...rows].sort((a, b) => {
        const x = a[i], y = b[i];
        const xe = x === null || x === "", ye = y === null || y === "";
        if (xe || ye) return xe === ye ? a[0] - b[0] : xe ? 1 : -1;
        return (x < y ? -1 : x > y ? 1 : a[0] - b[0]) * sign;
      });
    }
    return rows;
  }

  function draw() {
    const rows = visible();
    const pages = Math.max(1, Math.ceil(rows.length / pageSize));
    state.page = Math.min(Math.max(state.page, 0), pages - 1);
    const first = state.page * pageSize;
    const page = rows.slice(first, first + pageSize);
    for (const th of head.querySelectorAll("th[data-key]")) {
      if (th.dataset.key === state.sort) th.setAttribute("aria-sort", state.descending ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    }
    const drawn = [];
    for (const row of page) {
      const isOpen = spec.detail && state.open.has(row[0]);
      const cells = columns.map((c, i) => element("td", { "data-key": c.key, class: c.type === "number" ? "n" : "" }, shown(row[i], c.type)));
      if (spec.detail) {
        const button = element("button", { type: "button", class: "open", "data-row": row[0], "aria-expanded": isOpen, title: "open" }, isOpen ? "\u25BE" : "\u25B8");
        cells.unshift(element("td", { class: "toggle" }, button));
      }
      drawn.push(element("tr", { "data-row": row[0] }, ...cells));
      if (isOpen) drawn.push(element("tr", { class: "detail" }, element("td", { colspan: columns.length + 1 }, spec.detail(row))));
    }
    body.replaceChildren(...drawn);
    info.textContent = rows.length
      ? `rows ${first + 1}\u2013${first + page.length} of ${rows.length}` + (rows.length < spec.rows.length ? ` (${spec.rows.length} in all)` : "")
      : `no rows match (${spec.rows.length} in all)`;
    previous.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
    if (!performance.getEntriesByName("synth:table-drawn").length) performance.mark("synth:table-drawn");
  }

  draw();
  return { draw, state };
}
