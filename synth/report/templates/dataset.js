// The dataset report: the goldens' table, each row opening its context with the cited spans marked.
"use strict";

(function () {
  const table = REPORT.table;

  function context(row) {
    const [keys, marks] = table.contexts[row[0]];
    if (!keys.length) return element("p", { class: "context" }, "this golden has no context");
    return element("div", { class: "context" }, ...keys.map((key, position) => {
      const text = table.chunks[key];
      const pre = element("pre", { "data-chunk": key });
      let done = 0;
      for (const [chunk, start, end] of marks) {
        if (chunk !== position) continue;
        pre.append(text.slice(done, start), element("mark", {}, text.slice(start, end)));
        done = end;
      }
      pre.append(text.slice(done));
      return element("figure", {}, element("figcaption", {}, `chunk ${position + 1} of ${keys.length}: ${key}`), pre);
    }));
  }

  pagedTable(document.getElementById("goldens"), {
    columns: table.columns,
    rows: table.rows,
    search: ["input", "expected", "file"],
    filters: ["difficulty", "file"],
    detail: context,
  });
  // the table first, the plots after the page has loaded: the goldens can be read meanwhile
  drawFigures(REPORT.figures);
})();
