// The evaluation, comparison and benchmark reports: their tables, each row opening on its
// [label, text] pairs, then their plots.
"use strict";

(function () {
  function details(table) {
    return (row) => {
      const entries = table.details[row[0]];
      if (!entries.length) return element("p", { class: "hint" }, "nothing more on this item");
      return element("dl", { class: "entries" },
        ...entries.map(([label, text]) => element("div", {}, element("dt", {}, label), element("dd", {}, text))));
    };
  }

  for (const root of document.querySelectorAll("[data-table]")) {
    const table = REPORT.tables[root.dataset.table];
    pagedTable(root, {
      columns: table.columns,
      rows: table.rows,
      search: table.search,
      filters: table.filters,
      detail: table.details ? details(table) : null,
    });
  }
  // the tables first, the plots after the page has loaded: the items can be read meanwhile
  drawFigures(REPORT.figures);
})();
