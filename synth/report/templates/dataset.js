// The dataset report: the goldens' table, each row opening its context with the cited spans marked.
"use strict";

(function () {
  const table = REPORT.table;

  // a golden's expected tool calls, each with its arguments (and its result, when it was run)
  function calls(row) {
    const made = table.calls ? table.calls[row[0]] : null;
    if (!made) return [];
    if (!made.length) return [element("p", { class: "calls" }, "no tool call expected")];
    return made.map(([name, args, output], position) => element("figure", { class: "call" },
      element("figcaption", {}, `call ${position + 1} of ${made.length}: ${name}`),
      element("pre", { "data-call": position }, args),
      ...(output === null ? [] : [element("pre", { "data-output": position }, output)])));
  }

  function context(row) {
    const [keys, marks] = table.contexts[row[0]];
    const expected = calls(row);
    if (!keys.length) return element("div", { class: "context" }, ...expected, element("p", {}, "this golden has no context"));
    return element("div", { class: "context" }, ...expected, ...keys.map((key, position) => {
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
    search: table.calls ? ["input", "expected", "file", "calls"] : ["input", "expected", "file"],
    filters: ["difficulty", "file"],
    detail: context,
  });
  // the table first, the plots after the page has loaded: the goldens can be read meanwhile
  drawFigures(REPORT.figures);
})();
